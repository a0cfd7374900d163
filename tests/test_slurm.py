"""La clase calificada por un Slurm de verdad de un solo nodo (``deploy/slurm/``).

Doce entregas del laboratorio 1 (la solución, el cuaderno en blanco y una rota) se
califican primero directamente (``grade``) y después como array de 4 tareas con
``fragmento.sbatch``; una tarea se cancela (``scancel``) a mitad, la unión (``afterany``)
sale con 3 y la lista; se repite esa tarea y la unión, que sale con 1 (la entrega rota), y
las notas son las mismas que las de la calificación directa.

Necesita root y ``apt-get install slurm-wlm munge`` (``.ci/run`` los instala); los
demonios (munged con su propia llave, slurmctld, slurmd) se arrancan aquí con su
configuración en una carpeta temporal y puertos propios, y se paran al final aunque la
prueba falle; los que dejó una ejecución muerta se paran antes de empezar. Donde Slurm no
puede arrancar, la prueba se omite con una línea en español; con ``CI=true``, falla.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import classroom
import pytest

from course import labs
from course.commands import export, grade
from course.grading import results, scratch

LAB = labs.get("01_atencion")
SLURM = labs.REPO / "deploy" / "slurm"
BROKEN = "est05"
HERE = "course-slurm-"  # + el pid de pytest
DAEMONS = ("/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd")
CONF = """ClusterName=prueba
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={here}/munge/munge.sock
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SlurmctldPort=26817
SlurmdPort=26818
SrunPortRange=61001-61100
StateSaveLocation={here}/state
SlurmdSpoolDir={here}/spool
SlurmctldPidFile={here}/slurmctld.pid
SlurmdPidFile={here}/slurmd.pid
SlurmctldLogFile={here}/slurmctld.log
SlurmdLogFile={here}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=3600
ReturnToService=2
MpiDefault=none
NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=20000 State=UNKNOWN
PartitionName=prueba Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""
# `python -m course …` con el curso de la prueba en argv[1] (el paquete es el de siempre).
CLI = """import functools, sys
from pathlib import Path
from course import cli
from course.commands import grade
grade.run = functools.partial(grade.run, root=Path(sys.argv[1]))
sys.exit(cli.main(sys.argv[2:]))
"""


def _skip(reason: str):
    line = f"Slurm no puede arrancar aquí ({reason}): apt-get install slurm-wlm munge"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI necesita Slurm. {line}", pytrace=False)
    pytest.skip(line)


@pytest.fixture(scope="module")
def cluster():
    """Un Slurm de un nodo; devuelve el entorno para sbatch y las demás órdenes."""
    if os.geteuid() != 0:
        _skip("hace falta root")
    missing = [d for d in DAEMONS if not Path(d).exists()] + [
        name for name in ("mungekey", "sbatch", "squeue", "scontrol", "scancel")
        if not shutil.which(name)
    ]  # fmt: skip
    if missing:
        _skip("falta " + ", ".join(missing))
    base = Path(tempfile.gettempdir())
    for left in base.glob(f"{HERE}*"):
        if not Path(f"/proc/{left.name.removeprefix(HERE).split('-')[0]}").exists():
            _stop(left, {})  # de una ejecución que murió sin parar sus demonios
    here = Path(tempfile.mkdtemp(prefix=f"{HERE}{os.getpid()}-"))  # munged (no root) la atraviesa
    here.chmod(0o711)
    for folder in ("munge", "state", "spool"):
        (here / folder).mkdir()
    munge = here / "munge"
    (here / "slurm.conf").write_text(CONF.format(here=here, cpus=os.cpu_count()))
    env = {**os.environ, "SLURM_CONF": str(here / "slurm.conf")}
    started = [
        ["mungekey", "--create", f"--keyfile={munge}/munge.key"],
        ["chown", "-R", "munge:munge", str(munge)],
        ["runuser", "-u", "munge", "--", DAEMONS[0], f"--socket={munge}/munge.sock",
         f"--key-file={munge}/munge.key", f"--pid-file={munge}/munged.pid",
         f"--log-file={munge}/munged.log", f"--seed-file={munge}/munge.seed"],
        [DAEMONS[1], "-f", env["SLURM_CONF"]],
        [DAEMONS[2], "-f", env["SLURM_CONF"]],
    ]  # fmt: skip
    try:
        for command in started:
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            if done.returncode:
                _skip(f"falla «{Path(command[0]).name}»: {done.stderr.strip()[-300:]}")
        deadline = time.monotonic() + 60
        while "idle" not in _out(["sinfo", "-h", "-o", "%T"], env):
            if time.monotonic() > deadline:
                _skip("el nodo no queda libre en 60 s")
            time.sleep(1)
        yield env
    finally:
        _stop(here, env)


def _stop(here: Path, env: dict) -> None:
    """Cancela los trabajos que queden, para los demonios de ``here`` y la borra."""
    if env:
        subprocess.run(["scancel", "--partition=prueba"], env=env, capture_output=True)
        deadline = time.monotonic() + 30
        while _out(["squeue", "-h"], env).strip() and time.monotonic() < deadline:
            time.sleep(1)
    for pid_file in (here / "slurmd.pid", here / "slurmctld.pid", here / "munge" / "munged.pid"):
        pid = pid_file.read_text().strip() if pid_file.exists() else ""
        try:  # solo si es de verdad un demonio de esta carpeta
            if pid.isdigit() and str(here) in Path(f"/proc/{pid}/cmdline").read_text():
                os.kill(int(pid), signal.SIGTERM)
                _wait_gone(int(pid))
        except OSError:
            pass
    shutil.rmtree(here, ignore_errors=True)


