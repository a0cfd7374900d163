"""Flujo del profesor y del estudiante por libre: grade, feedback, export, bundle, doctor.

Una clase pequeña (laboratorio 1) se califica una sola vez por módulo en un directorio de
curso temporal: ana entrega la solución, beto la versión sin tocar, carla un cuaderno
dañado y, desde un zip del aula virtual, dani uno cuyo núcleo muere en el ejercicio 2.
"""

import csv
import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import classroom
import nbformat
import pytest
from leaks import secret_lines

from course import cli, labs
from course.commands import bundle, doctor, export, feedback, grade, jupyter_es
from course.grading import batch, results
from course.labs import CourseError

LAB = labs.get("01_atencion")
SECRET = (
    "### BEGIN SOLUTION",
    "### END SOLUTION",
    "### BEGIN HIDDEN TESTS",
    "### END HIDDEN TESTS",
)


def _tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(folder)).encode() + path.read_bytes())
    return digest.hexdigest()


def _crashing_notebook() -> str:
    notebook = nbformat.read(LAB.source, 4)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "ej2_softmax":
            cell.source = "import os\nos._exit(1)\n"
    return nbformat.writes(notebook)


@pytest.fixture(scope="module")
def course_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("curso")
    for student, text in (
        ("ana", LAB.source.read_text()),
        ("beto", LAB.release.read_text()),
        ("carla", '{"cells": ['),
    ):
        classroom.submission(root, student, LAB).write_text(text)
    archive = root / "aula.zip"
    with zipfile.ZipFile(archive, "w") as bundle_:
        bundle_.writestr(f"dani/{LAB.id}.ipynb", _crashing_notebook())
        bundle_.writestr("__MACOSX/._dani_01_atencion.ipynb", "basura")
    before = _tree_digest(root / "submitted")
    status = grade.run(root=root, zips=[str(archive)], jobs=2, timeout=30, progress=False)
    assert _tree_digest(root / "submitted") == before, "grade escribió en submitted/"
    assert status == 1  # carla no se pudo calificar
    return root


def _result(root: Path, student: str) -> results.Result:
    return results.Result(
        **json.loads(results.path_for(root / "autograded", student, LAB.id).read_text())
    )


@pytest.mark.slow
def test_grade_scores_each_submission_and_survives_broken_ones(course_dir):
    ana, beto, carla, dani = (_result(course_dir, s) for s in ("ana", "beto", "carla", "dani"))
    assert (ana.auto_points, ana.auto_max, ana.max_points) == (80, 80, 100)
    assert beto.auto_points == 0 and not beto.error
    assert "no es un cuaderno válido" in carla.error
    assert not dani.error and 0 < dani.auto_points < 80
    # El núcleo murió en la celda de softmax: se arrancó otro, se repitieron las anteriores
    # y solo pierde lo que dependía de esa celda.
    cells = {c.grade_id: c for c in dani.cells}
    assert cells["ej2_softmax_prueba"].points == 0
    assert "softmax" in cells["ej2_softmax_prueba"].message
    assert cells["ej1_puntuaciones_oculta"].points == cells["ej1_puntuaciones_oculta"].max_points
    assert cells["ej4_causal_oculta"].points == cells["ej4_causal_oculta"].max_points
    assert (course_dir / "autograded" / "ana" / LAB.id / f"{LAB.id}.ipynb").exists()


@pytest.mark.slow
def test_grade_prints_student_by_lab_table(course_dir, capsys):
    assert grade.run(root=course_dir, merge_only=True) == 1
    out = capsys.readouterr().out
    assert "estudiante" in out and LAB.id in out
    lines = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:5]}
    assert lines == {"ana": "80/100*", "beto": "0/100", "carla": "error", "dani": lines["dani"]}
    assert "3 entregas en gradebook.db; 1 sin calificar." in out
    assert list(course_dir.glob("gradebook.db.*.bak")), "no se hizo copia de gradebook.db"


@pytest.mark.slow
def test_gradebook_is_readable_by_nbgrader_itself(course_dir, tmp_path):
    out = tmp_path / "nbgrader.csv"
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "export", f"--CourseDirectory.root={course_dir}",
         f"--CourseDirectory.db_url=sqlite:///{course_dir / 'gradebook.db'}", f"--to={out}"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    theirs = {r["student_id"]: r for r in csv.DictReader(out.open())}
    ours = {r["student_id"]: r for r in export.rows(course_dir)}
    assert set(theirs) == {"ana", "beto", "dani"}
    for student, row in theirs.items():
        assert float(row["score"]) == float(ours[student]["score"])
        assert float(row["max_score"]) == float(ours[student]["max_score"]) == 100


