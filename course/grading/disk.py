"""El disco de un núcleo: un ``tmpfs`` con tope para todo lo que puede escribir.

Un núcleo escribe en su ``/tmp`` (con su carpeta de trabajo, que es su ``$HOME``) y en su
carpeta de sockets (ZMQ crea allí los suyos, y el calificador se conecta a ellos). Esa
carpeta estaba en el disco del calificador y el núcleo podía escribir en ella: una entrega
escribió 3 GiB, más allá del GiB de su ``/tmp`` (el tope de archivo es por archivo).

Como root, cada entrega tiene un :class:`Disk`: un ``tmpfs`` de ``Limits.scratch`` bytes
(y :data:`INODES` archivos) montado en ``/tmp/course-discos/<dueño>-<azar>``, con la
carpeta de sockets (``nucleo/``) y el ``/tmp`` del núcleo (``tmp-*/``, uno nuevo en cada
arranque) dentro: todo lo que escribe cuenta contra el mismo tope. Se desmonta y se borra al terminar la entrega.

``/tmp/course-discos`` es un montaje compartido (``MS_SHARED``): el cigoto, que vive en su
propio espacio de montajes desde antes, ve así cada disco nuevo (``zygote_main``).

Si una calificación muere sin desmontar (``SIGKILL``, un corte), el dueño del nombre (el
pid y la hora a la que nació) ya no existe: la siguiente calificación desmonta y borra
esos discos y lo dice (:func:`sweep`, antes de montar cada disco nuevo). Sin root no hay discos: el ``/tmp`` del núcleo es
el ``tmpfs`` con tope de bwrap y la carpeta de sockets queda en el ``/tmp`` de la máquina.
"""

import contextlib
import ctypes
import fcntl
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from course.labs import CourseError

BASE = Path("/tmp/course-discos")
INODES = 100_000  # archivos y carpetas por disco: cada uno ocupa memoria del kernel
MS_NOSUID, MS_NODEV, MS_BIND, MS_SHARED = 2, 4, 4096, 1 << 20
MNT_DETACH = 2
WITHOUT = (
    "su /tmp tiene tope, pero su carpeta de sockets queda en el disco de la máquina y el"
    " núcleo puede escribir en ella"
)

libc = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class Disk:
    """El ``tmpfs`` de una entrega: ``runtime`` (sockets) y un ``/tmp`` por arranque."""

    folder: Path

    @property
    def runtime(self) -> Path:
        return self.folder / "nucleo"

    def reset(self) -> None:
        """Antes de cada arranque: fuera lo que dejó el núcleo anterior, ya muerto (sus
        sockets, lo que escribió, su ``/tmp``). Un núcleo que llenó el disco y murió no
        deja sin sitio al siguiente, y el reiniciado no ve nada del anterior: ni archivos
        ni enlaces que desviarían los puntos de montaje de su caja."""
        for entry in [*self.runtime.iterdir(), *self.folder.glob("tmp-*")]:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)

    def new_tmp(self) -> Path:
        """Un ``/tmp`` vacío para este arranque del núcleo (después de :meth:`reset`)."""
        fresh = Path(tempfile.mkdtemp(prefix="tmp-", dir=self.folder))
        fresh.chmod(0o1777)
        return fresh


def available() -> bool:
    """Solo root puede montar un ``tmpfs`` por entrega."""
    return os.geteuid() == 0


@contextlib.contextmanager
def disk(size: int) -> Iterator[Disk | None]:
    """Un :class:`Disk` de ``size`` bytes mientras dura el ``with``; ``None`` sin root o si
    no se puede montar (con un aviso)."""
    folder = _mounted(size) if available() else None
    try:
        yield Disk(folder) if folder is not None else None
    finally:
        if folder is not None:
            _remove(folder)


def _mounted(size: int) -> Path | None:
    """Monta un disco nuevo de ``size`` bytes con su carpeta de sockets."""
    try:
        base = shared_base()
        sweep()
        folder = Path(tempfile.mkdtemp(prefix=f"{_owner(os.getpid())}-", dir=base))
    except OSError as error:
        print(f"aviso: el núcleo no tendrá disco propio ({error}): {WITHOUT}", file=sys.stderr)
        return None
    try:
        options = f"size={size},nr_inodes={INODES},mode=0755"
        mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, options)
        Disk(folder).runtime.mkdir()
    except OSError as error:
        _remove(folder)
        print(f"aviso: el núcleo no tendrá disco propio ({error}): {WITHOUT}", file=sys.stderr)
        return None
    return folder


def shared_base() -> Path:
    """:data:`BASE`, de root y compartida (los discos nuevos llegan al cigoto)."""
    try:
        BASE.mkdir(mode=0o700)
    except FileExistsError:
        info = BASE.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
            raise CourseError(
                f"«{BASE}» existe y no es una carpeta de root solo para root: alguien la creó"
                " antes que el calificador; bórrala y vuelve a calificar."
            ) from None
    with open("/proc/self/mountinfo") as mounts:  # ismount no ve un bind del mismo disco
        mounted = any(line.split()[4] == str(BASE) for line in mounts)
    if not mounted:
        mount(str(BASE), BASE, None, MS_BIND)
        mount(None, BASE, None, MS_SHARED)
    return BASE


def sweep() -> list[Path]:
    """Desmonta y borra los discos cuyo dueño ya no vive (una calificación que murió sin
    borrarlos); si había alguno, lo dice por stderr. Devuelve los borrados.

    Con :data:`BASE` bloqueada (``flock``): dos procesos que barren a la vez no se pisan ni
    lo dicen dos veces.
    """
    lock = os.open(BASE, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        left = [path for path in sorted(BASE.iterdir()) if not _alive(path.name)]
        for path in left:
            _remove(path)
    finally:
        os.close(lock)
    if left:
        print(
            "aviso: se han desmontado y borrado los discos de núcleos que dejó una calificación"
            f" que no terminó ({len(left)}): {', '.join(str(path) for path in left)}",
            file=sys.stderr,
            flush=True,
        )
    return left


def _owner(pid: int) -> str:
    """``<pid>-<hora de arranque en tics>``: un proceso que ya murió no vuelve a tenerlo."""
    with open(f"/proc/{pid}/stat") as status:
        start = status.read().rsplit(")", 1)[1].split()[19]
    return f"{pid}-{start}"


def _alive(name: str) -> bool:
    pid = name.split("-", 1)[0]
    try:
        return pid.isdigit() and name.startswith(_owner(int(pid)) + "-")
    except OSError:
        return False


def mount(source, target: Path, fstype, flags: int, options: str | None = None) -> None:
    """``mount(2)`` por libc; un fallo es ``OSError`` con la carpeta y su causa."""
    encode = lambda value: None if value is None else str(value).encode()  # noqa: E731
    if libc.mount(encode(source), encode(target), encode(fstype), flags, encode(options)):
        error = ctypes.get_errno()
        raise OSError(error, f"mount {target}: {os.strerror(error)}")


def _remove(folder: Path) -> None:
    """Desmonta (aunque algo lo use aún) y borra la carpeta."""
    while os.path.ismount(folder):
        if libc.umount2(str(folder).encode(), MNT_DETACH):
            break
    shutil.rmtree(folder, ignore_errors=True)
