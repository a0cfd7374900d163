"""Nada pasa de un núcleo al siguiente y todo lo que escribe un núcleo tiene tope (issue 32,
puntos 4 y 5), por la puerta ``course grade --jobs 2``.

Una clase del laboratorio 1: ana (la solución, 80), beto (en blanco, 0), tres espías y
``disco``. Cada espía busca primero una nota de otro por cada canal (llaveros del kernel,
socket abstracto, SysV, cola POSIX, archivos en ``/tmp``, ``$HOME``, la carpeta de sockets
y ``/dev/shm``, entorno) y después deja la suya por todos los que puede. Con dos procesos
de calificación, al menos dos espías pasan por el mismo proceso, uno tras otro y con el
mismo uid: si un canal dejara pasar algo, el segundo encontraría la nota del primero.
``disco`` intenta escribir 1,5 GiB entre su carpeta de sockets, ``/tmp`` y ``$HOME``. Antes
de calificar, una calificación muerta (``SIGKILL``) deja montado un disco de núcleo.

La clase se califica dos veces: con núcleos nacidos del cigoto (lo normal como root) y
con el ``bwrap`` propio de cada núcleo (el cigoto no disponible).
"""

import ast
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import classroom
import nbformat
import pytest
import tampering

from course import labs
from course.commands import grade
from course.grading import batch, disk, results, sandbox

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(sandbox.available()) or os.geteuid() != 0,
        reason="los discos por entrega y el uid de los núcleos necesitan bubblewrap y root",
    ),
]

LAB = labs.get("01_atencion")
SPIES = ("espia1", "espia2", "espia3")
WRITE_MIB = 1536  # lo que intenta escribir «disco»: más que el tope de su disco

SPY = r"""
import ctypes, json, os, socket
from ipykernel.connect import get_connection_file
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.shmat.restype = ctypes.c_void_p
NOTA, NOMBRE, CLAVE = "@NAME@".encode(), b"nota-curso", 0x6E6F7461
RINGS = {"sesión": -3, "usuario": -4, "sesión de usuario": -5}
FILES = ["/tmp", os.path.expanduser("~"), os.path.dirname(get_connection_file()), "/dev/shm"]
found, left = {}, {}
for ring_name, ring in RINGS.items():
    serial = libc.syscall(250, 10, ctypes.c_long(ring), b"user", NOMBRE, 0)
    if serial > 0:
        buffer = ctypes.create_string_buffer(64)
        libc.syscall(250, 11, ctypes.c_long(serial), buffer, 64)
        found["llavero " + ring_name] = buffer.value.decode()
for folder in FILES:
    if os.path.exists(f"{folder}/nota-curso"):
        found["archivo " + folder] = open(f"{folder}/nota-curso").read()
peer = socket.socket(socket.AF_UNIX)
if peer.connect_ex("\0nota-curso") == 0:
    found["socket abstracto"] = "conecta"
memory = libc.shmget(CLAVE, 0, 0)
if memory >= 0:
    found["SysV shm"] = ctypes.string_at(libc.shmat(memory, None, 0), 16).rstrip(b"\0").decode()
if libc.msgget(CLAVE, 0) >= 0:
    found["SysV cola"] = "existe"
if libc.mq_open(b"/nota-curso", os.O_RDONLY) >= 0:
    found["cola POSIX"] = "existe"
if "NOTA_CURSO" in os.environ:
    found["entorno"] = os.environ["NOTA_CURSO"]
for ring_name, ring in RINGS.items():
    left["llavero " + ring_name] = libc.syscall(248, b"user", NOMBRE, NOTA, len(NOTA),
                                               ctypes.c_long(ring)) > 0
for folder in FILES:
    try:
        open(f"{folder}/nota-curso", "w").write(NOTA.decode())
        left["archivo " + folder] = True
    except OSError:
        left["archivo " + folder] = False
listener = socket.socket(socket.AF_UNIX)
listener.bind("\0nota-curso")
listener.listen()
left["socket abstracto"] = True
memory = libc.shmget(CLAVE, 4096, 0o1000 | 0o666)
if memory >= 0:
    ctypes.memmove(libc.shmat(memory, None, 0), NOTA, len(NOTA))
left["SysV shm"] = memory >= 0
left["SysV cola"] = libc.msgget(CLAVE, 0o1000 | 0o666) >= 0
left["cola POSIX"] = libc.mq_open(b"/nota-curso", os.O_CREAT | os.O_RDWR, 0o666, None) >= 0
os.environ["NOTA_CURSO"] = NOTA.decode()
left["entorno"] = True
print("ESPIA", json.dumps({"found": found, "left": left}))
"""

FILL = r"""
import os, time
from ipykernel.connect import get_connection_file
places = [os.path.dirname(get_connection_file()), "/tmp", os.path.expanduser("~")]
block, written = b"\1" * 2**20, {}
for number in range(@MIB@ // 256):
    place = places[number % 3]
    try:
        with open(f"{place}/relleno-{number}", "wb", buffering=0) as out:
            for _ in range(256):
                written[place] = written.get(place, 0) + out.write(block)
    except OSError as error:
        print("no cabe:", error.strerror)
with open(f"{places[0]}/hasta-el-final", "wb", buffering=0) as out:  # hasta el último byte
    size = 2**20
    while size:
        try:
            out.write(b"\1" * size)
        except OSError:
            size //= 2
print("DISCO", {place: count // 2**20 for place, count in written.items()}, flush=True)
time.sleep(1)
os._exit(1)  # muere con el disco lleno: el núcleo siguiente necesita sitio
""".replace("@MIB@", str(WRITE_MIB))


