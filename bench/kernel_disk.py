"""Lo que cuesta por núcleo el disco con tope y el filtro sin llaveros.

- montar y desmontar el ``tmpfs`` de una entrega (``course.grading.disk``, como root);
- arrancar un proceso a través del paso que instala el filtro seccomp
  (``course.grading.seccomp.STUB``) frente a arrancarlo directamente: lo que se añade a
  cada núcleo lanzado con su propio bwrap (con el cigoto el filtro es una llamada).

Uso: python bench/kernel_disk.py [--veces N]
"""

import os
import statistics
import subprocess
import sys
import time

from course.argparse_es import ArgumentParser
from course.grading import disk, seccomp
from course.grading.sandbox import Limits


def _median_ms(action, times: int) -> float:
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        action()
        spent.append(time.perf_counter() - start)
    return statistics.median(spent) * 1000


def _mount_and_remove() -> None:
    with disk.disk(Limits().scratch):
        pass


def main() -> None:
    parser = ArgumentParser(description="Coste por núcleo del disco con tope y del filtro.")
    parser.add_argument("--veces", type=int, default=30, help="repeticiones de cada medida")
    times = parser.parse_args().veces
    print(f"carga de la máquina: {os.getloadavg()[0]:.1f}; {times} repeticiones, mediana")
    if disk.available():
        print(f"montar y borrar un disco: {_median_ms(_mount_and_remove, times):.1f} ms")
    else:
        print("montar un disco: necesita root (sin root no hay discos)")
    program = [sys.executable, "-I", "-S", "-c", "pass"]
    direct = _median_ms(lambda: subprocess.run(program, check=True), times)
    filtered = _median_ms(lambda: subprocess.run(seccomp.command(program), check=True), times)
    print(f"arrancar Python: {direct:.1f} ms; con el filtro: {filtered:.1f} ms")


if __name__ == "__main__":
    main()
