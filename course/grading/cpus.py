"""Cuántas CPU puede usar de verdad esta calificación: el valor por omisión de ``--jobs``.

``os.cpu_count()`` cuenta las CPU de la máquina, no las que se le dieron al proceso: en una
tarea de Slurm con ``--cpus-per-task=1`` dice 2 y dos procesos de trabajo se estorban en una
sola CPU (19,1 s frente a 16,4 s con uno). Aquí se toma lo menor de:

- la afinidad del proceso (``os.sched_getaffinity``: el cpuset de Slurm o de Kubernetes);
- la cuota de CPU de su cgroup y de los de encima (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``
  entre ``cpu.cfs_period_us``), redondeada hacia arriba;
- ``SLURM_CPUS_PER_TASK``, si Slurm la puso.
"""

import math
import os
from pathlib import Path

CGROUPS = Path("/sys/fs/cgroup")
OWN = Path("/proc/self/cgroup")


def usable(environ=None, cgroups: Path = CGROUPS, own: Path = OWN, affinity=None) -> int:
    """Las CPU que puede usar este proceso (al menos 1)."""
    environ = os.environ if environ is None else environ
    affinity = os.sched_getaffinity(0) if affinity is None else affinity
    counts = [len(affinity) or os.cpu_count() or 1]
    quota = cgroup_quota(cgroups, own)
    if quota is not None:
        counts.append(math.ceil(quota))
    slurm = environ.get("SLURM_CPUS_PER_TASK", "")
    if slurm.isdigit() and int(slurm) > 0:
        counts.append(int(slurm))
    return max(1, min(counts))


def cgroup_quota(cgroups: Path = CGROUPS, own: Path = OWN) -> float | None:
    """La cuota de CPU más estrecha entre el cgroup de este proceso y los de encima, en
    CPU; ``None`` si no hay ninguna (o no se puede leer)."""
    try:
        lines = own.read_text().splitlines()
    except OSError:
        return None
    quotas = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            quotas += _along(cgroups, path, _v2)
        elif "cpu" in controllers.split(","):
            quotas += _along(cgroups / controllers, path, _v1)
            quotas += _along(cgroups / "cpu", path, _v1)  # cpu,cpuacct montado como «cpu»
    return min(quotas, default=None)


def _along(mount: Path, path: str, read) -> list[float]:
    """Las cuotas de ``path`` y de cada carpeta de encima, hasta la raíz del montaje."""
    folder = mount / path.strip("/")
    found = []
    while True:
        quota = read(folder)
        if quota is not None:
            found.append(quota)
        if folder == mount:
            return found
        folder = folder.parent


def _v2(folder: Path) -> float | None:
    try:
        limit, period = (folder / "cpu.max").read_text().split()
    except (OSError, ValueError):
        return None
    return None if limit == "max" else int(limit) / int(period)


def _v1(folder: Path) -> float | None:
    try:
        limit = int((folder / "cpu.cfs_quota_us").read_text())
        period = int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return None if limit <= 0 or period <= 0 else limit / period
