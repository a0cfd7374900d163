"""El curso de nbgrader: su configuración, su API, generar la versión de estudiante y el
curso preparado de cada laboratorio, guardado en caché.

Aparte de ``runner`` (calificar) para que ``staging`` pida el curso preparado sin
depender de quien califica: ``runner`` → ``staging`` → este módulo, sin círculos.
"""

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path

import jsonschema
import nbgrader
from nbgrader.apps import NbGraderAPI
from nbgrader.converters import Autograde
from nbgrader.coursedir import CourseDirectory
from nbgrader.nbgraderformat import common
from nbgrader.preprocessors import Execute
from nbgrader.validator import Validator
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader
from traitlets.utils.importstring import import_item

from course.grading.execute import TrustedExecute
from course.labs import REPO, CourseError, Lab, cache_root


class _SchemaCheckedOnce:
    """``jsonschema`` para nbgrader, con cada esquema comprobado una sola vez.

    nbgrader valida los metadatos de cada celda con ``jsonschema.validate``, que vuelve a
    comprobar el esquema contra su metaesquema en cada llamada: ≈ 0,1 s de CPU por
    cuaderno, una décima parte de calificar el lab. 1. Aquí ese paso ocurre una vez por
    esquema; la validación de cada celda, y el error que da, son los mismos.
    """

    def __init__(self):
        self._validators = {}

    def __getattr__(self, name: str):
        return getattr(jsonschema, name)

    def validate(self, instance, schema) -> None:
        key = json.dumps(schema, sort_keys=True)
        if key not in self._validators:
            kind = jsonschema.validators.validator_for(schema)
            kind.check_schema(schema)
            self._validators[key] = kind(schema)
        error = jsonschema.exceptions.best_match(self._validators[key].iter_errors(instance))
        if error is not None:
            raise error


common.jsonschema = _SchemaCheckedOnce()


def nbgrader_config(root: Path) -> Config:
    """La configuración del curso (``nbgrader_config.py``) con otra raíz de curso."""
    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    config.CourseDirectory.root = str(root)
    config.CourseDirectory.db_url = f"sqlite:///{root / 'gradebook.db'}"
    return config


def nbgrader_api(
    root: Path, timeout: int | None = None, trusted: Config | None = None
) -> NbGraderAPI:
    """La API de nbgrader sobre el curso ``root``; con ``trusted``, el paso de ejecución
    es ``TrustedExecute`` (núcleo aislado, pruebas en este proceso) con esa configuración.
    """
    config = nbgrader_config(root)
    if trusted is not None:
        config.Autograde.autograde_preprocessors = trusted_steps(config)
        config.merge(trusted)
    if timeout is not None:
        config.Execute.timeout = timeout
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def trusted_steps(config: Config) -> list:
    """Los pasos de calificación de ``nbgrader_config.py`` con ``TrustedExecute`` en lugar
    de la ejecución (``Execute`` de nbgrader o la puerta sellada, ``course.grading.door``).

    Los demás pasos que configure el curso (saneado de HTML…) se aplican igual por
    cualquier puerta.
    """
    steps = Autograde.class_traits()["autograde_preprocessors"].default()
    if "autograde_preprocessors" in config.Autograde:
        steps = list(config.Autograde.autograde_preprocessors)
    steps = [import_item(step) if isinstance(step, str) else step for step in steps]
    return [
        TrustedExecute if step is Execute or getattr(step, "runs_notebook", False) else step
        for step in steps
    ]


def require_success(result: dict, what: str) -> None:
    if not result["success"]:
        detail = result.get("log") or result.get("error") or ""  # el registro dice el porqué
        raise CourseError(f"nbgrader falló al {what}:\n{detail[-3000:]}")


def generate(lab: Lab, root: Path) -> Path:
    """Genera la versión de estudiante de ``lab`` en ``root/release``; ``root`` es un curso.

    Si ``root`` no es el repositorio, se copia antes el cuaderno fuente.
    """
    source = root / "source" / lab.id
    if root.resolve() != REPO:
        shutil.copytree(lab.source.parent, source, dirs_exist_ok=True)
    require_success(
        nbgrader_api(root).generate_assignment(lab.id, force=True, create=True), f"generar {lab.id}"
    )
    return root / "release" / lab.id / f"{lab.id}.ipynb"


def validate(path: Path, invert: bool = False) -> dict:
    """Ejecuta el cuaderno con el validador de nbgrader.

    Con ``invert=True`` se queja de las pruebas que pasan (útil con la versión de
    estudiante, donde todas deben fallar).
    """
    validator = Validator(config=nbgrader_config(REPO))
    validator.invert = invert
    with quiet_stderr():  # los avisos del núcleo (TCP sin cifrar) no llegan a la terminal
        return validator.validate(str(path))


def prepared_course(lab: Lab) -> Path:
    """Un curso mínimo con ``lab`` ya generado (libro de notas incluido), guardado en caché.

    Generar cuesta unos 4 s (crear el libro de notas SQLite); la caché se invalida sola
    porque su nombre lleva la huella del cuaderno fuente, de la configuración y de nbgrader.
    Antes de cada uso se comprueba la huella de su contenido (``MANIFEST``): si alguien la
    cambió, se genera de nuevo. El núcleo del estudiante no la ve (``sandbox``).
    """
    digest = hashlib.sha256()
    for part in (lab.source.read_bytes(), (REPO / "nbgrader_config.py").read_bytes()):
        digest.update(part)
    digest.update(nbgrader.__version__.encode())
    target = cache_root() / "grading" / f"{lab.id}-{digest.hexdigest()[:16]}"
    if target.exists() and not _intact(target):
        shutil.rmtree(target, ignore_errors=True)
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f"{lab.id}-", dir=target.parent))
        with quiet_stderr():
            generate(lab, staging)
        (staging / MANIFEST).write_text(_tree_hash(staging))
        try:
            staging.rename(target)
        except OSError:  # otro proceso la preparó a la vez: vale la suya
            shutil.rmtree(staging)
    return target


MANIFEST = "MANIFEST.sha256"


def _tree_hash(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.name != MANIFEST:
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _intact(folder: Path) -> bool:
    manifest = folder / MANIFEST
    return manifest.is_file() and manifest.read_text() == _tree_hash(folder)


@contextlib.contextmanager
def quiet_stderr():
    """Silencia los avisos del núcleo y de SQLAlchemy; los errores llegan por el registro."""
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