def _hostile(code: str) -> nbformat.NotebookNode:
    notebook = nbformat.read(LAB.release, 4)
    tampering.insert_code(notebook, tampering.index(notebook, "preparacion") + 1, code)
    return notebook


def _dead_run_disk() -> Path:
    """Un disco de núcleo montado por un proceso que muere con ``SIGKILL`` (no lo borra)."""
    code = (
        "import os, signal\nfrom course.grading import disk\n"
        "with disk.disk(2**20) as made:\n"
        "    (made.runtime / 'resto').write_text('x')\n"
        "    print(made.folder, flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    folder = Path(done.stdout.strip())
    assert os.path.ismount(folder) and (folder / "nucleo" / "resto").exists()
    return folder


def _dead_disks() -> list[str]:
    """Discos montados o carpetas en ``disk.BASE`` de un proceso que ya no vive (otras
    calificaciones pueden estar usando los suyos a la vez)."""
    with open("/proc/self/mountinfo") as mounts:
        points = {Path(line.split()[4]) for line in mounts}
    points |= set(disk.BASE.iterdir())
    return sorted(str(p) for p in points if p.parent == disk.BASE and not disk._alive(p.name))


@pytest.fixture(scope="module", params=["cigoto", "bwrap"])
def graded(request, tmp_path_factory):
    """La clase calificada con ``grade --jobs 2``: ``(raíz, salida de error, disco muerto)``."""
    root = classroom.nbgrader_course(tmp_path_factory.mktemp(f"aislados-{request.param}"), LAB)
    nbformat.write(tampering.solved(), classroom.submission(root, "ana", LAB))
    nbformat.write(nbformat.read(LAB.release, 4), classroom.submission(root, "beto", LAB))
    for spy in SPIES:
        nbformat.write(_hostile(SPY.replace("@NAME@", spy)), classroom.submission(root, spy, LAB))
    nbformat.write(_hostile(FILL), classroom.submission(root, "disco", LAB))
    dead = _dead_run_disk()
    patch = pytest.MonkeyPatch()
    if request.param == "bwrap":  # los procesos de trabajo nacen de fork: heredan el cambio
        patch.setattr(batch, "_zygote", lambda settings: None)
    errors = root / "stderr.txt"  # los procesos de trabajo heredan sys.stderr
    try:
        with open(errors, "w", buffering=1) as sink, contextlib.redirect_stderr(sink):
            status = grade.run(root=root, jobs=2, timeout=60, progress=False)
    finally:
        patch.undo()
    errors = errors.read_text()
    assert status == 0, errors[-3000:]
    return root, errors, dead


def _printed(root: Path, student: str, tag: str) -> str:
    notebook = nbformat.read(root / "autograded" / student / LAB.id / f"{LAB.id}.ipynb", 4)
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            for line in output.get("text", "").splitlines():
                if line.startswith(tag + " "):
                    return line[len(tag) + 1 :]
    raise AssertionError(f"{student}: no imprimió {tag}")


def test_no_note_passes_from_one_kernel_to_the_next(graded):
    root, _, _ = graded
    reports = {spy: json.loads(_printed(root, spy, "ESPIA")) for spy in SPIES}
    assert {spy: report["found"] for spy, report in reports.items()} == dict.fromkeys(SPIES, {})
    for report in reports.values():
        # cada canal se pudo usar dentro del núcleo: lo que no cruza es por la caja
        opened = {"archivo /tmp", "socket abstracto", "SysV shm", "SysV cola", "cola POSIX"}
        assert all(report["left"][channel] for channel in opened), report["left"]
        assert not any(v for k, v in report["left"].items() if k.startswith("llavero")), report
    scores = {r.student: r.auto_points for r in results.read_all(root / "autograded")}
    assert scores["ana"] == 80 and scores["beto"] == 0


def test_everything_a_kernel_writes_fits_in_one_bounded_disk(graded):
    root, _, _ = graded
    written = ast.literal_eval(_printed(root, "disco", "DISCO"))
    assert sum(written.values()) <= sandbox.Limits().scratch // 2**20, written
    assert len(written) == 3  # pudo escribir en los tres sitios, hasta llenar el disco
    assert not [r for r in results.read_all(root / "autograded") if r.error]
    # murió con el disco lleno: el núcleo siguiente arrancó y ejecutó las celdas de después
    found = results.read(root / "autograded", "disco", LAB.id)
    assert found.cells and not [c for c in found.cells if "NucleoPerdido" in c.message]


def test_disks_are_removed_also_after_a_dead_run(graded):
    _, errors, dead = graded
    assert not dead.exists()
    assert "se han desmontado y borrado los discos de núcleos que dejó" in errors
    assert str(dead) in errors
    assert _dead_disks() == []
