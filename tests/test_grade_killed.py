"""``grade`` matado a mitad, como lo hace un planificador: SIGTERM a todo el grupo
(``scancel``, Kubernetes) y SIGKILL (sin aviso). Con SIGTERM sale con 143 sin dejar nada en
``$TMPDIR``; con SIGKILL lo que dejó lo borra la orden siguiente; en ambos casos, volver a
lanzarla termina la clase."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import classroom
import pytest

from course import labs
from course.grading import results, scratch

LAB = labs.get("01_atencion")


@pytest.fixture
def course_root(tmp_path) -> Path:
    for number in range(4):
        notebook = LAB.source if number % 2 == 0 else LAB.release
        classroom.submission(tmp_path, f"est{number}", LAB).write_text(notebook.read_text())
    (tmp_path / "tmp").mkdir()
    (tmp_path / "rt").mkdir()
    return tmp_path


def _grade(root: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "TMPDIR": str(root / "tmp"), "JUPYTER_RUNTIME_DIR": str(root / "rt")}
    command = [sys.executable, "-c", classroom.GRADE_CLI, str(root), "grade", "--jobs", "2", *args]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip


def _kill_when_grading(process: subprocess.Popen, root: Path, sig: int) -> None:
    """Espera a que haya copias de entregas en ``$TMPDIR`` y manda ``sig`` a todo el grupo."""
    deadline = time.monotonic() + 300
    while not list((root / "tmp").glob("*/course-entrega-*")):
        assert process.poll() is None, process.stdout.read()
        assert time.monotonic() < deadline, "no empezó a calificar en 300 s"
        time.sleep(0.05)
    os.killpg(process.pid, sig)
    process.wait(timeout=120)


def _finish(root: Path) -> None:
    again = _grade(root)
    out, _ = again.communicate(timeout=900)
    assert again.returncode == 0, out
    found = {r.student: r.auto_points for r in results.read_all(root / "autograded")}
    assert found == {"est0": 80, "est1": 0, "est2": 80, "est3": 0}


@pytest.mark.slow
def test_sigterm_leaves_nothing_in_tmpdir(course_root):
    process = _grade(course_root)
    _kill_when_grading(process, course_root, signal.SIGTERM)
    assert process.returncode == 143, process.stdout.read()
    assert list((course_root / "tmp").iterdir()) == []
    for path in (course_root / "autograded").glob(f"*/*/{results.RESULT_NAME}"):
        results.Result(**json.loads(path.read_text()))  # nada a medias
    _finish(course_root)


@pytest.mark.slow
def test_after_sigkill_the_next_run_sweeps_and_finishes(course_root):
    process = _grade(course_root)
    _kill_when_grading(process, course_root, signal.SIGKILL)
    left = list((course_root / "tmp").glob(f"{scratch.PREFIX}*"))
    assert left and all(p.stat().st_mode & 0o777 == 0o700 for p in left)
    _finish(course_root)
    assert list((course_root / "tmp").iterdir()) == []
