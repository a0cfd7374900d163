"""Un cgroup por núcleo: la memoria, los procesos y la CPU de todo lo que lanza una entrega.

Los límites de :class:`course.grading.sandbox.Limits` son por proceso (``RLIMIT_AS``): un
cuaderno que lanza muchos procesos medianos, cada uno bajo el límite, suma más memoria que
la máquina, y el núcleo de Linux mata entonces a quien más ocupa, que puede ser el
calificador. Con un cgroup por entrega, todos los procesos del núcleo cuentan juntos:

- memoria (``Limits.memory`` para todos juntos) sin swap, procesos (``Limits.processes``)
  y una parte de CPU igual para cada núcleo, lance los procesos que lance;
- al pasarse de memoria, el núcleo de Linux mata dentro de ese cgroup (los procesos del
  núcleo llevan ``oom_score_adj`` 1000; el calificador y sus procesos de trabajo, -900:
  :func:`protect_grader`) y el cgroup lo cuenta (:meth:`Group.oom_kills`): la entrega
  queda con «error del calificador: sin memoria», nunca con un cero;
- el cgroup cuelga del cgroup del calificador (si toda la calificación tiene un límite,
  los núcleos caben dentro) y se borra al terminar la entrega; los que dejó una
  calificación muerta los borra la siguiente (:func:`sweep`).

Funciona con cgroups v1 (``/sys/fs/cgroup/memory``, ``pids``, ``cpu``) y v2 (una sola
jerarquía con esos controladores delegados) y solo como root. Sin ninguno de los dos
(:func:`available` dice por qué), cada núcleo conserva solo los límites por proceso.
"""

import contextlib
import functools
import itertools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

PREFIX = "course-nucleo-"  # course-nucleo-<pid del calificador>-<número>
LEAF = "course-calificador-"  # v2: course-calificador-<pid>, donde pasa el calificador
OOM_GRADER = -900  # oom_score_adj del calificador y de sus procesos de trabajo
OOM_KERNEL = 1000  # el de los procesos del núcleo: los primeros que mata el sistema
CPU = {1: ("cpu.shares", "1024"), 2: ("cpu.weight", "100")}  # la parte de CPU de cada núcleo
NEEDED = ("memory", "pids")
_numbers = itertools.count(1)  # el número de cada cgroup de este proceso
WITHOUT = (
    "sin cgroups, cada núcleo tiene solo límites por proceso (memoria virtual, procesos):"
    " un cuaderno que lance muchos procesos puede agotar la memoria de la máquina"
)
# Lo que hace el proceso que lanza bwrap antes de ser bwrap: oom_score_adj y el cgroup.
JOIN = (
    f'echo {OOM_KERNEL} > /proc/self/oom_score_adj || exit 125; while [ "$1" != -- ]; do'
    ' echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
)


@dataclass(frozen=True)
class Hierarchy:
    """Dónde está el cgroup del calificador: ``folders[controlador]`` (v2: la misma
    carpeta para todos)."""

    version: int
    folders: dict[str, Path]


def _mounts(mountinfo: str) -> list[tuple[str, str, str, set[str]]]:
    """``(punto de montaje, raíz, tipo, opciones)`` de cada montaje de cgroups."""
    found = []
    for line in mountinfo.splitlines():
        before, _, after = line.partition(" - ")
        fields, kind = before.split(), after.split()
        if len(fields) >= 5 and kind and kind[0] in ("cgroup", "cgroup2"):
            options = set(kind[2].split(",")) if len(kind) > 2 else set()
            found.append((fields[4], fields[3], kind[0], options))
    return found


def locate(mountinfo: str, membership: str) -> Hierarchy | None:
    """La jerarquía que se usa, de ``/proc/self/mountinfo`` y ``/proc/self/cgroup``: v1 si
    tiene memoria y procesos; si no, v2 si los tiene; si no, ``None``."""
    mounts = _mounts(mountinfo)
    paths = {}
    for line in membership.splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path
    v1 = {}
    for name in (*NEEDED, "cpu"):
        for point, root, kind, options in mounts:
            if kind == "cgroup" and name in options and name in paths:
                v1[name] = _inside(point, root, paths[name])
    if all(name in v1 for name in NEEDED):
        return Hierarchy(1, v1)
    for point, root, kind, _ in mounts:
        if kind == "cgroup2" and "" in paths:
            folder = _inside(point, root, paths[""])
            offered = _read(Path(point) / "cgroup.controllers").split()
            if all(name in offered for name in NEEDED):
                names = [*NEEDED, *(["cpu"] if "cpu" in offered else [])]
                return Hierarchy(2, dict.fromkeys(names, folder))
    return None


def _inside(point: str, root: str, path: str) -> Path:
    """La carpeta del cgroup ``path`` en un montaje de ``root`` en ``point``."""
    relative = os.path.relpath(path, root) if path.startswith(root) else path
    return Path(point, "" if relative == "." else relative.lstrip("/"))


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


@functools.cache
def hierarchy() -> Hierarchy | None:
    """La jerarquía de esta máquina para este proceso, si se puede usar."""
    if os.geteuid() != 0:
        return None
    found = locate(_read(Path("/proc/self/mountinfo")), _read(Path("/proc/self/cgroup")))
    if found is None or not all(os.access(f, os.W_OK) for f in found.folders.values()):
        return None
    if found.version == 2 and not _delegate(found):
        return None
    return found


