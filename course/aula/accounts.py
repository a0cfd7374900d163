"""La lista de clase y las cuentas del sistema del aula.

La lista es el CSV que exporta el aula virtual: una fila por estudiante con su
identificador, su nombre y su correo (cabeceras ``id``, ``nombre`` o ``name`` y ``correo``
o ``email``; Moodle exporta ``Nombre``/``Apellido(s)`` por separado, y también valen). El
identificador es el usuario en el hub, en el sistema y en el libro de notas: tiene que
cumplir la regla de ``course.names``, se escribe en minúsculas (``Ana`` y ``ana`` son la
misma persona) y no puede ser una cuenta del sistema (uid < 1000) ni el profesor.

La autenticación es PAM: cada estudiante nuevo recibe una cuenta con una contraseña al
azar, que se apunta en ``hub/contraseñas.csv`` (solo root) para repartirla. Las carpetas
personales quedan en 0700: nadie lee el trabajo de otro.
"""

import csv
import json
import os
import pwd
import secrets
from pathlib import Path

from course import names
from course.aula import system
from course.aula.state import Aula, Student
from course.labs import CourseError

HEADERS = {
    "id": ("id", "identificador", "usuario", "username", "número de id", "id number"),
    "name": ("nombre completo", "name", "nombre", "full name", "first name"),
    "surname": ("apellido(s)", "apellidos", "surname", "last name"),
    "email": ("correo", "email", "correo electrónico", "email address", "dirección de correo"),
}
FIRST_UID = 1000
PASSWORD_LETTERS = "abcdefghijkmnpqrstuvwxyz23456789"


def read_roster(path: Path, instructor: str) -> list[Student]:
    """Los estudiantes de la lista; :class:`CourseError` con todas las filas que fallan."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.reader(handle, dialect=_dialect(handle)))
    if not rows:
        raise CourseError(f"{path}: la lista de clase está vacía.")
    columns = _columns(rows[0], path)
    students, problems = [], []
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        cell = {key: row[i].strip() if i < len(row) else "" for key, i in columns.items()}
        problem = names.problem(cell["id"], "estudiante")
        user = names.key(cell["id"])
        if not problem and user == instructor:
            problem = f"«{user}» es el profesor"
        if problem:
            problems.append(f"fila {number}: {problem}")
            continue
        full = " ".join(part for part in (cell.get("name", ""), cell.get("surname", "")) if part)
        students.append(Student(user, names.shown(full), names.shown(cell.get("email", ""))))
    repeated = sorted({s.user for s in students if [t.user for t in students].count(s.user) > 1})
    problems += [f"«{user}» aparece más de una vez" for user in repeated]
    if problems:
        raise CourseError(f"{path}: la lista de clase tiene problemas:\n  " + "\n  ".join(problems))
    return students


def _dialect(handle):
    sample = handle.read(4096)
    handle.seek(0)
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t")
    except csv.Error:
        return csv.excel


def _columns(header: list[str], path: Path) -> dict[str, int]:
    found = {}
    for index, title in enumerate(header):
        for key, aliases in HEADERS.items():
            if title.strip().lower() in aliases and key not in found:
                found[key] = index
    if "id" not in found:
        wanted = ", ".join(f"«{alias}»" for alias in HEADERS["id"][:3])
        raise CourseError(f"{path}: falta la columna del identificador ({wanted}) en la cabecera.")
    return found


def ensure_account(user: str) -> str | None:
    """Crea la cuenta ``user`` si no existe y deja su carpeta en 0700; devuelve la
    contraseña nueva, o ``None`` si la cuenta ya existía (su contraseña no se toca)."""
    try:
        account = pwd.getpwnam(user)
    except KeyError:
        account = None
    if account is not None and account.pw_uid < FIRST_UID:
        raise CourseError(f"«{user}» es una cuenta del sistema: no puede entrar en el aula.")
    password = None
    if account is None:
        system.run(["useradd", "--create-home", "--shell", "/bin/bash", "--user-group", user])
        password = "".join(secrets.choice(PASSWORD_LETTERS) for _ in range(12))
        system.run(["chpasswd"], input=f"{user}:{password}\n")
        account = pwd.getpwnam(user)
    os.chmod(account.pw_dir, 0o700)
    return password


def remember_passwords(aula: Aula, new: dict[str, str]) -> None:
    """Añade las contraseñas nuevas a ``hub/contraseñas.csv`` (0600, solo root)."""
    if not new:
        return
    aula.hub.mkdir(mode=0o700, parents=True, exist_ok=True)
    fresh = not aula.passwords.exists()
    with open(os.open(aula.passwords, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a") as out:
        writer = csv.writer(out)
        if fresh:
            writer.writerow(["usuario", "contraseña"])
        writer.writerows(sorted(new.items()))


GRADEBOOK = """\
import json, sys
from nbgrader.api import Gradebook
with Gradebook(sys.argv[1]) as book:
    for row in json.load(sys.stdin):
        first, _, last = row["name"].partition(" ")
        book.update_or_create_student(row["user"], first_name=first or None,
                                      last_name=last or None, email=row["email"] or None)
"""


def add_to_gradebook(python: Path, course: Path, instructor: str, students: list[Student]):
    """Los estudiantes en ``gradebook.db`` del curso, como el profesor (el libro es suyo)."""
    rows = [{"user": s.user, "name": s.name, "email": s.email} for s in students]
    url = f"sqlite:///{course / 'gradebook.db'}"
    system.as_user(instructor, [str(python), "-c", GRADEBOOK, url], course, input=json.dumps(rows))
