"""Todas las puertas califican igual: ``python -m course grade``, ``nbgrader autograde`` y
el botón Autograde de Formgrader (``NbGraderAPI.autograde``).

Un curso temporal del laboratorio 1 con ``ana`` y ``victima`` (la solución: 80), ``beto``
(en blanco: 0) y tres entregas hostiles que con la ejecución de nbgrader de siempre
ganaban puntos o dañaban a otros:

- ``displayhook``: en blanco; tapa los errores de las pruebas (``sys.displayhook``, los
  mensajes del núcleo y cada celda siguiente envuelta en ``try``): con nbgrader sin
  sellar, todas las pruebas «pasaban» (80/80);
- ``sql``: en blanco; pone a 0 con SQL las notas de ``gradebook.db`` (sin sellar, la de
  ``victima`` pasaba de 80 a 0);
- ``lector``: en blanco; imprime las soluciones de ``source/``.

Primero ``grade`` califica a todos; después ``nbgrader autograde`` (la orden, por
subprocess) a los de la a, b, d y s, y ``NbGraderAPI.autograde`` a ``lector``. Se comprueba
que las notas por celda de ``gradebook.db`` son las mismas que las de ``grade``, que nadie
pasa de su nota honesta, que la de ``victima`` no cambia y que ninguna solución llega a lo
calificado. Además: sin bubblewrap la puerta se niega y nombra la orden segura; un núcleo
que no importa el curso deja la entrega sin calificar (nunca un 0); y los límites del
calificador (tiempo, memoria, temporales) en ``TrustedExecute``.
"""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import attacks
import classroom
import nbformat
import pytest
import tampering
from leaks import secret_lines
from nbgrader.api import Gradebook
from nbgrader.apps import NbGraderAPI
from nbgrader.coursedir import CourseDirectory

from course import grading, labs
from course.commands import grade
from course.grading import results, sandbox

pytestmark = pytest.mark.slow
needs_bwrap = pytest.mark.skipif(
    bool(sandbox.available()), reason=f"sin aislamiento aquí: {sandbox.available()}"
)

LAB = labs.get("01_atencion")
HONEST = {"ana": 80.0, "victima": 80.0, "beto": 0.0, "displayhook": 0.0, "sql": 0.0, "lector": 0.0}
BIN = Path(sys.executable).parent

WRAP_CELLS = """
sys.displayhook = lambda valor: None
def envuelve(lineas):
    cuerpo = "".join(lineas).splitlines(True)
    dentro = ["    " + linea if linea.strip() else linea for linea in cuerpo]
    return ["try:\\n", *dentro, "\\nexcept BaseException:\\n    pass\\n"]
ip.input_transformers_post.append(envuelve)
"""
HIDE_ERRORS = attacks.SILENCE_ERRORS + WRAP_CELLS  # los errores, callados y tapados
SQL = """
for db in ["@ROOT@/gradebook.db", "../../../gradebook.db", "@REPO@/gradebook.db"]:
    def sql(db=db):
        with sqlite3.connect(db) as c:
            c.execute("update grade set auto_score = 0, manual_score = 0")
            c.execute("create table redteam (x text)")
        print("cambiado", db)
    intenta(sql)
"""
READ = """
for ruta in (glob.glob("@ROOT@/source/*/*.ipynb") + glob.glob("../../../source/*/*.ipynb")
             + glob.glob("@REPO@/source/*/*.ipynb")):
    intenta(lambda r=ruta: print(open(r).read()))
"""


def _hostile(code: str, root: Path, name: str) -> nbformat.NotebookNode:
    notebook = nbformat.read(LAB.release, 4)
    context = attacks.Context(labs.REPO, grading.prepared_course(LAB).parent, root, Path.home())
    source = context.fill(attacks.PRELUDE + code, name)
    tampering.insert_code(notebook, tampering.index(notebook, "preparacion") + 1, source)
    return notebook


def new_course(root: Path) -> Path:
    """Un curso de nbgrader en ``root``: la configuración del curso y el lab 1 generado."""
    return classroom.nbgrader_course(root, LAB)


def submit(root: Path, student: str, notebook: nbformat.NotebookNode) -> None:
    nbformat.write(notebook, classroom.submission(root, student, LAB))


