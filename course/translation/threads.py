"""Hilos de PyTorch para entrenar en CPU cuando otro programa ocupa núcleos.

PyTorch usa un hilo OpenMP por núcleo y, al final de cada operación, los hilos se esperan
dando vueltas (espera activa). Si otro programa ocupa un núcleo, el hilo que se queda sin
él llega tarde a cada cita y su compañero gasta el otro núcleo esperándolo: en 2 núcleos,
junto a un proceso ocupado, la receta ``rapida`` pasaba de ~8400 a ~600 *tokens*/s. Con un
hilo menos por núcleo ocupado no hay a quién esperar: un hilo solo da ~65 % de lo que dan
dos en una máquina tranquila, y lo sigue dando junto al otro programa.

Antes de cada época (con el proceso quieto) se mide cuántos núcleos ocupan los demás y se
ajusta ``torch.set_num_threads``; al terminar, se devuelven los hilos que había. No se toca
nada si quien ejecuta fijó ``OMP_NUM_THREADS``, en GPU ni con ``torchrun``.
"""

import contextlib
import os
import time
from collections.abc import Callable, Iterator

import torch

from course.text import number

SAMPLE_SECONDS = 0.2  # lo que tarda medir la ocupación en Linux


def busy_cores(interval: float = SAMPLE_SECONDS) -> float | None:
    """Núcleos que ocupan ahora otros programas (este proceso, quieto, no cuenta).

    En Linux, de ``/proc/stat`` durante ``interval`` segundos; si no hay ``/proc``, la
    carga media del último minuto (macOS); ``None`` si no se sabe (Windows).
    """
    try:
        before = _cpu_times()
        time.sleep(interval)
        after = _cpu_times()
    except OSError:
        return os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    total = after[0] - before[0]
    idle = after[1] - before[1]
    return (1 - idle / total) * (os.cpu_count() or 1) if total > 0 else None


def _cpu_times() -> tuple[int, int]:
    """(tiempo total, tiempo ocioso o esperando disco) de todas las CPU, en ticks."""
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(x) for x in f.readline().split()[1:9]]
    return sum(fields), fields[3] + fields[4]


def training_threads(threads: int, busy: float | None) -> int:
    """Hilos para entrenar: ``threads`` menos un hilo por núcleo ocupado, al menos 1."""
    if busy is None:
        return threads
    return max(1, min(threads, threads - round(busy)))


@contextlib.contextmanager
def beside_others(enabled: bool, say: Callable[[str], None]) -> Iterator[Callable[[], None]]:
    """Da una función que ajusta los hilos a los núcleos libres; al salir, deja los de antes.

    Con ``enabled`` falso o ``OMP_NUM_THREADS`` fijado, la función no hace nada.
    """
    initial = torch.get_num_threads()
    if not enabled or os.environ.get("OMP_NUM_THREADS"):
        yield lambda: None
        return

    def adjust() -> None:
        busy = busy_cores()
        threads = training_threads(initial, busy)
        if threads != torch.get_num_threads():
            torch.set_num_threads(threads)
            say(
                f"Otros programas ocupan ~{number(busy or 0.0, 1)} núcleos: se entrena con "
                f"{threads} hilo{'s' * (threads != 1)} de {initial}."
            )

    try:
        yield adjust
    finally:
        torch.set_num_threads(initial)
