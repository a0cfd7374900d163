"""Núcleos adelantados (``course.grading.pool``): uno por entrega, destruido al terminarla.

``grade`` arranca el núcleo de la entrega siguiente mientras califica la actual. Estas
pruebas comprueban que ese adelanto no abre una puerta entre estudiantes: la segunda
entrega no ve nada de lo que dejó la primera, y un núcleo adelantado muere con su entrega
aunque esta falle.
"""

import ast
from pathlib import Path

import nbformat
import pytest

from course import grading, labs
from course.grading import batch, pool, sandbox, work_queue

LAB = labs.get("01_atencion")

needs_bwrap = pytest.mark.skipif(
    bool(sandbox.available()), reason=f"sin aislamiento aquí: {sandbox.available()}"
)

LEAVE = """\
import torch
open("/tmp/trabajo/huella.txt", "w").write("de ana")
HUELLA_DE_ANA = 1
torch.huella_de_ana = True
torch.softmax = lambda *args, **kwargs: "trucado por ana"
print("DEJADO", torch.softmax(1))
"""

LOOK = """\
import os, torch
print("VISTO", {
    "archivo": os.path.exists("/tmp/trabajo/huella.txt"),
    "global": "HUELLA_DE_ANA" in globals(),
    "atributo": hasattr(torch, "huella_de_ana"),
    "softmax": torch.softmax(torch.zeros(2), dim=0).tolist(),
    "calificando": os.environ.get("NBGRADER_EXECUTION"),
})
"""


def _submission(folder: Path, student: str, extra: str) -> batch.Task:
    """La solución del lab. 1 con una celda propia más al final."""
    notebook = nbformat.read(LAB.source, 4)
    notebook.cells.append(nbformat.v4.new_code_cell(extra))
    path = folder / "submitted" / student / LAB.id / f"{LAB.id}.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(notebook, path)
    return batch.Task(student, LAB.id, path)


def _printed(notebook: Path, marker: str) -> str:
    for cell in nbformat.read(notebook, 4).cells:
        for output in cell.get("outputs", []):
            if output.get("name") == "stdout" and marker in output.get("text", ""):
                return output["text"]
    raise AssertionError(f"ninguna celda imprimió {marker}")


@pytest.mark.slow
@needs_bwrap
def test_a_warm_kernel_never_sees_the_previous_submission(tmp_path):
    tasks = [_submission(tmp_path, "ana", LEAVE), _submission(tmp_path, "bea", LOOK)]
    out = tmp_path / "autograded"
    done = {r.student: r for r in batch.grade_series(tasks, out, batch.Settings())}
    assert not done["ana"].error and not done["bea"].error
    assert done["bea"].auto_points == done["bea"].auto_max  # la solución sigue valiendo
    seen = _printed(out / "bea" / LAB.id / f"{LAB.id}.ipynb", "VISTO")
    found = ast.literal_eval(seen.split("VISTO", 1)[1].strip())
    assert found == {
        "archivo": False,
        "global": False,
        "atributo": False,
        "softmax": [0.5, 0.5],
        "calificando": "autograde",  # como si nbgrader lo hubiera lanzado (labs. 6 y 7)
    }
    left = _printed(out / "ana" / LAB.id / f"{LAB.id}.ipynb", "DEJADO")  # sí la dejó
    assert "trucado por ana" in left


def _alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "State:\tZ" not in status.read_text()


@pytest.mark.slow
@needs_bwrap
def test_a_kernel_started_ahead_dies_with_its_failed_submission(tmp_path, monkeypatch):
    started: list[pool.WarmKernel] = []

    class Recorded(pool.WarmKernel):
        def __init__(self, *args):
            super().__init__(*args)
            started.append(self)

    alive_while_first_grades = []
    pids = []

    def failing(path, lab, timeout=None, keep=None, stage=None, **settings):
        if not pids:  # mientras se califica ana, el núcleo de bea ya está en marcha
            pids.extend(kernel.km.provisioner.process.pid for kernel in started)
            alive_while_first_grades.extend(_alive(pid) for pid in pids)
        raise RuntimeError("la calificación falló a propósito")

    monkeypatch.setattr(pool, "WarmKernel", Recorded)
    monkeypatch.setattr(grading, "grade_notebook", failing)
    tasks = [_submission(tmp_path, s, "") for s in ("ana", "bea")]
    done = batch.grade_series(tasks, tmp_path / "autograded", batch.Settings())
    assert len(done) == 2 and all("a propósito" in r.error for r in done)
    assert alive_while_first_grades == [True, True]
    assert not any(_alive(pid) for pid in pids)
    assert len(started) == 2 and not any(kernel.km.has_kernel for kernel in started)