@pytest.mark.slow
def test_export_writes_nbgrader_columns(course_dir, tmp_path):
    target = tmp_path / "notas.csv"
    assert export.run(str(target), root=course_dir) == 0
    rows = list(csv.DictReader(target.open()))
    assert list(rows[0]) == export.COLUMNS
    by_student = {r["student_id"]: r for r in rows}
    assert by_student["ana"]["score"] == "80" and by_student["ana"]["needs_manual_grade"] == "1"
    assert by_student["carla"]["score"] == "0" and by_student["carla"]["error"]
    assert {r["assignment"] for r in rows} == {LAB.id}


@pytest.mark.slow
def test_feedback_shows_points_and_messages_but_no_hidden_tests(course_dir):
    assert feedback.run(root=course_dir) == 0
    page = (course_dir / "feedback" / "beto" / LAB.id / f"{LAB.id}.html").read_text()
    assert '<html lang="es">' in page and "Tu cuaderno calificado" in page
    assert "NotImplementedError" in page and "prueba oculta" in page
    assert not any(marker in page for marker in SECRET)
    hidden = _region_lines(LAB.source, "HIDDEN TESTS")
    for path in (course_dir / "feedback").rglob("*.html"):
        text = path.read_text()
        leaked = [line for line in hidden if line in text]
        assert not leaked, f"{path}: {leaked[:3]}"
    assert (
        "No se pudo calificar"
        in (course_dir / "feedback" / "carla" / LAB.id / f"{LAB.id}.html").read_text()
    )


def _region_lines(notebook_path: Path, kind: str) -> set[str]:
    """Líneas (≥ 16 caracteres, sin comentarios) dentro de las regiones ``kind``."""
    inside, outside = set(), set()
    for cell in nbformat.read(notebook_path, 4).cells:
        secret = False
        for raw in cell.source.splitlines():
            line = raw.strip()
            if f"BEGIN {kind}" in line or f"END {kind}" in line:
                secret = "BEGIN" in line
                continue
            (inside if secret else outside).add(line)
    return {x for x in inside - outside if len(x) >= 16 and not x.startswith("#")}


def test_shards_partition_the_class():
    tasks = [
        batch.Task(f"e{i}", lab, None)
        for i in range(30)
        for lab in ("01_atencion", "02_normalizacion")
    ]
    shards = [batch.select_shard(tasks, f"{i}/3") for i in (1, 2, 3)]
    key = lambda t: (t.student, t.lab)  # noqa: E731
    assert sorted((t for s in shards for t in s), key=key) == sorted(tasks, key=key)
    assert all(shards) and batch.select_shard(tasks, "2/3") == shards[1]
    for bad in ("0/3", "4/3", "1-3", "a/b"):
        with pytest.raises(CourseError, match="--shard"):
            batch.select_shard(tasks, bad)


def test_zip_layouts_are_recognised(tmp_path):
    archive = tmp_path / "descarga.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("lucia/lucia_01_atencion.ipynb", "{}")
        z.writestr("submitted/marta/02_normalizacion/02_normalizacion.ipynb", "{}")
        z.writestr("pablo/01_atencion/mi_version.ipynb", "{}")
        z.writestr("notas.txt", "x")
        z.writestr("sin_laboratorio.ipynb", "{}")
    tasks = batch._unzip(archive, tmp_path / "out", None)
    assert [(t.student, t.lab, t.notebook.name) for t in tasks] == [
        ("lucia", "01_atencion", "lucia_01_atencion.ipynb"),
        ("marta", "02_normalizacion", "02_normalizacion.ipynb"),
        ("pablo", "01_atencion", "mi_version.ipynb"),
    ]
    with pytest.raises(CourseError, match="no es un archivo zip"):
        batch._unzip(
            tmp_path / "out" / "lucia" / "01_atencion" / "lucia_01_atencion.ipynb", tmp_path, None
        )


