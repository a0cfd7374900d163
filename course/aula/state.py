"""La carpeta del aula y lo que recuerda entre arranques (``aula.json``).

Solo root escribe aquí. ``aula.json`` lo lee también la configuración del hub
(:mod:`course.aula.hubconfig`) cada vez que arranca: parar y volver a arrancar no pierde
nada, porque la base de datos del hub, el secreto de las cookies, las cuentas y las
carpetas de los usuarios siguen donde estaban.
"""

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from course.labs import CourseError

DEFAULT_ROOT = Path("/srv/aula")
COURSE_ID = "transformer-es"
INSTRUCTORS_GROUP = f"formgrade-{COURSE_ID}"
STUDENTS_GROUP = f"nbgrader-{COURSE_ID}"


@dataclass
class Student:
    """Una fila de la lista de clase, con la cuenta que le corresponde."""

    user: str
    name: str = ""
    email: str = ""


@dataclass
class Settings:
    """Lo que ``aula.json`` guarda."""

    instructor: str
    course: str  # el repositorio del curso del profesor (privado)
    ip: str = ""
    port: int = 8000
    memory_mb: int = 3072  # memoria de cada usuario del hub, con sus núcleos
    disk_mb: int = 2048  # disco de cada estudiante (course.aula.disks)
    students: list[Student] = field(default_factory=list)
    open_labs: list[str] = field(default_factory=list)


class Aula:
    """Las rutas de un aula en ``root``."""

    def __init__(self, root: Path = DEFAULT_ROOT):
        self.root = Path(root).resolve()

    @property
    def settings_file(self) -> Path:
        return self.root / "aula.json"

    @property
    def envs(self) -> Path:
        return self.root / "entornos"

    @property
    def base(self) -> Path:
        return self.envs / "base"

    @property
    def student_env(self) -> Path:
        return self.envs / "estudiantes"

    @property
    def instructor_env(self) -> Path:
        return self.envs / "profesor"

    @property
    def exchange(self) -> Path:
        return self.root / "intercambio"

    @property
    def disks(self) -> Path:
        return self.root / "discos"

    @property
    def hub(self) -> Path:
        return self.root / "hub"

    @property
    def proxy(self) -> Path:
        return self.root / "proxy" / "node_modules" / ".bin" / "configurable-http-proxy"

    @property
    def log(self) -> Path:
        return self.hub / "hub.log"

    @property
    def pid_file(self) -> Path:
        return self.hub / "jupyterhub.pid"

    @property
    def passwords(self) -> Path:
        return self.hub / "contraseñas.csv"

    def load(self) -> Settings:
        try:
            data = json.loads(self.settings_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CourseError(
                f"No hay un aula en {self.root}: prepárala antes con"
                " «python -m course aula preparar --profesor USUARIO»."
            ) from None
        students = [Student(**row) for row in data.pop("students", [])]
        return Settings(**data, students=students)

    def save(self, settings: Settings) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        partial = self.settings_file.with_suffix(".part")
        text = json.dumps(asdict(settings), ensure_ascii=False, indent=2) + "\n"
        partial.write_text(text, encoding="utf-8")
        os.chmod(partial, 0o600)  # nombres y correos de la clase: solo root
        partial.replace(self.settings_file)
