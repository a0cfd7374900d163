"""La carpeta temporal de ``grade`` (``course.grading.scratch``): 0700, todo dentro, se
borra al salir y con SIGTERM, y lo que dejó un proceso muerto lo borra el siguiente."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from course.grading import scratch

HOLD = """
import sys, tempfile, time
from course.grading import scratch
with scratch.run_folder() as folder:
    copy = tempfile.mkdtemp(prefix="course-check-")
    open(copy + "/solucion.py", "w").write("secreto")
    print(folder, flush=True)
    time.sleep(60)
"""


def test_everything_temporary_goes_inside_a_private_folder_that_is_removed():
    with scratch.run_folder() as folder:
        assert folder.stat().st_mode & 0o777 == 0o700
        assert socket.gethostname() in folder.name and str(os.getpid()) in folder.name
        inner = tempfile.mkdtemp(prefix="course-entrega-")
        assert os.path.dirname(inner) == str(folder)
    assert not folder.exists()
    assert tempfile.gettempdir() != str(folder)


def test_sigterm_cleans_up_and_exits_143(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD], stdout=subprocess.PIPE, text=True, env=env
    )
    folder = process.stdout.readline().strip()
    assert folder.startswith(str(tmp_path))
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 143
    assert list(tmp_path.iterdir()) == []


def test_the_next_run_removes_what_a_killed_one_left(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD], stdout=subprocess.PIPE, text=True, env=env
    )
    folder = process.stdout.readline().strip()
    process.kill()
    process.wait(timeout=30)
    other_host = tmp_path / f"{scratch.PREFIX}otra-maquina-1-abc"
    alive = tmp_path / f"{scratch.PREFIX}{socket.gethostname()}-{os.getpid()}-abc"
    other_host.mkdir()
    alive.mkdir()
    assert os.path.isdir(folder)
    assert [str(p) for p in scratch.sweep(tmp_path)] == [folder]
    assert sorted(tmp_path.iterdir()) == sorted([other_host, alive])


def test_the_socket_folder_of_a_dead_zygote_in_tmp_is_removed_too(tmp_path):
    """Con un ``$TMPDIR`` de ruta larga, el socket del cigoto va a ``/tmp``: si su proceso
    muere con SIGKILL, la orden siguiente también la borra de ahí."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait(timeout=30)
    dead = f"{scratch.PREFIX}{socket.gethostname()}-{process.pid}-cigoto-"
    folder = tempfile.mkdtemp(prefix=dead, dir="/tmp")
    before = tempfile.tempdir
    tempfile.tempdir = str(tmp_path)
    try:
        assert Path(folder) in scratch.sweep()  # y las de otros procesos muertos
    finally:
        tempfile.tempdir = before
        shutil.rmtree(folder, ignore_errors=True)
    assert not os.path.exists(folder)