def test_preload_imports_the_setup_modules_without_binding_names():
    code = pool.preload_code(
        "import math\nimport torch.nn.functional as F\nfrom course.student import checks\n"
    )
    namespace: dict = {}
    exec(code, namespace)
    assert set(namespace) == {"__builtins__"}
    for module in (
        "torch",
        "math",
        "torch.nn.functional",
        "course.student",
        "course.grading.agent",
    ):
        assert f"__import__({module!r}" in code


def test_after_the_seed_only_the_course_modules_are_imported_ahead():
    code = pool.preload_code(
        "import torch\ntorch.manual_seed(0)\nimport numpy\nfrom course.student import viz\n"
    )
    assert "__import__('numpy'" not in code
    assert "__import__('course.student', fromlist=['viz'])" in code


COURSE_IMPORTS_DRAW_NOTHING = """\
import random, sys
import numpy, torch

def draws():
    return torch.rand(2).tolist(), random.random(), numpy.random.rand()

def seed():
    torch.manual_seed(0), random.seed(0), numpy.random.seed(0)

for name, names in {modules!r}:
    seed()
    expected = draws()
    seed()
    __import__(name, fromlist=names)
    assert draws() == expected, name
print("ok", len({modules!r}))
"""


def test_the_course_modules_imported_ahead_draw_no_random_numbers():
    """Importarlos antes de ``torch.manual_seed(0)`` no cambia los números del cuaderno."""
    import subprocess
    import sys

    from course import notebooks

    modules = []
    for lab in labs.available():
        source = nbformat.read(lab.source, 4)
        setup = "\n".join(
            cell.source for cell in source.cells if notebooks.is_setup(notebooks.grade_id(cell))
        )
        tree = ast.parse(setup)
        modules += [
            item
            for node in tree.body
            for item in pool._imported(node)
            if item[0].startswith("course.")
        ]
    assert any(name == "course.student" for name, _ in modules)
    script = COURSE_IMPORTS_DRAW_NOTHING.format(modules=modules)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stderr[-2000:]


def test_the_queue_covers_every_task_once_and_a_series_keeps_its_order(tmp_path, monkeypatch):
    def fake(path, lab, timeout=None, keep=None, stage=None, **settings):
        return grading.Result("", lab.id, [grading.Cell("ej1_puntuaciones_prueba", 5, 5)])

    monkeypatch.setattr(grading, "grade_notebook", fake)
    tasks = []
    for i in range(10):
        (tmp_path / f"e{i}.ipynb").write_text("{}")
        tasks.append(batch.Task(f"e{i}", LAB.id, tmp_path / f"e{i}.ipynb"))
    settings = batch.Settings(sandboxed=False)
    series = batch.grade_series(tasks, tmp_path / "serie", settings)
    assert [r.student for r in series] == [t.student for t in tasks]
    queue = work_queue.WorkQueue(tasks, 2)
    takers = [queue.taker(0), queue.taker(1)]
    taken = [takers[i % 2]() for i in range(12)]
    assert sorted(item[0] for item in taken if item) == list(range(10))
    assert taken[-2:] == [None, None]


def test_a_submission_that_cannot_be_read_ahead_does_not_stop_the_series(tmp_path, monkeypatch):
    def fake(path, lab, timeout=None, keep=None, stage=None, **settings):
        return grading.Result("", lab.id, [grading.Cell("ej1_puntuaciones_prueba", 5, 5)])

    monkeypatch.setattr(grading, "grade_notebook", fake)
    linked = tmp_path / "ana.ipynb"
    linked.symlink_to(LAB.source)  # un enlace a la solución: se rechaza al copiarlo
    good = tmp_path / "bea.ipynb"
    good.write_text("{}")
    tasks = [batch.Task("ana", LAB.id, linked), batch.Task("bea", LAB.id, good)]
    settings = batch.Settings(sandboxed=False)
    done = {r.student: r for r in batch.grade_series(tasks, tmp_path / "out", settings)}
    assert "se rechaza" in done["ana"].error
    assert not done["bea"].error and done["bea"].auto_points == 5
