"""Los entornos de Python del aula: ``base``, ``estudiantes`` y ``profesor``.

Se hacen con el Python del sistema (``/usr/bin/python3``): un entorno hecho con un Python
instalado dentro de ``/root`` (pyenv) no lo puede ejecutar otro usuario.

- ``base``: ``requirements.txt`` sin la línea ``-e .``: los paquetes del entorno que
  ejecuta ``aula`` (copiados, si es de la misma versión exacta de Python) o, si no, pip.
  Nadie lo ejecuta; se rehace solo si cambia ``requirements.txt`` o el origen de sus
  paquetes.
- ``estudiantes`` y ``profesor``: copias de ``base`` con ``lib/`` en enlaces duros (no
  ocupan otra vez lo que pesa PyTorch) y lo demás copiado, con sus guiones apuntando a
  su propia carpeta. Cada uno tiene su ``etc/jupyter`` (configuración de nbgrader y de
  Jupyter) y su paquete ``course``:
  - ``estudiantes``: el paquete del zip de estudiantes hasta el último laboratorio
    abierto (``course.commands.bundle``: sin pruebas ocultas, sin mutantes, sin las
    respuestas de ese laboratorio ni de los siguientes, sin las órdenes del profesor),
    copiado, no enlazado, en ``site-packages``; sin Formgrader ni la creación de tareas;
  - ``profesor``: un ``.pth`` que apunta al repositorio del curso del profesor, que solo
    él puede leer.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from course import labs
from course.aula import system
from course.aula.state import COURSE_ID, Aula
from course.labs import CourseError

SYSTEM_PYTHON = Path("/usr/bin/python3")
PACKAGE_PTH = "transformer-es-curso.pth"
# Lo del profesor que un estudiante no debe ver ni reactivar en JupyterLab.
STUDENT_LAB_OFF = (
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
)
STUDENT_SERVER_OFF = (
    "nbgrader.server_extensions.formgrader",
    "nbgrader.server_extensions.course_list",
    "course.jupyter.formgrader",
)
NBGRADER_CONFIG = """\
# Escrito por «python -m course aula»: el intercambio del aula.
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
{extra}"""
# Un núcleo sin actividad en 30 min se apaga (su memoria vuelve; el cuaderno se queda).
KERNEL_CULLING = {
    "MappingKernelManager": {
        "cull_idle_timeout": 1800,
        "cull_interval": 300,
        "cull_connected": True,
    }
}
STUDENT_EXTRA = """\
# Carpetas de entrega que solo su dueño y el profesor pueden leer (course/student/submit.py).
c.ExchangeFactory.submit = "course.student.submit.PrivateSubmit"
"""


def requirements() -> str:
    """``requirements.txt`` del curso sin las líneas que instalan el propio curso."""
    lines = (labs.REPO / "requirements.txt").read_text(encoding="utf-8").splitlines()
    return "".join(f"{line}\n" for line in lines if not line.strip().startswith("-e"))


def build_base(aula: Aula, log) -> bool:
    """Crea ``base`` si falta, si cambió ``requirements.txt`` o si cambia de dónde salen sus
    paquetes; ¿lo creó?

    Si este Python es un entorno virtual de la misma versión exacta que el del sistema (el
    de ``pip install -r requirements.txt``), se copian sus paquetes, menos el curso, en
    unos segundos; si no, se instalan con pip (alrededor de un minuto).
    """
    if not SYSTEM_PYTHON.exists():
        raise CourseError(f"No está {SYSTEM_PYTHON}: instala python3 y python3-venv del sistema.")
    wanted = requirements()
    reuse = _reusable(Path(sys.prefix))
    origin = f"# paquetes copiados de {sys.prefix}\n" if reuse else "# paquetes de pip\n"
    stamp = aula.base / "requisitos.txt"
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == wanted + origin:
        return False
    shutil.rmtree(aula.base, ignore_errors=True)
    if reuse:
        log(f"Creo el entorno base en {aula.base} con los paquetes de {sys.prefix}…")
        system.run([str(SYSTEM_PYTHON), "-m", "venv", "--without-pip", str(aula.base)])
        _copy_packages(Path(sys.prefix), aula.base)
    else:
        log(f"Creo el entorno base en {aula.base} (pip, alrededor de un minuto)…")
        system.run([str(SYSTEM_PYTHON), "-m", "venv", str(aula.base)])
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as listed:
            listed.write(wanted)
            listed.flush()
            pip = [str(aula.base / "bin" / "python"), "-m", "pip", "install", "-q"]
            system.run([*pip, "-r", listed.name])
    system.run([str(aula.base / "bin" / "python"), "-c", "import jupyterhub, nbgrader, jupyterlab"])
    stamp.write_text(wanted + origin, encoding="utf-8")
    return True


def _reusable(prefix: Path) -> bool:
    """¿Es ``prefix`` un entorno virtual del mismo Python que el del sistema, hasta la última
    cifra de la versión? Un paquete puede pedir una versión menor concreta (soupsieve 4.1.3
    pide Python ≥ 3.11.5 y con 3.11.2 falla al dibujar la página de calificar) y copiarlo
    no lo comprueba; pip sí."""
    if sys.prefix == sys.base_prefix:
        return False
    version = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import sys; print(tuple(sys.version_info))"],
        capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    return version == str(tuple(sys.version_info)) and site_packages(prefix).is_dir()


def _copy_packages(source: Path, target: Path) -> None:
    """Los paquetes, guiones y datos de Jupyter de ``source`` en ``target``, sin el curso
    (su instalación editable apunta al repositorio del profesor)."""
    packages = site_packages(source)
    for entry in packages.iterdir():
        if not _is_course(entry):
            system.run(["cp", "-a", str(entry), str(site_packages(target) / entry.name)])
    for folder in ("share", "etc"):
        if (source / folder).is_dir():
            system.run(["cp", "-a", str(source / folder), str(target)])
    (target / "etc" / "jupyter" / "nbgrader_config.py").unlink(missing_ok=True)
    for script in (source / "bin").iterdir():
        if (
            script.is_file()
            and not script.is_symlink()
            and not (target / "bin" / script.name).exists()
        ):
            shutil.copy2(script, target / "bin" / script.name)
            _repoint(target / "bin" / script.name, str(source).encode(), str(target).encode())


def _is_course(entry: Path) -> bool:
    name = entry.name
    return name.startswith(("__editable__", "course-")) or name == "course"


def copy_env(base: Path, target: Path) -> None:
    """``target``: una copia de ``base`` con ``lib/`` en enlaces duros y sus guiones
    (``bin/``) apuntando a ``target``."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for entry in base.iterdir():
        if entry.name == "requisitos.txt":
            continue
        if entry.name == "lib" and not entry.is_symlink():
            system.run(["cp", "-al", str(entry), str(target / "lib")])
        else:
            system.run(["cp", "-a", str(entry), str(target / entry.name)])
    for script in (target / "bin").iterdir():
        _repoint(script, str(base).encode(), str(target).encode())
    os.chmod(target, 0o755)