def test_bundle_leaves_out_reference_of_lab_and_later(tmp_path):
    target = tmp_path / "lab1.zip"
    assert bundle.run(LAB.id, str(target)) == 0
    names = zipfile.ZipFile(target).namelist()
    assert f"transformer-es/release/{LAB.id}/{LAB.id}.ipynb" in names
    assert "transformer-es/README.md" in names and "transformer-es/requirements.txt" in names
    assert not [n for n in names if "/course/reference/" in n and not n.endswith("__init__.py")]
    assert not [
        n for n in names if "/source/" in n or n.endswith("gradebook.db") or "/grading/" in n
    ]
    readme = zipfile.ZipFile(target).read("transformer-es/README.md").decode()
    assert "pip install -r requirements.txt" in readme and "jupyter-es" in readme


def test_bundle_through_a_later_lab_keeps_earlier_reference_and_no_answers(tmp_path):
    later = [lab for lab in labs.available() if lab.id > LAB.id]
    if not later:
        pytest.skip("solo hay un laboratorio")
    through = later[0]
    target = tmp_path / "b.zip"
    bundle.run(through.id, str(target))
    archive = zipfile.ZipFile(target)
    names = archive.namelist()
    assert "transformer-es/course/reference/attention.py" in names
    for module in through.reference:
        assert f"transformer-es/course/reference/{module}.py" not in names
    # Los cuadernos son los de estudiante: ninguna línea de solución ni de prueba oculta.
    # Secreta: la que solo aparece dentro de soluciones o pruebas ocultas, en cualquier
    # laboratorio (``from course.student import probe`` es pública en las pruebas visibles).
    secret = secret_lines(
        cell.source for lab in labs.available() for cell in nbformat.read(lab.source, 4).cells
    )
    for name in names:
        if name.endswith(".ipynb"):
            notebook = nbformat.reads(archive.read(name).decode(), 4)
            present = {line.strip() for c in notebook.cells for line in c.source.splitlines()}
            assert not present & secret, name
            assert not any(marker in c.source for c in notebook.cells for marker in SECRET)


def test_jupyter_es_writes_spanish_overrides_and_keeps_other_settings(tmp_path):
    path = jupyter_es.overrides_path(str(tmp_path))
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"otra:extension": {"x": 1}}))
    assert not jupyter_es.is_spanish(str(tmp_path))
    assert jupyter_es.run(str(tmp_path)) == 0
    data = json.loads(path.read_text())
    assert data["@jupyterlab/translation-extension:plugin"]["locale"] == "es_ES"
    assert data["otra:extension"] == {"x": 1} and jupyter_es.is_spanish(str(tmp_path))


@pytest.mark.slow  # doctor arranca un núcleo (y uno aislado) para comprobarlos
def test_doctor_says_what_to_fix(monkeypatch, capsys):
    monkeypatch.setattr(doctor, "pins", lambda: {"torch": "0.0.1", "paquete-que-no-existe": "1.0"})
    assert doctor.run() == 1
    out = capsys.readouterr().out
    assert "✘ torch" in out and "(se pide 0.0.1)" in out
    assert "paquete-que-no-existe no está instalado" in out
    assert "pip install -r requirements.txt" in out and "Hay " in out


def test_doctor_reads_every_pin_of_requirements():
    pinned = doctor.pins()
    assert {"torch", "nbgrader", "jupyterlab", "jupyterlab-language-pack-es-ES"} <= set(pinned)


@pytest.mark.parametrize(
    "command", ["grade", "feedback", "export", "bundle", "doctor", "jupyter-es"]
)
def test_workflow_commands_have_spanish_help(command, capsys):
    with pytest.raises(SystemExit):
        cli.main([command, "--ayuda"])
    assert capsys.readouterr().out.startswith("uso: ")


def test_export_to_stdout_without_gradebook(tmp_path, capsys):
    assert export.run("-", root=tmp_path) == 0
    assert next(csv.reader(io.StringIO(capsys.readouterr().out))) == export.COLUMNS


