"""Calificar otra vez: matar ``grade`` a mitad y reanudarlo, otro orden y otro número de
procesos, la copia del libro de notas y ``submitted/`` intacto (docs/reliability.md).

Una clase de cuatro entregas del laboratorio 1 (ana: la solución; beto: sin tocar; carla y
dani: con ejercicios mal) se califica una vez por módulo sin cortes (``reference``). Cada
prueba califica otra copia de la misma clase de otra manera y compara el libro de notas
resultante, celda calificada a celda calificada, con el de referencia.
"""

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import classroom
import nbformat
import pytest
import tampering as t

from course import labs
from course.commands import grade
from course.grading import batch, results

LAB = labs.get("01_atencion")
# La unión en gradebook.db, con un SIGKILL a sí mismo en la consulta número argv[2].
MERGE_THEN_DIE = """
import os, signal, sys
from pathlib import Path
from nbgrader.api import Gradebook
from course.grading import results

calls = 0
find_grade = Gradebook.find_grade

def dying(*args, **kwargs):
    global calls
    calls += 1
    if calls == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)
    return find_grade(*args, **kwargs)

Gradebook.find_grade = dying
root = Path(sys.argv[1])
results.merge(results.read_all(root / "autograded"), root / "gradebook.db")
"""


def _partial(wrong: dict[str, str]) -> str:
    notebook = t.solved()
    for exercise, code in wrong.items():
        t.answer(notebook, exercise, code)
    return nbformat.writes(notebook)


CLASS = {
    "ana": lambda: LAB.source.read_text(),
    "beto": lambda: LAB.release.read_text(),
    "carla": lambda: _partial({"ej2_softmax": "def softmax(x):\n    return x.exp()\n"}),
    "dani": lambda: _partial(
        {
            "ej3_relleno": "def padding_mask(tokens, pad_idx):\n"
            "    return ~(tokens != pad_idx).unsqueeze(-2)\n",
            "ej4_causal": "def causal_mask(size):\n"
            "    return torch.ones(size, size, dtype=torch.bool).triu()\n",
        }
    ),
}


def _environment(root: Path) -> dict[str, str]:
    """Temporales y archivos de conexión de los núcleos dentro de la carpeta de la prueba."""
    (root / "tmp").mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(root / "tmp"), "JUPYTER_RUNTIME_DIR": str(root / "tmp")}


def cli_grade(root: Path, *args: str) -> list[str]:
    return [sys.executable, "-c", classroom.GRADE_CLI, str(root), "grade", *args]