def book(root: Path) -> dict[str, dict[str, float | None]]:
    """estudiante -> grade id -> nota automática en ``gradebook.db``."""
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        return {
            sub.student.id: {g.name: g.auto_score for nb in sub.notebooks for g in nb.grades}
            for sub in gradebook.assignment_submissions(LAB.id)
        }


def _api(root: Path) -> NbGraderAPI:
    """La API con la que Formgrader califica (su botón Autograde llama a ``autograde``)."""
    config = grading.nbgrader_config(root)
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


@pytest.fixture(scope="module")
def doors(tmp_path_factory):
    root = new_course(tmp_path_factory.mktemp("puertas"))
    for student in ("ana", "victima"):
        submit(root, student, tampering.solved())
    submit(root, "beto", nbformat.read(LAB.release, 4))
    for name, code in (("displayhook", HIDE_ERRORS), ("sql", SQL), ("lector", READ)):
        submit(root, name, _hostile(code, root, name))
    assert grade.run(root=root, jobs=2, progress=False) == 0
    by_grade = {r.student: {c.grade_id: c.points for c in r.cells}
                for r in results.read_all(root / "autograded")}  # fmt: skip
    cli = subprocess.run(
        [str(BIN / "nbgrader"), "autograde", LAB.id, "--force", "--student=[abds]*"],
        cwd=root, capture_output=True, text=True, timeout=900,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"},
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr[-3000:]
    done = _api(root).autograde(LAB.id, "lector")
    assert done["success"], (done.get("error") or "")[-3000:]
    return root, by_grade


@needs_bwrap
def test_every_door_gives_the_same_cell_scores(doors):
    root, by_grade = doors
    found = book(root)
    for student, honest in HONEST.items():
        assert found[student] == by_grade[student], student
        total = sum(score or 0 for score in found[student].values())
        assert total == honest, (student, total)


@needs_bwrap
def test_no_door_lets_a_student_change_the_gradebook(doors):
    root, _ = doors
    with sqlite3.connect(root / "gradebook.db") as db:
        tables = {row[0] for row in db.execute("select name from sqlite_master")}
    assert "redteam" not in tables
    assert sum(v or 0 for v in book(root)["victima"].values()) == 80


@needs_bwrap
def test_no_solution_reaches_what_the_doors_wrote(doors):
    root, _ = doors
    secret = secret_lines(c.source for c in nbformat.read(LAB.source, 4).cells)
    for student in ("lector", "displayhook", "sql"):
        folder = root / "autograded" / student / LAB.id
        graded = nbformat.read(folder / f"{LAB.id}.ipynb", 4)  # lleva las pruebas ocultas
        outputs = [json.dumps(cell.get("outputs", [])) for cell in graded.cells]
        text = "".join(outputs) + (folder / results.RESULT_NAME).read_text()
        assert not [line for line in secret if json.dumps(line)[1:-1] in text], student


@needs_bwrap
def test_the_door_leaves_the_same_result_file_as_grade(doors):
    root, by_grade = doors
    found = {r.student: r for r in results.read_all(root / "autograded")}
    for student in ("ana", "lector"):
        assert {c.grade_id: c.points for c in found[student].cells} == by_grade[student]
        assert not found[student].error


def test_without_bubblewrap_the_door_refuses_and_names_the_safe_command(tmp_path, monkeypatch):
    root = new_course(tmp_path)
    submit(root, "ana", tampering.solved())
    monkeypatch.setattr(sandbox, "available", lambda: "no está instalado bubblewrap (bwrap)")
    done = _api(root).autograde(LAB.id, "ana")
    text = (done.get("error") or "") + (done.get("log") or "")
    assert not done["success"]
    assert "python -m course grade" in text and "no se puede aislar" in text
    assert not (root / "autograded" / "ana" / LAB.id / f"{LAB.id}.ipynb").exists()
    assert all(score is None for score in book(root)["ana"].values())  # nunca un 0


@pytest.fixture(scope="module")
def other_checkout(tmp_path_factory):
    """Otra copia del curso que el calificador importa (PYTHONPATH) y el núcleo aislado no:
    la instalación editable del entorno apunta a esta copia de trabajo."""
    root = tmp_path_factory.mktemp("otra_copia")
    shutil.copytree(
        labs.REPO / "course", root / "course", ignore=shutil.ignore_patterns("__pycache__")
    )
    new_course(root)
    submit(root, "ana", tampering.solved())
    env = {**os.environ, "PYTHONPATH": str(root), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return root, env


@needs_bwrap
def test_a_kernel_that_cannot_import_the_course_is_no_zero(other_checkout):
    root, env = other_checkout
    code = (
        "import json, sys\nfrom pathlib import Path\nfrom course.grading import batch\n"
        "task = batch.Task('ana', '01_atencion', Path(sys.argv[1]))\n"
        "print(json.dumps(batch.grade_one(task, Path(sys.argv[2])).__dict__))"
    )
    notebook = root / "submitted" / "ana" / LAB.id / f"{LAB.id}.ipynb"
    done = subprocess.run(
        [sys.executable, "-c", code, str(notebook), str(root / "salida")],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["error"] and not result["cells"], result
    assert "no puede importar el paquete del curso" in result["error"]
    assert "pip install -e ." in result["error"]

    cli = subprocess.run(
        [str(BIN / "nbgrader"), "autograde", LAB.id, "--force"],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert cli.returncode != 0
    assert "no puede importar el paquete del curso" in cli.stderr
    assert all(score is None for score in book(root)["ana"].values())  # sin nota, no un 0


@needs_bwrap
def test_grade_and_doctor_see_the_cause_before_grading(other_checkout):
    root, env = other_checkout
    code = (
        "import sys\nfrom pathlib import Path\nfrom course.commands import grade\n"
        "sys.exit(grade.run(root=Path(sys.argv[1]), progress=False))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(root)], cwd=root, env=env, capture_output=True,
        text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode != 0
    assert "No califico ninguna entrega" in done.stderr + done.stdout
    assert not results.path_for(root / "autograded", "ana", LAB.id).exists()
    row = "from course.grading import kernel_view; print(kernel_view.doctor_check())"
    doctor = subprocess.run(
        [sys.executable, "-c", row], cwd=root, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert doctor.stdout.startswith("(False, ")
    assert "el núcleo aislado no puede importar el paquete del curso" in doctor.stdout
    assert "pip install -e ." in doctor.stdout


# --- límites del calificador ----------------------------------------------------------------


def _grade_synthetic(tests: dict[str, str], tmp_path: Path, **traits):
    """Un cuaderno con solo celdas de prueba (``tests``: grade id -> código), calificado con
    ``TrustedExecute`` sin aislar (las pruebas se ejecutan aquí, no en el núcleo)."""
    from course.grading.execute import TrustedExecute

    cells = [nbformat.v4.new_code_cell("x = 1")]
    for grade_id, code in tests.items():
        cell = nbformat.v4.new_code_cell(code)
        cell.metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "points": 1}
        cells.append(cell)
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    runner = TrustedExecute(
        test_cells=list(tests), sandboxed=False, timeout=traits.pop("timeout", 30),
        scratch=str(tmp_path / "temporales"), **traits,
    )  # fmt: skip
    runner.preprocess(notebook, {"metadata": {"path": str(tmp_path)}})
    return runner, {c.metadata["nbgrader"]["grade_id"]: c.outputs for c in notebook.cells[1:]}


def _error(outputs) -> str:
    return " ".join(f"{o.ename}: {o.evalue}" for o in outputs if o.output_type == "error")


def test_grader_side_limits_fail_only_their_cell(tmp_path):
    tests = {
        "colgada": "while True:\n    pass\n",
        "tragona": "b = bytearray(3 * 2**30)\n",
        "temporal": "import tempfile\ncarpeta = tempfile.mkdtemp()\n",
        "atrapada": "try:\n    while True:\n        pass\nexcept Exception:\n    pass\n",
        "normal": "assert x == 1\n",
    }
    runner, outputs = _grade_synthetic(tests, tmp_path, timeout=3, grader_memory=2**30)
    assert "TiempoAgotado" in _error(outputs["colgada"])
    assert "TiempoAgotado" in _error(outputs["atrapada"])  # un except Exception no la traga
    assert "MemoriaAgotada" in _error(outputs["tragona"])
    assert not _error(outputs["temporal"]) and not _error(outputs["normal"])
    made = Path(runner._namespace["carpeta"])
    assert made.is_relative_to(tmp_path / "temporales") and not made.exists()
    assert tempfile.gettempdir() != str(tmp_path / "temporales")
