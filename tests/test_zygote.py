"""Núcleos nacidos del cigoto (``course.grading.zygote``), probados desde dentro.

Cada núcleo sale de un ``fork`` del mismo proceso; estas pruebas comprueban que eso no
abre nada que el ``bwrap`` propio de cada núcleo cerraba: ni privilegios, ni lo del
cigoto, ni un canal entre dos núcleos vivos a la vez (archivos, ``/dev/shm``, terminales,
sockets abstractos, procesos), y que matar el proceso que ve ``jupyter_client`` mata todo
lo que el núcleo lanzó.
"""

import ast
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from jupyter_core.utils import run_sync

from course import labs
from course.grading import batch, pool, sandbox, scratch, staging, zygote

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(sandbox.available()) or os.geteuid() != 0,
        reason="el cigoto necesita bubblewrap y root",
    ),
]


@pytest.fixture(scope="module")
def cell():
    """El cigoto de este módulo; muere al final."""
    born = zygote.Zygote(sandbox.kernel_uid())
    yield born
    born.close()


@contextlib.contextmanager
def kernel(cell: zygote.Zygote, lab_id: str = "01_atencion"):
    """Un núcleo nacido de ``cell`` para la versión publicada de ``lab_id``.

    Da ``(run, stage)``: ``run(code)`` ejecuta ``code`` y devuelve lo que imprimió.
    """
    with kernel_from(cell, lab_id) as (manager, stage):
        assert zygote.STUB in manager.provisioner.process.args  # nació del cigoto
        client = manager.client()
        client.start_channels()
        try:
            run_sync(client.wait_for_ready)(timeout=120)
            yield (lambda code: _run(client, code)), stage
        finally:
            client.stop_channels()


@contextlib.contextmanager
def kernel_from(cell: zygote.Zygote, lab_id: str = "01_atencion"):
    """``(gestor del núcleo adelantado, entrega preparada)`` con ``cell``."""
    lab = labs.get(lab_id)
    with staging.staged(lab.release, lab, True, None, cell) as stage:
        yield stage.warm.take(), stage


def _run(client, code: str) -> str:
    printed, errors = [], []

    def hook(message):
        content = message["content"]
        if message["msg_type"] == "stream":
            printed.append(content["text"])
        elif message["msg_type"] == "error":
            errors.append(f"{content['ename']}: {content['evalue']}")

    run_sync(client.execute_interactive)(code, timeout=60, output_hook=hook)
    assert not errors, errors
    return "".join(printed)


def _box(stage) -> sandbox.Box:
    return stage.trusted.SandboxedKernelManager.box


LOOK_AROUND = """\
import os, subprocess
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
capabilities = {k: status[k].strip() for k in status if k.startswith("Cap")}
mount = subprocess.run(["mount", "-t", "tmpfs", "x", "/tmp/trabajo"], capture_output=True)
umount = subprocess.run(["umount", "-l", "/tmp"], capture_output=True)
print(repr({
    "uid": (os.getuid(), os.geteuid(), os.getgid()),
    "capabilities": set(capabilities.values()),
    "no_new_privs": status["NoNewPrivs"].strip(),
    "hidden": os.listdir("/run/cigoto"),
    "tmp": sorted(os.listdir("/tmp")),
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "init": open("/proc/1/cmdline").read().split("\\0"),
    "mount": mount.returncode, "umount": umount.returncode,
}))
"""


