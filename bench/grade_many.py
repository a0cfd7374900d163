"""Calificación en lote con ``python -m course grade``: cuánto tarda y cuánto escala.

Mide, en un curso temporal (el repositorio no se toca):

1. todos los laboratorios de un estudiante (la solución de cada uno), con los procesos
   por omisión (uno por núcleo);
2. clases sintéticas de 2, 10 y 30 estudiantes del laboratorio 1 (mitad soluciones, mitad
   cuadernos sin tocar) con 1 y con 2 procesos: segundos por cuaderno (planos si la clase
   crece), los núcleos de CPU ocupados en la máquina (un proceso ya ocupa más de uno) y la
   aceleración, con la carga media de la máquina en cada medida;
3. lo que costaría, en cada entrega, arrancar un núcleo nuevo e importar torch en él
   (``jupyter_client``, mediana de 3): lo que ``grade`` se ahorra cuando los núcleos nacen
   del cigoto (``course.grading.zygote``), que ya importó torch.

Uso: python bench/grade_many.py [--students 2,10,30] [--skip-labs] [--interleave]
"""

import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from course import labs
from course.argparse_es import ArgumentParser
from course.grading import batch

REPO = Path(__file__).resolve().parents[1]


def _class(root: Path, submissions: dict[tuple[str, str], Path]) -> None:
    for (student, lab_id), notebook in submissions.items():
        folder = root / "submitted" / student / lab_id
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(notebook, folder / f"{lab_id}.ipynb")


def _busy_seconds() -> float:
    """Segundos de CPU ocupados en toda la máquina (``/proc/stat``), no solo por este
    proceso: el CPU de un núcleo aislado que se mata no vuelve en ``getrusage``. En una
    máquina en reposo es el de la calificación; con carga ajena, la incluye."""
    fields = [int(n) for n in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def timed_grading(submissions: dict[tuple[str, str], Path], jobs: int) -> tuple[float, list, float]:
    """Segundos de reloj, resultados y núcleos de CPU ocupados de media mientras tanto."""
    with tempfile.TemporaryDirectory(prefix="bench-grade-") as tmp:
        root = Path(tmp)
        _class(root, submissions)
        tasks = batch.find_submissions(root / "submitted")
        start, cpu = time.perf_counter(), _busy_seconds()
        done = batch.grade_all(tasks, root / "autograded", jobs, None, progress=False)
        elapsed, cpu = time.perf_counter() - start, _busy_seconds() - cpu
    errors = [r for r in done if r.error]
    assert not errors, errors[0].error
    return elapsed, done, cpu / elapsed


def kernel_and_torch_seconds(repeat: int = 3) -> tuple[float, float]:
    """Mediana de arrancar un núcleo y de ``import torch`` en él, fuera del aislamiento.

    Su salida va a ``/dev/null``, como la de los núcleos del calificador: los avisos de
    ``IPKernelApp`` (TCP sin cifrar) no se mezclan con el informe.
    """
    from jupyter_client.manager import start_new_kernel

    starts, imports = [], []
    for _ in range(repeat):
        begin = time.perf_counter()
        manager, client = start_new_kernel(
            kernel_name="python3", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        starts.append(time.perf_counter() - begin)
        begin = time.perf_counter()
        client.execute_interactive("import torch", timeout=60)
        imports.append(time.perf_counter() - begin)
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return statistics.median(starts), statistics.median(imports)


def class_row(lab: labs.Lab, students: int, interleave: bool) -> list[float]:
    """Mide una clase de ``students`` con 1 y 2 procesos; devuelve los segundos de cada
    entrega con 1 proceso."""
    synthetic = {
        (f"e{i:02d}", lab.id): (lab.source if i % 2 else lab.release) for i in range(students)
    }
    # Orden 1, 2, 2, 1: una carga ajena que sube o baja poco a poco afecta igual a ambos.
    seconds: dict[int, list[float]] = {1: [], 2: []}
    cores: dict[int, list[float]] = {1: [], 2: []}
    loads, per_submission = [], []
    for jobs in (1, 2, 2, 1) if interleave else (1, 2):
        loads.append(os.getloadavg()[0])
        elapsed, done, busy = timed_grading(synthetic, jobs)
        seconds[jobs].append(elapsed)
        cores[jobs].append(busy)
        if jobs == 1:
            per_submission += [r.seconds for r in done]
    loads.append(os.getloadavg()[0])
    one, two = statistics.mean(seconds[1]), statistics.mean(seconds[2])
    print(f"\n2. {students} estudiantes × {lab.id}, carga media {min(loads):.1f}–{max(loads):.1f}")
    for jobs, total in ((1, one), (2, two)):
        print(
            f"   {jobs} proceso{'s' if jobs > 1 else ' '}: {total:.1f} s"
            f" ({total / students:.2f} s por cuaderno;"
            f" {statistics.mean(cores[jobs]):.2f} núcleos de CPU ocupados en la máquina)"
        )
    # Un proceso ya ocupa más de un núcleo (el núcleo aislado siguiente arranca mientras
    # califica): dos no pueden ocupar más núcleos de los que hay.
    busy = statistics.mean(cores[1])
    ceiling = min(2 * busy, os.cpu_count() or 1) / busy
    print(f"   aceleración: {one / two:.2f}× (techo por CPU {ceiling:.2f}×)")
    return per_submission


def main() -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--students",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[2, 10, 30],
        metavar="N,M",
        help="tamaños de las clases sintéticas",
    )
    parser.add_argument("--skip-labs", action="store_true", help="sin la medida 1")
    parser.add_argument(
        "--interleave", action="store_true", help="mide en el orden 1, 2, 2, 1 procesos"
    )
    args = parser.parse_args()
    cores = os.cpu_count()
    print(f"máquina: {cores} núcleos, {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, carga media {os.getloadavg()[0]:.1f}")  # fmt: skip

    # Calienta la caché de cursos preparados (se paga una sola vez por laboratorio).
    from course import grading

    for lab in labs.available():
        grading.prepared_course(lab)

    if not args.skip_labs:
        one = {("ana", lab.id): lab.source for lab in labs.available()}
        seconds, done, _ = timed_grading(one, cores)
        print(f"\n1. un estudiante, {len(one)} laboratorios, {cores} procesos: {seconds:.1f} s")
        for result in done:
            print(f"   {result.lab}: {result.seconds:.1f} s en su proceso")

    lab = labs.get("01_atencion")
    per_submission = []
    for students in args.students:
        per_submission += class_row(lab, students, args.interleave)
    per = statistics.median(per_submission)

    start, torch_import = kernel_and_torch_seconds()
    print(f"\n3. por entrega (1 proceso): {per:.2f} s; un núcleo lanzado sin cigoto tarda "
          f"{start:.2f} s en arrancar y {torch_import:.2f} s en importar torch")  # fmt: skip


if __name__ == "__main__":
    main()
