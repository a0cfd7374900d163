"""JupyterHub como servicio: arrancar, parar y decir cómo está.

El hub corre como root (PAM y el cambio de usuario lo necesitan) con el Python que ejecuta
``aula``, en su carpeta ``hub/``: allí escribe su pid, su base de datos, el secreto de
las cookies y su registro (``hub.log``). Parar (SIGTERM) apaga también el proxy y los
servidores de los usuarios; lo demás se queda para el próximo arranque.
"""

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from course.aula import disks
from course.aula.state import Aula
from course.labs import CourseError

CONFIG = """\
# Escrito por «python -m course aula»: la configuración está en course/aula/hubconfig.py
from course.aula import hubconfig

hubconfig.apply(get_config(), {root!r})  # noqa: F821
"""
START_S = 90
STOP_S = 30
PROXY_PID = "proxy.pid"  # en la carpeta hub/, como lo configura hubconfig


def pid(aula: Aula) -> int | None:
    """El pid del hub si está en marcha."""
    return _running(aula.pid_file, b"jupyterhub")


def _running(pid_file: Path, program: bytes) -> int | None:
    """El pid escrito en ``pid_file`` si ese proceso vive y es ``program``."""
    try:
        number = int(pid_file.read_text().strip())
        cmdline = Path(f"/proc/{number}/cmdline").read_bytes()
    except (OSError, ValueError):
        return None
    return number if program in cmdline else None


def url(aula: Aula) -> str:
    settings = aula.load()
    return f"http://{settings.ip or '127.0.0.1'}:{settings.port}"


def start(aula: Aula) -> int:
    """Arranca el hub y espera a que responda; devuelve su pid."""
    running = pid(aula)
    if running:
        return running
    if not aula.proxy.exists():
        raise CourseError(f"Falta el proxy en {aula.proxy}: ejecuta «aula preparar».")
    disks.mount_all(aula, [student.user for student in aula.load().students], print)
    aula.hub.mkdir(mode=0o700, parents=True, exist_ok=True)
    config = aula.hub / "jupyterhub_config.py"
    config.write_text(CONFIG.format(root=str(aula.root)), encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    environment["PATH"] = f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"
    with open(aula.log, "a") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(config)],
            cwd=aula.hub, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, env=environment,
        )  # fmt: skip
    _wait_up(aula, process)
    return process.pid


def _wait_up(aula: Aula, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_S
    address = f"{url(aula)}/hub/api/"
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise CourseError(f"El hub no arrancó; su registro:\n{_tail(aula.log)}")
        try:
            with urllib.request.urlopen(address, timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise CourseError(f"El hub no respondió en {START_S} s; su registro:\n{_tail(aula.log)}")


def stop(aula: Aula) -> bool:
    """Para el hub (y con él el proxy y los servidores); ¿estaba en marcha?

    El hub apaga su proxy al terminar, pero no siempre llega a hacerlo (un SIGKILL tras
    ``STOP_S``, un hub que murió antes): el proxy que siga vivo se para por su pid.
    """
    number = pid(aula)
    if number is not None:
        _terminate(number)
        aula.pid_file.unlink(missing_ok=True)
    proxy = _running(aula.hub / PROXY_PID, b"configurable-http-proxy")
    if proxy is not None:
        _terminate(proxy)
    return number is not None


def _terminate(number: int) -> None:
    """SIGTERM y, si no ha terminado en ``STOP_S``, SIGKILL."""
    os.kill(number, signal.SIGTERM)
    deadline = time.monotonic() + STOP_S
    while _alive(number) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(number):
        os.kill(number, signal.SIGKILL)


def _alive(number: int) -> bool:
    """¿Sigue vivo? (si es hijo de este proceso, se recoge al terminar)."""
    try:
        os.waitpid(number, os.WNOHANG)
    except ChildProcessError:
        pass
    try:
        return b"Z" not in Path(f"/proc/{number}/stat").read_bytes().split(b") ")[1][:1]
    except OSError:
        return False


def _tail(path: Path, size: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-size:]
    except OSError:
        return "(sin registro)"
