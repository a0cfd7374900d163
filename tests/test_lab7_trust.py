"""Laboratorio 7 sin confianza en el estudiante (issue 20, puntos 4 y 5).

Cada prueba califica, por la puerta de verdad (``grade_notebook``: núcleo aislado, pruebas
en el calificador), una entrega con su carpeta ``runs/07_multi30k/completa`` hostil:

- la molienda de la huella: la mitad de las traducciones son las referencias y una coma
  de espacios elegida hace que la muestra de la versión anterior (semilla = SHA-256 del
  archivo) caiga en las líneas honestas; antes, 6 de 6 en la pregunta 4 con un BLEU honesto
  de 0;
- un punto de control que nunca emite ``<eos>`` con ``max_len`` = 10⁸ en ``historial.json``;
- ``historial.json`` y ``metrics.json`` falsificados.

Las mismas entregas llevan errores típicos que antes pasaban las pruebas ocultas porque se
miraba la copia del calificador (``evaluate`` en modo evaluación sin ``no_grad``;
``greedy_translate`` sin ``model.eval()``; ``train_step`` sin ``zero_grad`` o con el recorte
después de ``optimizer.step()``): ahora cada uno pierde los puntos de su prueba oculta.
Necesita los datos de Multi30k.
"""

import hashlib
import json
import random
import shutil
import tempfile
from pathlib import Path

import nbformat
import pytest
import torch
from torch.nn.utils.rnn import pad_sequence

from course import labs
from course.grading import grade_notebook, sandbox
from course.reference.model import make_src_mask
from course.reference.translation import corpus_bleu
from course.translation.data import BOS_IDX, EOS_IDX, PAD_IDX
from course.translation.decoding import beam_search

LAB = labs.get("07_multi30k")
MAX_LEN = 20
needs_bwrap = pytest.mark.skipif(bool(sandbox.available()), reason=sandbox.available() or "")
pytestmark = [pytest.mark.slow, needs_bwrap]


def _greedy(model, tokenizer, sentences, max_len):
    """Traducción voraz (haz de 1 con caché: lo mismo que la referencia, más deprisa)."""
    src = pad_sequence(
        [torch.tensor(i) for i in tokenizer.encode_batch(sentences)],
        batch_first=True,
        padding_value=PAD_IDX,
    )
    with torch.no_grad():
        out = beam_search(model, src, make_src_mask(src, PAD_IDX), 1, max_len, BOS_IDX, EOS_IDX)
    return [tokenizer.decode(row).replace("\n", " ") for row in out[:, 1:].tolist()]


@pytest.fixture(scope="module")
def honest(lab7_submission):
    """Entrega honesta: el cuaderno solución y una ejecución «completa» de humo a su lado."""
    made = lab7_submission("honesta")
    german = [de for de, _ in made.test]
    translations = _greedy(made.model, made.tokenizer, german, MAX_LEN)
    _write_lines(made.run_dir / "traducciones.txt", translations)
    made.write_history(step=[], train_loss=[], bleu=0.0, max_len=MAX_LEN)
    return made.folder


def _write_lines(path, lines):
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def _read_lines(path):
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def _old_sample(text: bytes, n: int) -> list[int]:
    """La muestra de la versión anterior: semilla = huella del archivo del estudiante."""
    digest = hashlib.sha256(text).hexdigest()
    return random.Random(int(digest[:12], 16)).sample(range(n), min(16, n))


def _grind(honest_lines, references):
    """Mitad referencias, mitad salida del modelo, con espacios al final de la línea 1 hasta
    que la muestra antigua cae (salvo 2) en líneas honestas. Devuelve el texto."""
    mixed = [
        r if i % 2 else h for i, (h, r) in enumerate(zip(honest_lines, references, strict=True))
    ]
    for nonce in range(200_000):
        lines = list(mixed)
        lines[1] += " " * nonce
        text = "".join(f"{line}\n" for line in lines).encode()
        sample = _old_sample(text, len(lines))
        if sum(i % 2 == 0 for i in sample) >= 14:
            return text
    raise AssertionError("la molienda no encontró una huella")


def _mutate(notebook, grade_id, old, new):
    cell = next(
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id
    )
    assert old in cell.source, (grade_id, old)
    cell.source = cell.source.replace(old, new)


MUTANTS = {
    # evaluate en modo evaluación sin no_grad y sin devolver el modo (antes 67 -> 80)
    "eval_sin_no_grad_ni_modo": [
        ("ej4_evaluacion", "    with torch.no_grad():\n", "    if True:\n"),
        ("ej4_evaluacion", "    model.train(was_training)\n", ""),
        ("ej5_traduccion", "    model.eval()\n", ""),
        ("ej3_paso", "    optimizer.zero_grad()\n", ""),
    ],
    "sin_no_grad_y_recorte_tarde": [
        ("ej4_evaluacion", "    with torch.no_grad():\n", "    if True:\n"),
        (
            "ej3_paso",
            "        nn.utils.clip_grad_norm_(model.parameters(), clip_norm)\n    optimizer.step()\n",
            "        pass\n    optimizer.step()\n    if clip_norm is not None:\n"
            "        nn.utils.clip_grad_norm_(model.parameters(), clip_norm)\n",
        ),
    ],
}


