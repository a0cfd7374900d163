"""Los pasos del aula que cambian algo: preparar, añadir la lista de clase, abrir un
laboratorio. Cada uno se puede repetir; ninguno borra lo que escribió el profesor ni los
estudiantes (su copia del curso, sus carpetas, el libro de notas, el intercambio)."""

import os
import pwd
import shutil
from pathlib import Path

from course import labs
from course.aula import accounts, disks, envs, exchange, system
from course.aula.state import COURSE_ID, Aula, Settings
from course.labs import CourseError

PROXY_PACKAGE = "configurable-http-proxy@5.3.0"


def prepare(
    aula: Aula, instructor: str, ip: str, port: int, memory_mb: int, log, disk_mb: int = 2048
) -> Settings:
    """Cuentas del profesor, su copia del curso, los entornos, el proxy y el intercambio
    (en su disco, :mod:`course.aula.disks`)."""
    if os.geteuid() != 0:
        raise CourseError(
            "«aula preparar» crea cuentas y carpetas del sistema: ejecútala como root."
        )
    password = accounts.ensure_account(instructor)
    accounts.remember_passwords(aula, {instructor: password} if password else {})
    course = Path(pwd.getpwnam(instructor).pw_dir) / COURSE_ID
    try:
        previous = aula.load()
    except CourseError:
        previous = None
    settings = Settings(instructor=instructor, course=str(course), ip=ip, port=port,
                        memory_mb=memory_mb, disk_mb=disk_mb)  # fmt: skip
    if previous:
        settings.students, settings.open_labs = previous.students, previous.open_labs
    aula.root.mkdir(parents=True, exist_ok=True)
    os.chmod(aula.root, 0o755)
    aula.hub.mkdir(mode=0o700, exist_ok=True)
    aula.save(settings)
    _course_copy(course, instructor, log)
    _private(labs.REPO, log)
    envs.build_base(aula, log)
    envs.build_instructor_env(aula, course, log)
    envs.build_student_env(aula, last_open(settings), log)
    _proxy(aula, log)
    disks.exchange_disk(aula, log)
    exchange.create(aula, instructor)
    return settings


def _course_copy(course: Path, instructor: str, log) -> None:
    """Un clon del repositorio del curso en la carpeta del profesor, solo suyo (si ya
    existe, no se toca: es su trabajo)."""
    if not course.exists():
        log(f"Clono el curso en {course}…")
        system.run(["git", "clone", "-q", "--no-hardlinks", str(labs.REPO), str(course)])
        system.run(["chown", "-R", f"{instructor}:", str(course)])
    os.chmod(course, 0o700)


def _private(repository: Path, log) -> None:
    """El repositorio desde el que se prepara el aula tiene las soluciones: avisa si los
    demás usuarios pueden entrar (no se cambia: puede haber quien lo necesite así)."""
    mode = repository.stat().st_mode & 0o777
    if mode & 0o005:
        log(
            f"aviso: los demás usuarios pueden entrar en {repository} (permisos {mode:o}), que"
            f" tiene las soluciones; en el servidor de la clase haz «chmod o-rwx {repository}»."
        )


def _proxy(aula: Aula, log) -> None:
    if aula.proxy.exists():
        return
    if shutil.which("npm") is None:
        raise CourseError("Falta npm (Node.js) para el proxy: «apt-get install nodejs npm».")
    log(f"Instalo {PROXY_PACKAGE} con npm…")
    folder = aula.proxy.parents[2]
    folder.mkdir(exist_ok=True)
    system.run(["npm", "install", "--silent", "--no-fund", "--no-audit", "--prefix", str(folder),
          PROXY_PACKAGE])  # fmt: skip


def add_students(aula: Aula, roster: Path, log) -> list[str]:
    """La lista de clase en el sistema, el hub y el libro de notas; los usuarios nuevos."""
    settings = aula.load()
    students = accounts.read_roster(roster, settings.instructor)
    known = {s.user for s in settings.students}
    new = {}
    for student in students:
        password = accounts.ensure_account(student.user)
        if password:
            new[student.user] = password
        disks.home_disk(aula, student.user, settings.disk_mb, log)
    accounts.remember_passwords(aula, new)
    python = aula.instructor_env / "bin" / "python"
    accounts.add_to_gradebook(python, Path(settings.course), settings.instructor, students)
    by_user = {s.user: s for s in settings.students}
    by_user.update({s.user: s for s in students})
    settings.students = sorted(by_user.values(), key=lambda s: s.user)
    aula.save(settings)
    log(f"{len(students)} estudiantes en la lista; {len(set(by_user) - known)} nuevos en el aula.")
    return sorted(new)


def open_lab(aula: Aula, lab_id: str, log) -> None:
    """Publica ``lab_id`` en el intercambio y pone al día el entorno de los estudiantes."""
    lab = labs.get(lab_id)
    settings = aula.load()
    course = Path(settings.course)
    python = str(aula.instructor_env / "bin" / "python")
    nbgrader = str(aula.instructor_env / "bin" / "nbgrader")
    log(f"Genero {lab.id} en {course} y lo publico…")
    system.as_user(settings.instructor, [python, "-m", "course", "build", lab.id], course)
    system.as_user(settings.instructor, [nbgrader, "release_assignment", lab.id, "--force"], course)
    if lab.id not in settings.open_labs:
        settings.open_labs.append(lab.id)
    aula.save(settings)
    envs.install_student_package(aula, last_open(settings))
    earlier = list(labs.LABS)[: list(labs.LABS).index(last_open(settings))]
    if earlier:
        log(
            "El entorno de los estudiantes lleva ahora las respuestas de "
            + ", ".join(earlier)
            + ": abre un laboratorio cuando haya vencido el plazo de los anteriores."
        )


def last_open(settings: Settings) -> str | None:
    order = list(labs.LABS)
    opened = [lab for lab in settings.open_labs if lab in order]
    return max(opened, key=order.index) if opened else None
