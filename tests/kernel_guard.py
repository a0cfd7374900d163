"""Guardia del nivel rápido: una prueba sin la marca ``slow`` no inicia núcleos de Jupyter.

Un proceso vigía aparte sondea cada 0,1 s los descendientes de pytest (también los que
nacen dentro de bubblewrap o de un ``python -m course grade``) y avisa de cada núcleo
nuevo por una tubería; un núcleo tarda más que eso en arrancar. El vigía es un proceso y
no un hilo para no dejar hilos en el proceso de pytest, que hace ``fork`` al calificar.
"""

import os
import subprocess
import sys

import psutil
import pytest

KERNEL = "ipykernel_launcher"  # lo que lanza todo núcleo python3 (kernel.json de ipykernel)
WATCHER = """
import os, sys, time
import psutil

parent, seen = psutil.Process(int(sys.argv[1])), set()
pattern = os.environ["KERNEL_GUARD_PATTERN"]  # no en sys.argv: otro vigía lo tomaría por núcleo
while parent.is_running():
    try:
        children = parent.children(recursive=True)
    except psutil.Error:
        break
    for child in children:
        try:
            key, cmdline = (child.pid, child.create_time()), child.cmdline()
        except psutil.Error:
            continue
        if child.pid != os.getpid() and key not in seen and any(pattern in p for p in cmdline):
            seen.add(key)
            print(*key, flush=True)
    time.sleep(0.1)
"""


class KernelWatch:
    """Los núcleos de Jupyter que nacen bajo este pytest, por ``(pid, hora de inicio)``:
    procesos con ``pattern`` en su línea de órdenes."""

    def __init__(self, pattern: str = KERNEL) -> None:
        self._pattern = pattern
        self._process = subprocess.Popen(
            [sys.executable, "-c", WATCHER, str(os.getpid())],
            env={**os.environ, "KERNEL_GUARD_PATTERN": pattern},
            stdout=subprocess.PIPE,
            text=True,
        )
        os.set_blocking(self._process.stdout.fileno(), False)
        self._seen: set[tuple[int, float]] = set()

    def new_kernels(self) -> int:
        """Cuántos núcleos han nacido desde la última llamada: los que el vigía ya vio y
        los vivos ahora mismo (el vigía puede ir hasta 0,1 s por detrás)."""
        if self._process.poll() is not None:  # sin vigía, la guardia callaría: se para todo
            pytest.exit(f"El vigía de núcleos terminó (código {self._process.returncode}).", 3)
        found = _alive(self._pattern, exclude=self._process.pid)
        for line in self._process.stdout.readlines():
            pid, started = line.split()
            found.add((int(pid), float(started)))
        new = found - self._seen
        self._seen |= new
        return len(new)

    def close(self) -> None:
        self._process.kill()
        self._process.wait()
        self._process.stdout.close()


def _alive(pattern: str, exclude: int) -> set[tuple[int, float]]:
    kernels = set()
    for child in psutil.Process().children(recursive=True):
        try:
            if child.pid != exclude and any(pattern in part for part in child.cmdline()):
                kernels.add((child.pid, child.create_time()))
        except psutil.Error:
            continue
    return kernels
