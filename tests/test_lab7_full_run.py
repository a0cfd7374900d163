"""Laboratorio 7: la calificación ve la ejecución completa entregada junto al cuaderno.

La carpeta ``runs/07_multi30k/completa`` se fabrica como la deja la sección 11 del
cuaderno (``course.translation.train`` con la receta ``smoke`` y las traducciones voraces de la
referencia sobre las 1000 frases de prueba), al lado de una copia del cuaderno solución.
Necesita los datos de Multi30k (``../shared/multi30k`` en CI).
"""

import hashlib
import shutil

import nbformat
import pytest

from course import labs
from course.grading import grade_notebook
from course.reference.translation import translate_test_set

pytestmark = pytest.mark.slow  # califica en núcleos aislados

LAB = labs.get("07_multi30k")
MAX_LEN = 20


@pytest.fixture(scope="module")
def submission(lab7_submission):
    """Carpeta de entrega: el cuaderno solución y su ejecución «completa» (de humo)."""
    made = lab7_submission("entrega")
    translations = made.run_dir / "traducciones.txt"
    bleu = translate_test_set(made.model, made.tokenizer, made.test, translations, MAX_LEN, "cpu")
    steps = list(range(1, made.result.step + 1))
    made.write_history(step=steps, train_loss=made.result.train_losses, bleu=bleu, max_len=MAX_LEN)
    return made.folder


def _fingerprint(folder):
    return {
        p.relative_to(folder): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _outputs(path, grade_id):
    notebook = nbformat.read(path, 4)
    cell = next(
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id
    )
    return "".join(o.get("text", "") for o in cell.get("outputs", []))


def test_grading_verifies_the_full_run_beside_the_notebook(submission, tmp_path):
    before = _fingerprint(submission)
    result = grade_notebook(submission / f"{LAB.id}.ipynb", LAB, keep=tmp_path / "calificado.ipynb")
    assert result.auto_points == result.auto_max, [c for c in result.cells if c.message]
    printed = _outputs(tmp_path / "calificado.ipynb", "ej7_archivo_oculta")
    assert (
        "Ejecución completa verificada (32/32 líneas elegidas al azar y reproducidas)" in printed
    ), printed
    assert "pregunta 4: 0 de 6 puntos" in printed  # un modelo de humo no llega a BLEU 10
    assert _fingerprint(submission) == before  # la entrega no se toca


def test_pasted_references_earn_nothing(submission, tmp_path):
    forged = tmp_path / "entrega"
    shutil.copytree(submission, forged)
    run_dir = forged / LAB.outputs
    shutil.copy(run_dir / "referencias.txt", run_dir / "traducciones.txt")
    result = grade_notebook(forged / f"{LAB.id}.ipynb", LAB)
    cell = next(c for c in result.cells if c.grade_id == "ej7_archivo_oculta")
    assert cell.points == 0 and "no es la salida de ese modelo" in cell.message, cell
