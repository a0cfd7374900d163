"""Límites del lado del calificador: tiempo, memoria y carpetas temporales de las pruebas.

Las celdas de prueba se ejecutan en el proceso de calificación (``execute``), con datos
que controla el estudiante: un punto de control que nunca emite ``<eos>`` con un
``max_len`` enorme tendría ocupado al calificador sin fin, y la clase se quedaría sin
notas. Por eso:

- :class:`GraderClock`: cada celda de prueba tiene el tiempo de una celda (``SIGALRM``); el
  tiempo que espera al núcleo no cuenta (esas esperas tienen su propio tope);
- :func:`memory_cap`: un tope de memoria virtual (``RLIMIT_AS``) para el proceso de
  calificación mientras califica un cuaderno;
- :func:`private_tempdir`: lo que las pruebas crean con ``tempfile`` va a una carpeta del
  cuaderno que se borra al terminar.
"""

import contextlib
import os
import resource
import shutil
import signal
import tempfile
import threading
from pathlib import Path


class GraderTimeout(BaseException):
    """La prueba pasó de su tiempo en el calificador.

    Hereda de ``BaseException`` para que un ``except Exception`` de la prueba no la trague.
    """


class GraderClock:
    """Tiempo de las celdas de prueba en el calificador, con ``setitimer`` (hilo principal).

    Fuera del hilo principal no hay señales: el reloj no limita (la puerta de nbgrader
    califica siempre en un proceso propio, en su hilo principal).
    """

    def __init__(self):
        self._left = 0.0
        self._armed = False

    @property
    def usable(self) -> bool:
        return threading.current_thread() is threading.main_thread()

    @contextlib.contextmanager
    def limit(self, seconds: float):
        """Lanza :class:`GraderTimeout` dentro del bloque si pasan ``seconds`` s."""
        if not self.usable or seconds <= 0:
            yield
            return
        previous = signal.signal(signal.SIGALRM, _expire)
        self._armed = True
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self._armed = False
            signal.signal(signal.SIGALRM, previous)

    @contextlib.contextmanager
    def paused(self):
        """Detiene el reloj mientras se espera al núcleo (esa espera ya tiene su tope)."""
        if not self._armed:
            yield
            return
        left, _ = signal.setitimer(signal.ITIMER_REAL, 0)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001))


def _expire(signum, frame):
    raise GraderTimeout()


def address_space() -> int:
    """Bytes de memoria virtual que ocupa ahora este proceso."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


@contextlib.contextmanager
def memory_cap(extra: int):
    """Como mucho ``extra`` bytes más de memoria virtual que ahora, dentro del bloque.

    Solo se baja el límite blando, que se restaura al salir. Con ``extra <= 0``, o sin
    ``/proc`` (fuera de Linux, donde tampoco hay bubblewrap), no se toca.
    """
    try:
        used = address_space()
    except OSError:
        used = None
    if extra <= 0 or used is None:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = used + extra
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    if soft != resource.RLIM_INFINITY:
        cap = min(cap, soft)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@contextlib.contextmanager
def private_tempdir(folder: Path):
    """``tempfile`` crea dentro de ``folder`` mientras dura el bloque; después se borra."""
    folder.mkdir(parents=True, exist_ok=True)
    saved = tempfile.tempdir
    tempfile.tempdir = str(folder)
    try:
        yield folder
    finally:
        tempfile.tempdir = saved
        shutil.rmtree(folder, ignore_errors=True)
