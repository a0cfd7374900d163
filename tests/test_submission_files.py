"""Solo archivos normales salen de una entrega, por la puerta ``nbgrader autograde`` +
``nbgrader generate_feedback`` (issue 32, punto 2).

nbgrader copia los demás archivos de ``submitted/<estudiante>/<lab>/`` a ``autograded/`` y
de ahí a ``feedback/`` con ``shutil.copy``, que sigue los enlaces simbólicos: un enlace al
cuaderno fuente del instructor ponía la solución entera y las pruebas ocultas en la carpeta
de devolución del estudiante. Aquí eve entrega, junto a su cuaderno en blanco, un enlace
al cuaderno fuente, un enlace a ``/dev/zero``, una FIFO, un dispositivo de caracteres y un
enlace a una carpeta; ana, lo mismo que eve pero honesto (un archivo de notas normal).
"""

import os
import stat
import subprocess
import sys
from pathlib import Path

import classroom
import nbformat
import pytest
import tampering
from leaks import secret_lines

from course import labs
from course.grading import sandbox

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(sandbox.available()), reason=f"sin aislamiento: {sandbox.available()}"),
]

LAB = labs.get("01_atencion")
BIN = Path(sys.executable).parent
SECRET = secret_lines(c.source for c in nbformat.read(LAB.source, 4).cells)
HOSTILE = {  # nombre -> (cómo se crea, lo que dice el aviso)
    "solucion.ipynb.txt": ("enlace al cuaderno fuente", "es un enlace simbólico"),
    "ceros.bin": ("enlace a /dev/zero", "es un enlace simbólico"),
    "tuberia": ("FIFO", "no es un archivo normal"),
    "cero": ("dispositivo", "no es un archivo normal"),
    "fuente": ("enlace a una carpeta", "es un enlace simbólico"),
}
if os.geteuid() != 0:  # crear un dispositivo necesita root
    del HOSTILE["cero"]


def _nbgrader(root: Path, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "nbgrader"), *arguments], cwd=root, capture_output=True, text=True,
        timeout=900, env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"},
    )  # fmt: skip


@pytest.fixture(scope="module")
def doors(tmp_path_factory):
    """El curso después de ``nbgrader autograde`` y ``nbgrader generate_feedback``."""
    root = classroom.nbgrader_course(tmp_path_factory.mktemp("archivos"), LAB)
    for student in ("ana", "eve"):
        notebook = classroom.submission(root, student, LAB)
        nbformat.write(tampering.solved() if student == "ana" else nbformat.read(LAB.release, 4),
                       notebook)  # fmt: skip
        (notebook.parent / "notas.txt").write_text(f"apuntes de {student}\n")
    eve = root / "submitted" / "eve" / LAB.id
    (eve / "solucion.ipynb.txt").symlink_to(root / "source" / LAB.id / f"{LAB.id}.ipynb")
    (eve / "ceros.bin").symlink_to("/dev/zero")
    os.mkfifo(eve / "tuberia")
    if "cero" in HOSTILE:
        os.mknod(eve / "cero", stat.S_IFCHR | 0o644, os.makedev(1, 5))  # como /dev/zero
    (eve / "fuente").symlink_to(root / "source" / LAB.id)
    autograde = _nbgrader(root, "autograde", LAB.id, "--force")
    feedback = _nbgrader(root, "generate_feedback", LAB.id, "--force")
    return root, autograde, feedback


def _tree(folder: Path) -> dict[str, str]:
    """Cada entrada bajo ``folder``: su tipo (lo que ``lstat`` dice)."""
    kinds = {}
    for path in sorted(folder.rglob("*")):
        mode = path.lstat().st_mode
        kind = "archivo" if stat.S_ISREG(mode) else "carpeta" if stat.S_ISDIR(mode) else "otro"
        kinds[path.relative_to(folder).as_posix()] = kind
    return kinds


def test_only_regular_files_reach_autograded_and_feedback(doors):
    root, autograde, feedback = doors
    assert autograde.returncode == 0, autograde.stderr[-3000:]
    assert feedback.returncode == 0, feedback.stderr[-3000:]
    for step in ("autograded", "feedback"):
        eve = _tree(root / step / "eve" / LAB.id)
        ana = _tree(root / step / "ana" / LAB.id)
        assert set(eve) == set(ana), (step, eve, ana)  # lo de eve que no es archivo, fuera
        assert set(eve.values()) == {"archivo"}, (step, eve)
        assert (root / step / "eve" / LAB.id / "notas.txt").read_text() == "apuntes de eve\n"
    leaked = []
    for path in (root / "feedback" / "eve").rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            leaked += [line for line in SECRET if line in text]
    assert not leaked


def test_each_refused_file_is_named_with_the_student(doors):
    _, autograde, _ = doors
    for name, (_, reason) in HOSTILE.items():
        assert f"eve · {LAB.id}: se omite «{LAB.id}/{name}»: {reason}" in autograde.stderr, name
    assert "ana ·" not in autograde.stderr  # lo honesto pasa sin avisos
