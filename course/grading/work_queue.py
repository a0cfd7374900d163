"""La cola común de ``grade``: qué entrega toma cada proceso de trabajo, y cuándo.

Cada proceso califica una entrega y, al empezarla, ya toma la siguiente, para que su
núcleo aislado arranque mientras tanto (``course.grading.pool``). Tomar la siguiente tan
pronto tiene un coste: el proceso que empieza un lab. 7 se queda también con la que toma,
y si es otra larga, el otro proceso acaba mucho antes y espera. Por eso la cola va de la
entrega más cara a la más barata (:func:`queue_order`) y cada proceso toma por delante
(la más cara que queda) si es el que antes quedará libre, o por detrás (la más barata)
si no: con una lista de duraciones esperadas, el reparto de mayor a menor de siempre.

Las duraciones solo deciden el orden; el resultado de cada entrega no depende de él. El
estado vive en memoria compartida: si un proceso muere, el principal sabe qué entregas
tenía tomadas (:meth:`WorkQueue.unfinished`).
"""

import multiprocessing
import time

# Segundos de calificar la solución con su núcleo ya arrancado (2 procesos, CPU-2 con
# carga ≈ 4, redondeados de dos medidas del 26-11-2026): importa el orden y la proporción,
# no la cifra. Un laboratorio que no está aquí cuenta como el más caro.
EXPECTED_SECONDS = {
    "07_multi30k": 13.0,
    "05_capas": 6.0,
    "06_transformer": 5.5,
    "02_normalizacion": 5.0,
    "04_multicabeza": 3.0,
    "03_posicional": 3.0,
    "01_atencion": 1.5,
}
TAKEN, FINISHED = 1, 2  # estado de cada entrega (0: nadie la ha tomado)


def expected_seconds(task) -> float:
    """Lo que se espera que tarde ``task`` (una ``batch.Task``); sin cuaderno, nada: solo
    se anota su error."""
    if task.notebook is None:
        return 0.0
    return EXPECTED_SECONDS.get(task.lab, max(EXPECTED_SECONDS.values()))


def queue_order(tasks: list) -> list[int]:
    """Posiciones de ``tasks`` de la más cara a la más barata; entre iguales, su orden."""
    return sorted(range(len(tasks)), key=lambda i: -expected_seconds(tasks[i]))


class WorkQueue:
    """``tasks`` (ya en :func:`queue_order`) para ``workers`` procesos.

    El proceso ``rank`` empieza por la entrega ``rank``; después, cada ``take()`` de su
    :meth:`taker` le da la siguiente, por delante o por detrás según quién quede libre
    antes (lo que se espera que tarde lo que ya tiene cada uno, en ``free``).
    """

    def __init__(self, tasks: list, workers: int):
        self.tasks, self.workers = tasks, min(workers, len(tasks))
        self.costs = [expected_seconds(task) for task in tasks]
        self._lock = multiprocessing.Lock()
        self._front = multiprocessing.RawValue("i", self.workers)
        self._back = multiprocessing.RawValue("i", len(tasks))
        now = time.monotonic()
        self._free = multiprocessing.RawArray("d", [now + c for c in self.costs[: self.workers]])
        self.state = multiprocessing.RawArray("b", len(tasks))

    def taker(self, rank: int):
        """``take()`` del proceso ``rank``: ``(posición, tarea)`` o ``None`` si no quedan.

        Cada llamada después de la primera ocurre cuando el proceso empieza la que tomó
        en la anterior.
        """
        started: list[int] = []

        def take() -> tuple[int, object] | None:
            with self._lock:
                index = self._next(rank, started[-1]) if started else rank
                if index is None or index >= len(self.tasks):
                    return None
                self.state[index] = TAKEN
                started.append(index)
            return index, self.tasks[index]

        return take

    def _next(self, rank: int, starting: int) -> int | None:
        """La siguiente para ``rank``, que empieza ahora ``starting``; con el candado."""
        if self._front.value >= self._back.value:
            return None
        self._free[rank] = time.monotonic() + self.costs[starting]
        others = [self._free[r] for r in range(self.workers) if r != rank]
        if not others or self._free[rank] <= min(others):
            index = self._front.value
            self._front.value += 1
        else:
            self._back.value -= 1
            index = self._back.value
        self._free[rank] += self.costs[index]
        return index

    def finished(self, index: int) -> None:
        self.state[index] = FINISHED

    def done(self) -> set[int]:
        return {i for i, state in enumerate(self.state) if state == FINISHED}

    def unfinished(self) -> tuple[list[int], list[int]]:
        """Las tomadas sin terminar y las que nadie tomó."""
        held = [i for i, state in enumerate(self.state) if state == TAKEN]
        return held, [i for i, state in enumerate(self.state) if state == 0]