def test_a_dying_worker_costs_only_its_own_submission(tmp_path, monkeypatch):
    from course import grading

    def fake(path, lab, timeout=None, keep=None, **settings):  # los hijos la heredan (fork)
        if "muere" in path.read_text():  # grade califica una copia: se mira el contenido
            os._exit(1)
        return grading.Result("", lab.id, [grading.Cell("ej1_puntuaciones_prueba", 5, 5)])

    monkeypatch.setattr(grading, "grade_notebook", fake)
    tasks = [batch.Task(s, LAB.id, tmp_path / f"{s}.ipynb") for s in ("ana", "muere", "zoe")]
    for task in tasks:
        task.notebook.write_text(task.student)
    done = {r.student: r for r in batch.grade_all(tasks, tmp_path / "out", 1, None, False)}
    assert done["ana"].auto_points == 5 and done["zoe"].auto_points == 5
    assert "murió" in done["muere"].error
    assert sorted(p.parent.parent.name for p in (tmp_path / "out").rglob(results.RESULT_NAME)) == [
        "ana",
        "muere",
        "zoe",
    ]


FORKED_AFTER_OPENMP = """
import sys, torch
torch.set_num_threads(2)
torch.ones(3000, 3000).tril()  # el padre crea su equipo de hilos OpenMP
from pathlib import Path
from course import grading
from course.grading import batch
def fake(path, lab, timeout=None, keep=None, **settings):
    torch.ones(3000, 3000).tril()  # lo que hace una prueba oculta en el calificador
    return grading.Result("", lab.id, [grading.Cell("ej1_puntuaciones_prueba", 5, 5)])
grading.grade_notebook = fake
out = Path(sys.argv[1])
tasks = [batch.Task(s, "01_atencion", out / f"{s}.ipynb") for s in ("ana", "zoe")]
for task in tasks:  # grade califica una copia del cuaderno: tiene que existir
    task.notebook.write_text(task.student)
print(sorted(r.auto_points for r in batch.grade_all(tasks, out / "out", 2, None, False)))
"""


@pytest.mark.slow
def test_workers_forked_after_torch_used_its_threads_do_not_hang(tmp_path):
    # Se colgaba en CI: pytest ya había usado PyTorch con dos hilos antes de calificar.
    done = subprocess.run(
        [sys.executable, "-c", FORKED_AFTER_OPENMP, str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "[5, 5]"


@pytest.mark.slow
@pytest.mark.parametrize("lab", [lab.id for lab in labs.available()])
def test_the_student_bundle_runs_its_notebook_setup_without_the_course_repository(lab, tmp_path):
    """El zip de estudiante basta: la celda de preparación importa solo lo que el zip lleva."""
    target = tmp_path / "b.zip"
    assert bundle.run(lab, str(target)) == 0
    zipfile.ZipFile(target).extractall(tmp_path)
    root = tmp_path / "transformer-es"
    notebook = nbformat.read(root / "release" / lab / f"{lab}.ipynb", 4)
    setup = next(c.source for c in notebook.cells if c.cell_type == "code")
    program = (
        f"{setup}\nimport course\n"
        f"assert course.__file__.startswith({str(root)!r}), course.__file__\n"
    )
    if lab == "07_multi30k":  # la sección 11 entrena con course.translation.train
        program += (
            "import course.translation.decoding, course.translation.train, course.commands.train\n"
        )
    env = {**os.environ, "PYTHONPATH": str(root), "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=root / "release" / lab, env=env, capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]


def test_zip_keeps_the_lab7_full_run_beside_its_notebook(tmp_path):
    archive = tmp_path / "descarga.zip"
    run = "ana/07_multi30k/runs/07_multi30k/completa"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("ana/07_multi30k/07_multi30k.ipynb", "{}")
        z.writestr(f"{run}/traducciones.txt", "A dog.\n")
        z.writestr(f"{run}/last.pt", "estado para reanudar")
        z.writestr(f"{run}/best.pt.123.part", "escritura a medias")
        z.writestr("ana/07_multi30k/otra/cosa.txt", "x")
        z.writestr("ana/01_atencion/runs/07_multi30k/completa/best.pt", "x")
        z.writestr("ana/07_multi30k/runs/07_multi30k/completa/../../../../fuera.txt", "x")
    (task,) = batch._unzip(archive, tmp_path / "out", None)
    folder = task.notebook.parent
    found = sorted(
        p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.*")
    )
    assert found == ["ana/07_multi30k/07_multi30k.ipynb", f"{run}/traducciones.txt"]
    assert (folder / labs.get("07_multi30k").outputs / "traducciones.txt").read_text() == "A dog.\n"