def available() -> str:
    """``""`` si cada núcleo tendrá su cgroup; si no, el motivo en español."""
    if os.geteuid() != 0:
        return f"solo como root ({WITHOUT})"
    if hierarchy() is None:
        return (
            "no hay cgroups v1 ni v2 con memoria y procesos que este proceso pueda usar"
            f" ({WITHOUT})"
        )
    return ""


def _delegate(found: Hierarchy) -> bool:
    """v2: los controladores activos para los hijos del cgroup del calificador.

    Un cgroup v2 con procesos no puede repartir controladores entre sus hijos: si hace
    falta, el calificador pasa antes a un hijo suyo (``course-calificador-<pid>``).
    """
    folder = found.folders["memory"]
    wanted = " ".join(f"+{name}" for name in found.folders)
    control = folder / "cgroup.subtree_control"
    try:
        control.write_text(wanted)
        return True
    except OSError:
        pass
    try:
        leaf = folder / f"{LEAF}{os.getpid()}"
        leaf.mkdir(exist_ok=True)
        (leaf / "cgroup.procs").write_text(str(os.getpid()))
        control.write_text(wanted)
        return True
    except OSError:
        return False


@dataclass(frozen=True)
class Group:
    """El cgroup de una entrega (uno por controlador en v1)."""

    hierarchy: Hierarchy
    name: str

    @property
    def folders(self) -> list[Path]:
        return sorted({folder / self.name for folder in self.hierarchy.folders.values()})

    @property
    def procs(self) -> list[Path]:
        """Los archivos donde se escribe un pid para meterlo en el cgroup."""
        return [folder / "cgroup.procs" for folder in self.folders]

    def _file(self, controller: str, name: str) -> Path:
        return self.hierarchy.folders[controller] / self.name / name

    def wrap(self, command: list[str]) -> list[str]:
        """``command`` lanzado ya dentro del cgroup y con ``oom_score_adj`` del núcleo."""
        return ["/bin/sh", "-c", JOIN, "sh", *map(str, self.procs), "--", *command]

    def oom_kills(self) -> int:
        """Procesos de la entrega que el sistema mató por falta de memoria."""
        name = "memory.oom_control" if self.hierarchy.version == 1 else "memory.events"
        for line in _read(self._file("memory", name)).splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def remove(self) -> None:
        """Mata lo que quede dentro y borra el cgroup (no lanza)."""
        _remove(self.folders)


def create(memory: int, processes: int) -> Group | None:
    """Un cgroup nuevo con esos límites para una entrega; ``None`` si no hay cgroups."""
    found = hierarchy()
    if found is None:
        return None
    group = Group(found, f"{PREFIX}{os.getpid()}-{next(_numbers)}")
    try:
        for folder in group.folders:
            folder.mkdir()
        _limit(group, memory, processes)
    except OSError:
        group.remove()
        raise
    return group


def _limit(group: Group, memory: int, processes: int) -> None:
    if group.hierarchy.version == 1:
        group._file("memory", "memory.limit_in_bytes").write_text(str(memory))
        swap = group._file("memory", "memory.memsw.limit_in_bytes")
        if swap.exists():  # sin swapaccount, no hay swap que limitar por cgroup
            swap.write_text(str(memory))
        else:
            group._file("memory", "memory.swappiness").write_text("0")
    else:
        group._file("memory", "memory.max").write_text(str(memory))
        swap = group._file("memory", "memory.swap.max")
        if swap.exists():  # sin contabilidad de swap no existe, ni hay swap que limitar
            swap.write_text("0")
        group._file("memory", "memory.oom.group").write_text("1")
    group._file("pids", "pids.max").write_text(str(processes))
    if "cpu" in group.hierarchy.folders:
        name, value = CPU[group.hierarchy.version]
        group._file("cpu", name).write_text(value)


def _remove(folders: list[Path]) -> None:
    """Mata los procesos de ``folders`` hasta que quedan vacíos y las borra."""
    deadline = time.monotonic() + 10
    for folder in folders:
        while folder.exists():
            for pid in _read(folder / "cgroup.procs").split():
                with contextlib.suppress(OSError):
                    os.kill(int(pid), signal.SIGKILL)
            with contextlib.suppress(OSError):
                folder.rmdir()
            if folder.exists():
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)


def sweep() -> list[Path]:
    """Borra los cgroups de núcleos que dejó un calificador que ya no vive; los devuelve."""
    found = hierarchy()
    if found is None:
        return []
    stale = []
    for parent in sorted(set(found.folders.values())):
        for folder in sorted(parent.glob(f"{PREFIX}*")) + sorted(parent.glob(f"{LEAF}*")):
            pid = folder.name.removeprefix(PREFIX).removeprefix(LEAF).split("-")[0]
            if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
                stale.append(folder)
    _remove(stale)
    return stale


def protect_grader() -> bool:
    """El calificador y los procesos que lance después, lo último que mata el sistema.

    Bajar ``oom_score_adj`` de 0 pide ``CAP_SYS_RESOURCE`` (root la tiene; un contenedor
    puede quitársela): sin ella, ``False`` y el calificador queda en 0, por debajo de los
    núcleos (1000), que además tienen su cgroup.
    """
    try:
        Path("/proc/self/oom_score_adj").write_text(str(OOM_GRADER))
    except PermissionError:
        return False
    return True
