"""La carpeta temporal de una calificación: todo lo suyo dentro y nada que quede al morir.

Calificar deja copias delicadas en carpetas temporales (la de ``source/`` con cada
solución y prueba oculta, las entregas, los zip extraídos, el socket del cigoto). Durante
``grade`` todas nacen dentro de una sola carpeta ``course-calificacion-<máquina>-<pid>-*``
en ``$TMPDIR`` (o ``/tmp``), de modo 0700: nadie más que root la lee, ni siquiera si el
proceso muere sin limpiar.

- SIGTERM (``scancel``, Kubernetes al borrar el pod, ``kill``) sale por el camino normal
  (código 143): cada copia, núcleo y cgroup se destruye y la carpeta se borra.
- Un SIGKILL o un nodo que se apaga no dejan limpiar: la siguiente calificación en esa
  máquina borra las carpetas de los procesos que ya no viven (:func:`sweep`). Las de otra
  máquina (un ``$TMPDIR`` compartido) no se tocan.
"""

import contextlib
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
from pathlib import Path

PREFIX = "course-calificacion-"


def _own_prefix() -> str:
    return f"{PREFIX}{socket.gethostname()}-"


def process_prefix() -> str:
    """El comienzo del nombre de una carpeta de este proceso: :func:`sweep` la borra
    cuando el proceso ya no vive, esté en ``$TMPDIR`` o en ``/tmp``."""
    return f"{_own_prefix()}{os.getpid()}-"


@contextlib.contextmanager
def run_folder():
    """Mientras dura el bloque, ``tempfile`` crea todo dentro de una carpeta 0700 propia y
    SIGTERM sale limpiando (si es el hilo principal: solo ahí se atienden señales)."""
    main = threading.current_thread() is threading.main_thread()
    handler = signal.signal(signal.SIGTERM, _exit) if main else None
    folder = tempfile.mkdtemp(prefix=process_prefix())
    before = tempfile.tempdir
    tempfile.tempdir = folder
    try:
        yield Path(folder)
    finally:
        tempfile.tempdir = before
        shutil.rmtree(folder, ignore_errors=True)
        if main:
            signal.signal(signal.SIGTERM, handler)


def _exit(*_) -> None:
    sys.exit(128 + signal.SIGTERM)


def sweep(*bases: Path) -> list[Path]:
    """Borra las carpetas de calificaciones de esta máquina cuyo proceso ya no vive, en
    ``bases`` (si no se dan: ``$TMPDIR`` y ``/tmp``, donde va el socket de un cigoto
    cuando la ruta de ``$TMPDIR`` es larga)."""
    bases = bases or tuple({Path(tempfile.gettempdir()), Path("/tmp")})
    stale = []
    for folder in (found for base in bases for found in base.glob(f"{_own_prefix()}*")):
        pid = folder.name.removeprefix(_own_prefix()).split("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(folder, ignore_errors=True)
            stale.append(folder)
    return stale
