"""Órdenes del sistema para el aula: como root o como otro usuario, con errores en español."""

import pwd
import subprocess
from pathlib import Path

from course.labs import CourseError


def run(command: list[str], **kwargs) -> str:
    """Ejecuta ``command``; si falla, :class:`CourseError` con el final de su salida."""
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        shown = " ".join(command[:6])
        raise CourseError(f"Falló «{shown} …»:\n{(result.stdout + result.stderr)[-3000:]}")
    return result.stdout


def as_user(user: str, command: list[str], cwd: Path, **kwargs) -> str:
    """``command`` como ``user`` en ``cwd``: su ``HOME``, sin el entorno de root y con la
    carpeta del programa (el ``bin/`` de un entorno del aula) primero en ``PATH``."""
    account = pwd.getpwnam(user)
    environment = [
        f"HOME={account.pw_dir}", f"USER={user}", f"LOGNAME={user}", "LANG=C.UTF-8",
        f"PATH={Path(command[0]).parent}:/usr/local/bin:/usr/bin:/bin",
    ]  # fmt: skip
    return run(
        ["runuser", "-u", user, "--", "env", "-i", *environment, *command], cwd=cwd, **kwargs
    )
