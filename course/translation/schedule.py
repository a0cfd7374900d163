"""Planificador de la tasa de aprendizaje: calentamiento y coseno que también mira el reloj."""

import math
import time
from collections.abc import Callable

import torch
from torch.optim.lr_scheduler import LRScheduler

from course.reference.training import cosine_warmup_factor


class WarmupCosine(LRScheduler):
    """Calentamiento lineal y caída en coseno (``cosine_warmup_factor`` del laboratorio 6).

    Sin ``seconds`` da las mismas tasas que ``LambdaLR(optimizer,
    cosine_warmup_lambda(warmup, total_steps))``. Con ``seconds`` (el tope ``max_minutes``),
    el avance del coseno tras el calentamiento es el mayor entre los pasos dados y la
    fracción de tiempo gastada: la tasa llega a 0 al agotarse el tiempo aunque falten pasos
    (en una CPU lenta, o con otro programa ocupándola). El reloj es del planificador:
    empieza al crearlo y :meth:`restart` lo pone a cero al empezar a entrenar (también al
    reanudar, porque el tope cuenta el tiempo de cada sesión).

    Args:
        optimizer: el optimizador cuya tasa ``lr`` es la máxima.
        warmup: pasos de calentamiento.
        total_steps: paso en que la tasa llega a 0.
        seconds: tiempo en que la tasa llega a 0 aunque falten pasos; ``None``, sin tope.
        clock: reloj en segundos (``time.perf_counter``; las pruebas pasan uno falso).
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        warmup: int,
        total_steps: int,
        seconds: float | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.warmup, self.total_steps, self.seconds = warmup, total_steps, seconds
        self.clock = clock
        self.started = clock()
        super().__init__(optimizer)

    def restart(self) -> None:
        """El reloj vuelve a cero: empieza el tiempo del tope."""
        self.started = self.clock()

    def elapsed(self) -> float:
        """Segundos desde :meth:`restart` (o desde que se creó)."""
        return self.clock() - self.started

    def factor(self, step: int) -> float:
        """Multiplicador de la tasa máxima en la actualización ``step`` (desde 1)."""
        if self.seconds is not None and step > self.warmup:
            fraction = min(1.0, self.elapsed() / self.seconds)
            by_time = self.warmup + fraction * (self.total_steps - self.warmup)
            step = max(step, math.ceil(by_time))
        return cosine_warmup_factor(step, self.warmup, self.total_steps)

    def get_lr(self) -> list[float]:
        # last_epoch cuenta desde 0 (lo pone a 0 el paso inicial de LRScheduler)
        return [base * self.factor(self.last_epoch + 1) for base in self.base_lrs]

    def state_dict(self) -> dict:
        """Pasos y tasas, sin el reloj: al reanudar, el tiempo vuelve a contar desde cero."""
        return {k: v for k, v in super().state_dict().items() if k not in ("clock", "started")}