def tree_state(folder: Path) -> dict[str, tuple[int, str]]:
    """Ruta -> (fecha de modificación en ns, SHA-256) de cada archivo bajo ``folder``."""
    return {
        str(p.relative_to(folder)): (
            p.stat().st_mtime_ns,
            hashlib.sha256(p.read_bytes()).hexdigest(),
        )
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def scores(root: Path) -> dict[tuple[str, str, str], tuple]:
    """(estudiante, laboratorio, celda) -> (auto, manual, pendiente) leído con nbgrader."""
    from nbgrader.api import Gradebook

    found = {}
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        warnings.simplefilter("ignore")
        for assignment in gradebook.assignments:
            for submission in assignment.submissions:
                for notebook in submission.notebooks:
                    for cell in notebook.grades:
                        key = (submission.student.id, assignment.name, cell.name)
                        found[key] = (cell.auto_score, cell.manual_score, cell.needs_manual_grade)
    return found


def graded(root: Path) -> dict[tuple[str, str], tuple]:
    """Lo que dice cada ``calificacion.json``, sin la hora ni la duración."""
    return {
        (r.student, r.lab): (tuple(r.cells), r.error, tuple(r.findings))
        for r in results.read_all(root / "autograded")
    }


def totals(found: dict[tuple[str, str, str], tuple]) -> dict[str, float]:
    """Puntos automáticos de cada estudiante."""
    points: dict[str, float] = {}
    for (student, _, _), (auto, _, _) in found.items():
        points[student] = points.get(student, 0) + (auto or 0)
    return points


def mismatches(expected: dict, got: dict) -> list:
    """Claves que faltan, sobran o cambian de valor."""
    return sorted(k for k in expected.keys() | got.keys() if expected.get(k) != got.get(k))


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("clase")
    for student, text in CLASS.items():
        folder = root / "submitted" / student / LAB.id
        folder.mkdir(parents=True)
        (folder / f"{LAB.id}.ipynb").write_text(text())
    return root


@pytest.fixture
def fresh(template, tmp_path):
    """Una copia de la clase (fechas de los archivos incluidas), sin nada calificado."""

    def make(name: str, source: Path = template) -> Path:
        root = tmp_path / name
        shutil.copytree(source, root, ignore=shutil.ignore_patterns("tmp"))
        return root

    return make


@pytest.fixture(scope="module")
def reference(template, tmp_path_factory) -> Path:
    """La clase calificada de un tirón con la orden real (2 procesos)."""
    root = tmp_path_factory.mktemp("referencia") / "curso"
    shutil.copytree(template, root)
    before = tree_state(root / "submitted")
    done = subprocess.run(
        cli_grade(root, "--jobs", "2"), capture_output=True, text=True, timeout=600,
        env=_environment(root),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert tree_state(root / "submitted") == before, "grade escribió en submitted/"
    assert not list(root.glob("gradebook.db.*.bak"))  # no había libro de notas que copiar
    points = totals(scores(root))
    assert points["ana"] == 80 and points["beto"] == 0  # nota completa, cero y dos parciales
    assert 0 < points["carla"] < 80 and 0 < points["dani"] < 80
    assert points["carla"] != points["dani"]
    return root


def _descendants(pid: int) -> list[int]:
    """Los procesos que cuelgan de ``pid`` (hijos, nietos...), leídos de /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(stat.parent.name))
    found, pending = [], [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def _kill_group(process: subprocess.Popen) -> None:
    """SIGKILL al grupo de ``grade`` y a sus núcleos (viven en su propia sesión).

    Primero se congela el grupo (SIGSTOP) para que ningún proceso lance un núcleo nuevo
    mientras se apuntan los pids.
    """
    if process.poll() is not None:  # ya terminó (la prueba falla por otro motivo)
        return
    os.killpg(process.pid, signal.SIGSTOP)
    family = _descendants(process.pid)
    os.killpg(process.pid, signal.SIGKILL)
    for pid in family:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    process.wait(timeout=60)


@pytest.mark.slow
def test_a_killed_run_run_again_ends_with_the_same_gradebook(reference, fresh):
    root = fresh("cortada")
    with open(root / "grade.log", "w") as log:
        process = subprocess.Popen(
            cli_grade(root, "--jobs", "2"), stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True, env=_environment(root),
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not list((root / "autograded").glob(f"*/*/{results.RESULT_NAME}")):
            assert process.poll() is None, (root / "grade.log").read_text()
            assert time.monotonic() < deadline, "grade no terminó ninguna entrega en 300 s"
            time.sleep(0.02)
    finally:
        _kill_group(process)
    assert process.returncode == -signal.SIGKILL
    finished = list((root / "autograded").glob(f"*/*/{results.RESULT_NAME}"))
    assert 1 <= len(finished) < len(CLASS), "no se cortó a mitad"
    assert not (root / "gradebook.db").exists()  # la unión se hace al final
    for path in finished:  # nada a medias: cada JSON y cada cuaderno calificado se leen enteros
        results.Result(**json.loads(path.read_text()))
    for path in (root / "autograded").glob(f"*/*/{LAB.id}.ipynb"):
        nbformat.read(path, 4)

    again = subprocess.run(
        cli_grade(root, "--jobs", "2"), capture_output=True, text=True, timeout=600,
        env=_environment(root),
    )  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    lost = mismatches(scores(reference), scores(root))
    assert not lost, f"{len(lost)} notas distintas tras cortar y reanudar: {lost[:5]}"
    assert not mismatches(graded(reference), graded(root))


@pytest.mark.slow
def test_one_worker_and_shards_in_reverse_order_give_identical_scores(reference, fresh):
    root = fresh("un_proceso")
    tasks = batch.find_submissions(root / "submitted")
    assert batch.select_shard(tasks, "1/2") and batch.select_shard(tasks, "2/2")
    for shard in ("2/2", "1/2"):  # primero el fragmento de ana y beto, después carla y dani
        assert grade.run(root=root, jobs=1, shard=shard, progress=False) == 0
    assert not (root / "gradebook.db").exists()  # los fragmentos no unen
    assert grade.run(root=root, merge_only=True) == 0
    different = mismatches(scores(reference), scores(root))
    assert not different, f"{len(different)} notas distintas: {different[:5]}"
    assert not mismatches(graded(reference), graded(root))


@pytest.mark.slow
def test_a_regrade_backs_up_the_gradebook_and_leaves_submitted_untouched(reference, fresh):
    root = fresh("regrado", source=reference)
    before = (root / "gradebook.db").read_bytes()
    (root / "submitted" / "beto" / LAB.id / f"{LAB.id}.ipynb").write_text(LAB.source.read_text())
    submitted = tree_state(root / "submitted")
    assert grade.run(root=root, jobs=2, progress=False) == 0
    assert tree_state(root / "submitted") == submitted, "grade escribió en submitted/"
    backups = list(root.glob("gradebook.db.*.bak"))
    assert len(backups) == 1 and backups[0].read_bytes() == before
    now, old = scores(root), scores(reference)
    changed = {k[0] for k in mismatches(old, now)}
    assert changed == {"beto"}  # las entregas que no cambiaron, calificadas dos veces: igual
    assert totals(now)["beto"] == 80


@pytest.mark.slow
def test_a_merge_killed_halfway_leaves_the_gradebook_as_it_was(reference, fresh):
    root = fresh("union_cortada", source=reference)
    expected = {}
    for result in results.read_all(root / "autograded"):
        for cell in result.cells:  # notas nuevas para todos: la nota máxima
            cell.points = cell.max_points if cell.points is not None else None
        results.write(root / "autograded", result)
        expected[result.student] = result.auto_points
    assert expected != totals(scores(reference))
    per_student = len(results.read_all(reference / "autograded")[0].cells)
    died = subprocess.run(
        [sys.executable, "-c", MERGE_THEN_DIE, str(root), str(2 * per_student + 1)],
        capture_output=True, text=True, timeout=300, env=_environment(root),
    )  # fmt: skip
    assert died.returncode == -signal.SIGKILL, died.stderr
    assert not mismatches(scores(reference), scores(root)), "la unión cortada dejó notas a medias"
    assert grade.run(root=root, merge_only=True) == 0
    assert totals(scores(root)) == expected