def test_a_kernel_from_the_zygote_has_no_privilege_and_sees_only_its_box(cell):
    with kernel(cell) as (run, stage):
        seen = ast.literal_eval(run(LOOK_AROUND))
        box = _box(stage)
        outside = run(
            f"import os; print([os.path.exists(p) for p in {[str(box.package), str(cell.socket)]}])"
        )
        reference = run("import course, os; print(os.listdir(course.__path__[0] + '/reference'))")
        mounts = json.loads(_request(cell, box))["mounts"]
    assert seen["uid"] == (box.uid,) * 3 and box.uid >= sandbox.SANDBOX_UID
    assert seen["capabilities"] == {"0000000000000000"} and seen["no_new_privs"] == "1"
    # En su /tmp: su carpeta de sockets, trabajo/ y los puntos de lo que se le monta bajo
    # /tmp (en CI, el entorno virtual y el paquete, en la ruta del repositorio clonado allí).
    mounted = {
        Path(inside).parts[2] for inside, _, _ in mounts if Path(inside).is_relative_to("/tmp")
    }
    runtime = box.runtime.relative_to("/tmp").parts[0]
    assert seen["hidden"] == [] and seen["tmp"] == sorted({runtime, "trabajo", *mounted})
    assert "/run/cigoto/servidor.py" in seen["init"]  # el init es del cigoto, no bwrap
    assert seen["pids"][:2] == [1, 2] and max(seen["pids"]) < 50  # su espacio de procesos
    assert seen["mount"] != 0 and seen["umount"] != 0
    assert outside.strip() == "[False, False]"
    assert "attention.py" not in reference  # la copia del lab. 1, sin su respuesta


SLEEP = '[sys.executable, "-c", "import time; time.sleep(300)", "marca-ana"]'

LEAVE = """\
import os, socket, subprocess, sys
open("/tmp/trabajo/marca-ana", "w").write("ana")
try:
    open("/dev/shm/marca-ana", "w").write("ana")
    shm = "escrito"
except OSError:
    shm = "cerrado"
leader, follower = os.openpty()
listener = socket.socket(socket.AF_UNIX)
listener.bind("\\0marca-ana")
listener.listen()
subprocess.Popen(SLEEP, start_new_session=True)
print("DEJADO", shm, sorted(os.listdir("/dev/pts")))
""".replace("SLEEP", SLEEP)

LOOK = """\
import os, socket
reached = socket.socket(socket.AF_UNIX)
try:
    reached.connect("\\0marca-ana")
    connected = True
except OSError:
    connected = False
processes = [open(f"/proc/{p}/cmdline").read() for p in os.listdir("/proc") if p.isdigit()]
print(repr({
    "files": [p for p in ("/tmp/trabajo/marca-ana", "/dev/shm/marca-ana") if os.path.exists(p)],
    "shm": os.listdir("/dev/shm"),
    "pts": sorted(os.listdir("/dev/pts")),
    "socket": connected,
    "process": any("marca-ana" in line for line in processes),
    "runtime": os.path.exists(RUNTIME),
}))
"""