def _repoint(script: Path, old: bytes, new: bytes) -> None:
    """Cambia ``old`` por ``new`` en un guion de ``bin/`` con un archivo nuevo (el viejo
    puede ser de otro entorno)."""
    if script.is_symlink() or not script.is_file():
        return
    data = script.read_bytes()
    if old not in data[:4096]:
        return
    fresh = script.with_name(f".{script.name}.nuevo")
    fresh.write_bytes(data.replace(old, new))
    os.chmod(fresh, script.stat().st_mode & 0o7777)
    fresh.replace(script)


def site_packages(env: Path) -> Path:
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return env / "lib" / version / "site-packages"


def build_student_env(aula: Aula, through: str | None, log) -> None:
    """El entorno de los estudiantes, nuevo, con el paquete hasta ``through``."""
    log(f"Creo el entorno de los estudiantes en {aula.student_env}…")
    copy_env(aula.base, aula.student_env)
    write_nbgrader_config(aula.student_env, aula, STUDENT_EXTRA)
    install_student_package(aula, through)
    python = str(aula.student_env / "bin" / "python")
    system.run([python, "-m", "course", "jupyter-es"], cwd=aula.student_env)  # no el curso de aquí
    culling = aula.student_env / "etc" / "jupyter" / "jupyter_server_config.d" / "aula-nucleos.json"
    culling.write_text(json.dumps(KERNEL_CULLING, indent=2) + "\n", encoding="utf-8")
    jupyter = str(aula.student_env / "bin" / "jupyter")
    system.run([jupyter, "labextension", "disable", "--level=sys_prefix", *STUDENT_LAB_OFF])
    system.run([jupyter, "labextension", "lock", "--level=sys_prefix", *STUDENT_LAB_OFF])
    system.run([jupyter, "server", "extension", "disable", "--sys-prefix", *STUDENT_SERVER_OFF])


def install_student_package(aula: Aula, through: str | None) -> None:
    """Pone en ``site-packages/course`` del entorno de los estudiantes el paquete del zip
    hasta ``through`` (sin ningún laboratorio abierto: el del primero, sin sus
    respuestas). Lo escribe en una carpeta nueva y la cambia de golpe."""
    from course.commands import bundle

    last = through or next(iter(labs.LABS))
    target = site_packages(aula.student_env) / "course"
    fresh = target.with_name(".course.nuevo")
    shutil.rmtree(fresh, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="aula-vacia-") as nothing:
        files = bundle.contents(last, Path(nothing))
    for name, path in files.items():
        if not name.startswith("course/"):
            continue
        destination = fresh / name.removeprefix("course/")
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(bundle.without_answers(name, path, last))
    _world_readable(fresh)
    old = target.with_name(".course.viejo")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    fresh.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def _world_readable(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)


def build_instructor_env(aula: Aula, course: Path, log) -> None:
    """El entorno del profesor: la copia de ``base`` que importa ``course`` de su
    repositorio del curso."""
    log(f"Creo el entorno del profesor en {aula.instructor_env}…")
    copy_env(aula.base, aula.instructor_env)
    (site_packages(aula.instructor_env) / PACKAGE_PTH).write_text(f"{course}\n", encoding="utf-8")
    write_nbgrader_config(aula.instructor_env, aula, f"c.CourseDirectory.root = {str(course)!r}\n")
    python = str(aula.instructor_env / "bin" / "python")
    system.run([python, "-m", "course", "jupyter-es"], cwd=aula.instructor_env)


def write_nbgrader_config(env: Path, aula: Aula, extra: str) -> None:
    folder = env / "etc" / "jupyter"
    folder.mkdir(parents=True, exist_ok=True)
    text = NBGRADER_CONFIG.format(course_id=COURSE_ID, exchange=str(aula.exchange), extra=extra)
    (folder / "nbgrader_config.py").write_text(text, encoding="utf-8")
