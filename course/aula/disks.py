"""El disco de cada estudiante y el del intercambio: archivos de tamaño fijo.

Un estudiante que llena su disco no debe llenar el de los demás ni el del profesor (su
copia del curso y ``gradebook.db``). Las cuotas de ext4 o xfs piden el sistema de
archivos montado con ``usrquota`` y un kernel con ``CONFIG_QFMT_V2`` (esta máquina no lo
tiene); un archivo con un ext4 dentro, montado con ``-o loop``, funciona en cualquier
Linux como root. Así:

- la carpeta personal de cada estudiante es ``discos/<usuario>.img`` (``disk_mb`` MiB,
  disperso: solo ocupa lo escrito), montado en su carpeta con ``nosuid,nodev``;
- el intercambio es ``discos/intercambio.img`` (:data:`EXCHANGE_MB` MiB): lo que se
  escriba en ``inbound/`` no llena el disco del sistema;
- el servidor de cada estudiante ve ``/tmp``, ``/var/tmp`` y ``/run/lock`` (las carpetas
  en las que escribe todo el mundo) como ``~/.tmp``, en su disco (:func:`private_tmp`).

Al crear un disco se copia en él lo que ya hubiera en la carpeta; lo de debajo no se
borra (queda tapado por el montaje). Si ``mount -o loop`` no se puede (un contenedor sin
``/dev/loop*``), el aula sigue sin límite de disco y lo avisa.
"""

import ctypes
import os
import pwd
import shutil
import tempfile
from pathlib import Path

from course.aula import system
from course.aula.state import Aula
from course.grading import disk
from course.labs import CourseError

EXCHANGE_MB = 8192
OPTIONS = "loop,nosuid,nodev"
SHARED_TMP = ("/tmp", "/var/tmp", "/run/lock")
NO_HOME = "/nonexistent"  # la carpeta de una cuenta que ya no existe
MiB = 1024 * 1024
CLONE_NEWNS, MS_REC, MS_PRIVATE = 0x20000, 16384, 1 << 18


def home_disk(aula: Aula, user: str, size_mb: int, log) -> bool:
    """Monta el disco de ``user`` en su carpeta (lo crea si falta); ``False`` si no se pudo."""
    account = pwd.getpwnam(user)
    return _ensure(aula.disks / f"{user}.img", Path(account.pw_dir), size_mb, account, 0o700, log)


def exchange_disk(aula: Aula, log) -> bool:
    """Monta el disco del intercambio en su carpeta (lo crea si falta)."""
    aula.exchange.mkdir(exist_ok=True)
    root = pwd.getpwnam("root")
    return _ensure(aula.disks / "intercambio.img", aula.exchange, EXCHANGE_MB, root, 0o1777, log)


def mount_all(aula: Aula, users: list[str], log) -> None:
    """Tras un reinicio de la máquina: vuelve a montar los discos que ya existen."""
    for user in users:
        if (aula.disks / f"{user}.img").exists() and _home(user) != NO_HOME:
            home_disk(aula, user, 0, log)
    if (aula.disks / "intercambio.img").exists():
        exchange_disk(aula, log)


def _ensure(image: Path, folder: Path, size_mb: int, owner, mode: int, log) -> bool:
    if os.path.ismount(folder):
        return True
    try:
        if not image.exists():
            _make(image, folder, size_mb, owner, mode)
        system.run(["mount", "-o", OPTIONS, str(image), str(folder)])
    except CourseError as error:
        log(f"aviso: {folder} queda sin disco propio (sin límite de espacio): {error}")
        return False
    return True


def _make(image: Path, folder: Path, size_mb: int, owner, mode: int) -> None:
    """Un ext4 de ``size_mb`` MiB con lo que ya hay en ``folder``, su dueño y su modo."""
    image.parent.mkdir(mode=0o700, exist_ok=True)
    partial = image.with_suffix(".nuevo")
    with open(partial, "wb") as handle:
        handle.truncate(size_mb * MiB)
    system.run(["mkfs.ext4", "-q", "-F", "-m", "0", str(partial)])
    with tempfile.TemporaryDirectory(dir=image.parent) as mounted:
        system.run(["mount", "-o", OPTIONS, str(partial), mounted])
        try:
            os.rmdir(Path(mounted) / "lost+found")
            system.run(["cp", "-a", f"{folder}/.", mounted])
            tmp = Path(mounted) / ".tmp"
            tmp.mkdir(mode=0o700, exist_ok=True)
            for path in (mounted, tmp):
                os.chown(path, owner.pw_uid, owner.pw_gid)
            os.chmod(mounted, mode)
        finally:
            system.run(["umount", mounted])
    partial.rename(image)


def shared_tmp(aula_root: Path) -> list[str]:
    """Las carpetas de :data:`SHARED_TMP` que se pueden tapar: no la que contiene el aula
    (un aula de pruebas en ``/var/tmp`` desaparecería para el servidor)."""
    return [t for t in SHARED_TMP if os.path.isdir(t) and not aula_root.is_relative_to(t)]


def private_tmp(home: Path, targets: list[str]) -> None:
    """En este proceso (root, antes de cambiar de usuario) y sus hijos, las carpetas
    ``targets`` pasan a ser ``home/.tmp``: lo escrito ahí cuenta en el disco de ``home``."""
    if disk.libc.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    disk.mount(None, Path("/"), None, MS_REC | MS_PRIVATE)
    for target in targets:
        disk.mount(home / ".tmp", Path(target), None, disk.MS_BIND)


def report(aula: Aula, users: list[str]) -> list[str]:
    """Las líneas de «aula estado» sobre los discos: quién no tiene el suyo y cuánto queda
    libre en el intercambio."""
    lines = []
    missing = [user for user in users if not os.path.ismount(_home(user))]
    if missing:
        lines.append(
            f"aviso: {len(missing)} estudiantes sin disco propio (sin límite de espacio):"
            f" {', '.join(missing[:10])}. «aula iniciar» los monta si existen sus discos."
        )
    else:
        lines.append(f"Discos: los {len(users)} estudiantes tienen el suyo en {aula.disks}.")
    if os.path.ismount(aula.exchange):
        free = shutil.disk_usage(aula.exchange).free // MiB
        lines.append(f"Intercambio: {free} MiB libres.")
    else:
        lines.append("aviso: el intercambio está en el disco del sistema (sin límite de espacio).")
    return lines


def _home(user: str) -> str:
    try:
        return pwd.getpwnam(user).pw_dir
    except KeyError:
        return NO_HOME