def _wait_gone(pid: int) -> None:
    """Espera a que ``pid`` salga; a los 10 s, SIGKILL (y a los 15, sigue: un zombi)."""
    start = time.monotonic()
    while Path(f"/proc/{pid}").exists() and time.monotonic() < start + 15:
        if time.monotonic() > start + 10:
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)


def _out(command: list[str], env: dict) -> str:
    return subprocess.run(command, env=env, capture_output=True, text=True).stdout


def _make_class(root: Path) -> None:
    for number in range(12):
        student = f"est{number:02d}"
        notebook = classroom.submission(root, student, LAB)
        text = (LAB.source if number % 2 == 0 else LAB.release).read_text()
        notebook.write_text('{"cells": [' if student == BROKEN else text)


def _course_env(root: Path, env: dict) -> dict:
    """VENV con un «python» que corre ``python -m course`` sobre el curso ``root``."""
    shim = root / "venv" / "bin"
    shim.mkdir(parents=True)
    (root / "cli.py").write_text(CLI)
    (shim / "python").write_text(
        f'#!/bin/bash\nshift 2\nexec {sys.executable} {root / "cli.py"} {root} "$@"\n'
    )
    (shim / "python").chmod(0o755)
    (root / "tmp").mkdir()
    return {
        **env, "VENV": str(root / "venv"), "FRAGMENTOS": "4", "TMPDIR": str(root / "tmp"),
        "PATH": f"{Path(sys.executable).parent}:{env['PATH']}",
    }  # fmt: skip


def _sbatch(env: dict, root: Path, *args: str) -> str:
    small = ["--cpus-per-task=1", f"--chdir={root}", "--export=ALL"]
    command = ["sbatch", "--parsable", *small, *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().split(";")[0]


def _job(job: str, env: dict) -> dict[str, str]:
    text = _out(["scontrol", "show", "job", job], env)
    return dict(re.findall(r"(\w+)=(\S+)", text))


def _wait(job: str, env: dict, timeout: float = 900) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    while True:
        info = _job(job, env)
        if info.get("JobState") in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"):
            return info
        assert time.monotonic() < deadline, f"el trabajo {job} no terminó: {info}"
        time.sleep(1)


def _grading(tmp: Path, task: int) -> bool:
    """¿Está la tarea ``task`` del array dentro de ``grade``, con su carpeta temporal?"""
    for folder in tmp.glob(f"{scratch.PREFIX}*"):
        pid = folder.name.rsplit("-", 2)[1]  # course-calificacion-<máquina>-<pid>-<azar>
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"SLURM_ARRAY_TASK_ID={task}".encode() in environ:
            return True
    return False


def _scores(root: Path) -> dict:
    book = {(r["student_id"], r["assignment"]): r["score"] for r in export.rows(root)}
    cells = {
        (r.student, r.lab): (r.error != "", [(c.grade_id, c.points) for c in r.cells])
        for r in results.read_all(root / "autograded")
    }
    return {"gradebook": book, "cells": cells}


@pytest.mark.slow
def test_a_job_array_with_a_cancelled_task_grades_like_a_direct_run(cluster, tmp_path):
    direct, array = tmp_path / "directa", tmp_path / "array"
    for root in (direct, array):
        _make_class(root)
    assert grade.run(root=direct, jobs=2, progress=False) == 1  # est05: cuaderno roto

    env = _course_env(array, cluster)
    (array / "logs").mkdir()
    tasks = _sbatch(env, array, "--array=1-4", str(SLURM / "fragmento.sbatch"))
    merge = _sbatch(env, array, f"--dependency=afterany:{tasks}", str(SLURM / "unir.sbatch"))
    deadline = time.monotonic() + 300
    while not _grading(array / "tmp", 2):  # antes, scancel podría llegar antes que la tarea
        assert time.monotonic() < deadline, "la tarea 2 no empezó a calificar"
        time.sleep(0.5)
    subprocess.run(["scancel", f"{tasks}_2"], env=env, check=True)
    first = _wait(merge, env)
    log = (array / "logs" / f"calificar-{merge}-union.out").read_text()
    assert first["ExitCode"] == "3:0", log
    assert "faltan" in log
    assert list((array / "tmp").glob(f"{scratch.PREFIX}*")) == []  # scancel no dejó nada

    again = _sbatch(env, array, "--array=2", str(SLURM / "fragmento.sbatch"))
    merge = _sbatch(env, array, f"--dependency=afterany:{again}", str(SLURM / "unir.sbatch"))
    second = _wait(merge, env)
    log = (array / "logs" / f"calificar-{merge}-union.out").read_text()
    assert second["ExitCode"] == "1:0", log
    assert f"✘ {BROKEN} · {LAB.id}" in log and "faltan" not in log
    for number in range(1, 5):  # una entrega rota no hace fallar su tarea
        assert _job(f"{tasks}_{number}", env)["JobState"] in ("COMPLETED", "CANCELLED")
    assert _scores(array) == _scores(direct)
    assert list((array / "tmp").iterdir()) == []