def _marked() -> list[int]:
    """Procesos de la máquina con ``marca-ana`` en su línea de órdenes."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and b"marca-ana" in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_two_kernels_alive_at_once_share_nothing(cell):
    with kernel(cell, "07_multi30k") as (ana, ana_stage):
        left = ana(LEAVE)
        assert "DEJADO cerrado" in left and left.count("'") > 2  # su terminal sí existe
        with kernel(cell) as (bea, _):
            look = LOOK.replace("RUNTIME", repr(str(_box(ana_stage).runtime)))
            seen = ast.literal_eval(bea(look))
        assert _marked()  # el proceso de ana sigue vivo mientras su núcleo vive
    assert seen == {
        "files": [],
        "shm": [],
        "pts": ["ptmx"],
        "socket": False,
        "process": False,
        "runtime": False,
    }
    deadline = time.monotonic() + 10
    while _marked() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _marked()  # murió con el núcleo, aunque se separó en otra sesión


def test_killing_the_process_jupyter_sees_kills_all_the_kernel_started(cell):
    with kernel(cell) as (run, stage):
        run(f"import subprocess, sys\nsubprocess.Popen({SLEEP})")
        assert _marked()
        stub = stage.warm.km.provisioner.process
        os.kill(stub.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while _marked() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _marked()


def test_a_box_with_a_folder_the_zygote_lacks_gets_its_own_bwrap(cell):
    lab = labs.get("01_atencion")
    with staging.staged(lab.release, lab, True, None, cell) as stage:
        box = _box(stage)
        kernel_command = ["python", "-m", "ipykernel_launcher", "-f", "c.json"]
        assert cell.serves(box, kernel_command)
        box.readable[box.WORK / "README.md"] = Path("/opt/fuera/README.md")  # ni /tmp ni compartido
        assert not cell.serves(box, kernel_command)
        del box.readable[box.WORK / "README.md"]
        box.readable[Path("/opt/datos")] = box.package  # un punto que el cigoto no creó
        assert not cell.serves(box, kernel_command)


def test_grade_takes_the_kernels_from_a_zygote_when_a_process_has_several(tmp_path, monkeypatch):
    commands = []

    class Recorded(pool.WarmKernel):
        def __init__(self, *args):
            super().__init__(*args)
            commands.append(self.km.provisioner.process.args)

    monkeypatch.setattr(pool, "WarmKernel", Recorded)
    lab = labs.get("01_atencion")
    tasks = []
    for student in ("ana", "bea"):
        path = tmp_path / "submitted" / student / lab.id / f"{lab.id}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nbformat.read(lab.source, 4), path)
        tasks.append(batch.Task(student, lab.id, path))
    done = batch.grade_series(tasks, tmp_path / "autograded", batch.Settings())
    assert [(r.error, r.auto_points) for r in done] == [("", done[0].auto_max)] * 2
    assert len(commands) == 2 and all(zygote.STUB in command for command in commands)
    commands.clear()
    alone = batch.grade_series(tasks[:1], tmp_path / "sola", batch.Settings())
    assert alone[0].auto_points == alone[0].auto_max
    assert len(commands) == 1 and zygote.STUB not in commands[0]  # un cigoto no compensa


def test_a_dead_zygote_leaves_each_kernel_its_own_bwrap():
    dead = zygote.Zygote(sandbox.kernel_uid())
    try:
        dead._process.kill()
        dead._process.wait()
        with kernel_from(dead) as (manager, _):
            assert zygote.STUB not in manager.provisioner.process.args
    finally:
        dead.close()


def test_a_zygote_whose_grading_process_is_gone_ends_by_itself():
    """Si el proceso muere antes de que bwrap atienda ``--die-with-parent``, nadie mata al
    cigoto: termina solo al cerrarse la tubería que solo ese proceso podía escribir."""
    orphan = zygote.Zygote(sandbox.kernel_uid())
    try:
        with open(os.devnull, "rb") as nothing:  # como al morir: la tubería queda sin escritor
            os.dup2(nothing.fileno(), orphan._lifeline)
        assert orphan._process.wait(timeout=30) == 0
    finally:
        orphan.close()


def test_a_virtual_environment_under_tmp_stays_visible_in_the_kernel(cell, monkeypatch):
    # En CI el entorno virtual vive en /tmp, que cada núcleo ve como un tmpfs nuevo.
    venv = Path("/tmp/entorno-de-prueba/venv")
    lab = labs.get("01_atencion")
    with staging.staged(lab.release, lab, True, None, cell) as stage:
        monkeypatch.setattr(sys, "prefix", str(venv))
        mounts = json.loads(_request(cell, _box(stage)))["mounts"]
    assert [str(venv), str(venv), False] in mounts


def _request(cell: zygote.Zygote, box: sandbox.Box) -> str:
    """La petición que el cigoto recibe para el núcleo de ``box``."""
    command = cell.command(box, ["python", "-m", "ipykernel_launcher"])
    return command[command.index(str(cell.socket)) + 1]  # después van los cgroups, si hay


def test_with_tmpdir_outside_tmp_kernels_still_come_from_the_zygote_and_see_no_copy(monkeypatch):
    # En un nodo de Slurm, $TMPDIR suele ser un disco local fuera de /tmp.
    base = Path(tempfile.mkdtemp(prefix="course-prueba-", dir="/var/tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(base))
    try:
        with scratch.run_folder() as folder:
            outside = zygote.Zygote(sandbox.kernel_uid())
            try:
                with kernel(outside) as (run, stage):  # nació del cigoto
                    copy = stage.root / "source" / stage.lab.id / f"{stage.lab.id}.ipynb"
                    assert copy.is_relative_to(folder) and copy.exists()
                    code = f"import os; print(repr((os.listdir({str(folder)!r}), "
                    seen = run(code + f"os.path.exists({str(copy)!r}))))")
            finally:
                outside.close()
        assert ast.literal_eval(seen) == ([], False)  # una carpeta vacía tapa la de verdad
    finally:
        shutil.rmtree(base, ignore_errors=True)