def _submission(honest, tmp_path, mutants=()):
    folder = tmp_path / "entrega"
    shutil.copytree(honest, folder)
    notebook = nbformat.read(folder / f"{LAB.id}.ipynb", 4)
    for grade_id, old, new in mutants:
        _mutate(notebook, grade_id, old, new)
    nbformat.write(notebook, folder / f"{LAB.id}.ipynb")
    return folder, folder / LAB.outputs


def _grade(folder, tmp_path):
    before = _lab7_temps()
    kept = tmp_path / "calificado.ipynb"
    result = grade_notebook(folder / f"{LAB.id}.ipynb", LAB, keep=kept)
    cells = {c.grade_id: c for c in result.cells}
    notebook = nbformat.read(kept, 4)
    cell = next(
        c
        for c in notebook.cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == "ej7_archivo_oculta"
    )
    printed = "".join(o.get("text", "") for o in cell.get("outputs", []))
    assert _lab7_temps() <= before, "la calificación dejó carpetas temporales del laboratorio 7"
    return cells, printed


def _lab7_temps() -> set[str]:
    """Carpetas temporales del laboratorio 7 en el ``/tmp`` del calificador."""
    return {p.name for p in Path(tempfile.gettempdir()).glob("curso-07_multi30k-*")}


def _assert_q4_zero(printed):
    assert not any(f"pregunta 4: {p} de 6" in printed for p in (2, 4, 6)), printed


def test_ground_nonce_earns_nothing_and_mutants_lose_their_points(honest, tmp_path):
    folder, run_dir = _submission(honest, tmp_path, MUTANTS["eval_sin_no_grad_ni_modo"])
    lines, refs = (
        _read_lines(run_dir / "traducciones.txt"),
        _read_lines(run_dir / "referencias.txt"),
    )
    ground = _grind(lines, refs)
    forged = ground.decode().split("\n")[:-1]
    # Con la versión anterior: la muestra de 16 pasaba y el BLEU del archivo daba 6 puntos.
    sample = _old_sample(ground, len(forged))
    assert sum(forged[i] == lines[i] for i in sample) >= 14
    assert corpus_bleu(forged, refs) >= 30 > corpus_bleu(lines, refs)
    (run_dir / "traducciones.txt").write_bytes(ground)
    cells, printed = _grade(folder, tmp_path)
    assert cells["ej7_archivo_oculta"].points == 0, cells["ej7_archivo_oculta"]
    assert "no es la salida de ese modelo" in cells["ej7_archivo_oculta"].message
    _assert_q4_zero(printed)
    for grade_id in ("ej3_paso_oculta", "ej4_evaluacion_oculta", "ej5_traduccion_oculta"):
        assert cells[grade_id].points == 0, (grade_id, cells[grade_id])
    for grade_id in ("ej1_lote_oculta", "ej2_mascaras_oculta", "ej6_bleu_oculta"):
        assert cells[grade_id].points == cells[grade_id].max_points, cells[grade_id]


def test_never_ending_checkpoint_is_bounded_and_mutants_lose_their_points(honest, tmp_path):
    folder, run_dir = _submission(honest, tmp_path, MUTANTS["sin_no_grad_y_recorte_tarde"])
    state = torch.load(run_dir / "best.pt", weights_only=True)
    state["model"]["generator.bias"][EOS_IDX] = -1e4  # nunca <eos>
    torch.save(state, run_dir / "best.pt")
    history = json.loads((run_dir / "historial.json").read_text(encoding="utf-8"))
    (run_dir / "historial.json").write_text(json.dumps(history | {"max_len": 10**8}))
    cells, printed = _grade(folder, tmp_path)
    ej7 = cells["ej7_archivo_oculta"]
    # Acotado: 32 líneas de 64 tokens como mucho; con la máquina muy cargada, el tope de
    # tiempo del calificador la corta antes. En los dos casos, 0 puntos y el resto se califica.
    assert ej7.points == 0, ej7
    assert "no es la salida de ese modelo" in ej7.message or "TiempoAgotado" in ej7.message, ej7
    _assert_q4_zero(printed)
    assert cells["ej3_paso_oculta"].points == 0, cells["ej3_paso_oculta"]
    assert cells["ej4_evaluacion_oculta"].points == 0, cells["ej4_evaluacion_oculta"]
    assert cells["ej5_traduccion_oculta"].points == cells["ej5_traduccion_oculta"].max_points


def test_forged_history_and_metrics_change_nothing(honest, tmp_path):
    folder, run_dir = _submission(honest, tmp_path)
    history = json.loads((run_dir / "historial.json").read_text(encoding="utf-8"))
    (run_dir / "historial.json").write_text(json.dumps(history | {"bleu": 99.0}))
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    metrics["bleu"]["score"] = metrics["bleu"]["lowercase_score"] = 99.0
    (run_dir / "metrics.json").write_text(json.dumps(metrics))
    cells, printed = _grade(folder, tmp_path)
    assert all(
        c.points == c.max_points for c in cells.values() if c.max_points and c.points is not None
    )
    assert "(32/32 líneas elegidas al azar y reproducidas)" in printed, printed
    assert "pregunta 4: 0 de 6 puntos" in printed  # el BLEU de las retraducciones, no el 99
