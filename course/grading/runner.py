"""Puente con nbgrader: generar versiones de estudiante y calificar un cuaderno.

Todo pasa por la API de nbgrader en este mismo proceso (se importa una vez) y sobre un
directorio de curso temporal cuando se califica, de modo que la entrega original y el
libro de notas del instructor nunca se tocan.
"""

import contextlib
import copy
import hashlib
import os
import shutil
import tempfile
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path

import nbformat
import nbgrader
from nbgrader.api import Gradebook
from nbgrader.apps import NbGraderAPI
from nbgrader.converters import Autograde
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import Execute
from nbgrader.validator import Validator
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader
from traitlets.utils.importstring import import_item

from course import notebooks
from course.grading import integrity, pool, results, sandbox
from course.grading.execute import TrustedExecute
from course.grading.kernel_view import GradingFailure
from course.labs import NOT_GRADED, REPO, CourseError, Lab, cache_root
from course.notebooks import grade_ids
from course.notebooks import read as read_notebook

STUDENT = "estudiante"


def nbgrader_config(root: Path) -> Config:
    """La configuración del curso (``nbgrader_config.py``) con otra raíz de curso."""
    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    config.CourseDirectory.root = str(root)
    config.CourseDirectory.db_url = f"sqlite:///{root / 'gradebook.db'}"
    return config


def _api(root: Path, timeout: int | None = None, trusted: Config | None = None) -> NbGraderAPI:
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


def _run(result: dict, what: str) -> None:
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
    _run(_api(root).generate_assignment(lab.id, force=True, create=True), f"generar {lab.id}")
    return root / "release" / lab.id / f"{lab.id}.ipynb"


def validate(path: Path, invert: bool = False) -> dict:
    """Ejecuta el cuaderno con el validador de nbgrader.

    Con ``invert=True`` se queja de las pruebas que pasan (útil con la versión de
    estudiante, donde todas deben fallar).
    """
    validator = Validator(config=nbgrader_config(REPO))
    validator.invert = invert
    with _quiet_stderr():  # los avisos del núcleo (TCP sin cifrar) no llegan a la terminal
        return validator.validate(str(path))


def identify(notebook: nbformat.NotebookNode) -> Lab:
    """El laboratorio del cuaderno, comparado con los cuadernos de ``source/``."""
    return notebooks.identify(notebook, "source")


def grade_notebook(
    path: Path,
    lab: Lab | None = None,
    timeout: int | None = None,
    keep: Path | None = None,
    sandboxed: bool = True,
    limits: sandbox.Limits | None = None,
    notebook_timeout: int | None = None,
    stage: "Staged | None" = None,
) -> results.Result:
    """Califica con las pruebas ocultas una copia del cuaderno ``path``; no lo modifica.

    ``timeout`` (segundos por celda) sustituye al de ``nbgrader_config.py``. Con ``keep``,
    el cuaderno calificado por nbgrader (con salidas) se copia a esa ruta. Con
    ``notebook_timeout`` limita los segundos del cuaderno entero. Con
    ``sandboxed=False`` el núcleo no se aísla (solo si bubblewrap no está disponible: el
    cuaderno podría leer las soluciones y escribir donde quiera). ``stage``, si ya se
    preparó ``path`` con :func:`staged` (``grade`` lo hace durante la entrega anterior).
    """
    if stage is not None:
        return grade_staged(stage, timeout, keep, notebook_timeout)
    with staged(path, lab, sandboxed, limits) as stage:
        return grade_staged(stage, timeout, keep, notebook_timeout)


@dataclass
class Staged:
    """Una entrega lista para calificar; su núcleo (``warm``) ya está arrancando."""

    lab: Lab
    root: Path  # curso temporal con la entrega en ``submitted/``
    trusted: Config  # configuración de ``TrustedExecute`` y de la caja
    findings: list
    warm: pool.WarmKernel | None


@contextlib.contextmanager
def staged(
    path: Path,
    lab: Lab | None = None,
    sandboxed: bool = True,
    limits: sandbox.Limits | None = None,
):
    """Prepara la calificación de ``path`` y lanza ya su núcleo aislado.

    El núcleo arranca en cuanto su caja está lista (``pool.WarmKernel``): la copia del
    curso preparado, la restauración de celdas y el informe de integridad ocurren
    mientras tanto, y en ``grade`` también la entrega anterior. Al salir, el núcleo se
    destruye (usado o no, también si algo falló) y el curso temporal se borra.
    """
    if sandboxed and sandbox.available():
        raise CourseError(f"No se puede aislar el cuaderno: {sandbox.available()}.")
    notebook = read_notebook(path)
    lab = lab or identify(notebook)
    source = nbformat.read(lab.source, 4)
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="course-check-")))
        runtime = stack.enter_context(
            tempfile.TemporaryDirectory(prefix="nucleo-", dir=sandbox.socket_parent())
        )
        root = tmp / "curso"
        submitted = root / "submitted" / STUDENT / lab.id
        submitted.mkdir(parents=True)
        _copy_outputs(path.parent, submitted, lab)
        trusted = _trusted_config(lab, source, submitted, tmp, Path(runtime), sandboxed, limits)
        warm = None
        if sandboxed:
            warm = pool.WarmKernel(trusted, trusted.TrustedExecute.setup_source)
            stack.callback(warm.destroy)  # antes de borrar sus carpetas (orden inverso)
            trusted.TrustedExecute.warm = warm
        shutil.copytree(prepared_course(lab), root, dirs_exist_ok=True)
        release = nbformat.read(root / "release" / lab.id / f"{lab.id}.ipynb", 4)
        nbformat.write(restored(notebook, release), submitted / f"{lab.id}.ipynb")
        findings = integrity.scan(notebook, grade_ids(source), original=source)
        yield Staged(lab, root, trusted, findings, warm)


def grade_staged(
    stage: Staged,
    timeout: int | None = None,
    keep: Path | None = None,
    notebook_timeout: int | None = None,
) -> results.Result:
    """Califica la entrega de :func:`staged` (argumentos como :func:`grade_notebook`)."""
    lab, root, trusted = stage.lab, stage.root, stage.trusted
    if notebook_timeout is not None:
        trusted.TrustedExecute.notebook_timeout = notebook_timeout
    report: dict = {}
    trusted.TrustedExecute.report = report
    with _quiet_stderr():
        result = _api(root, timeout, trusted).autograde(lab.id, STUDENT, force=True, create=True)
    if report.get("failure"):  # un fallo del calificador: sin nota, nunca un 0
        raise GradingFailure(f"No se pudo calificar: {report['failure']}")
    _run(result, "calificar")
    graded = _collect(root, lab)
    graded.findings = stage.findings
    if keep is not None:  # copia aparte y renombre: nunca queda un cuaderno a medias
        keep.parent.mkdir(parents=True, exist_ok=True)
        temporary = keep.with_name(f"{keep.name}.{os.getpid()}.tmp")
        shutil.copyfile(root / "autograded" / STUDENT / lab.id / f"{lab.id}.ipynb", temporary)
        temporary.replace(keep)
    return graded


def _trusted_config(
    lab: Lab,
    source: nbformat.NotebookNode,
    submitted: Path,
    tmp: Path,
    runtime: Path,
    sandboxed: bool,
    limits: sandbox.Limits | None,
) -> Config:
    """Configuración de ``TrustedExecute`` y del núcleo aislado para una entrega."""
    config = Config()
    tests = [
        notebooks.grade_id(cell)
        for cell in source.cells
        if cell.cell_type == "code" and notebooks.is_test(cell)
    ]
    config.TrustedExecute.test_cells = tests
    config.TrustedExecute.setup_source = "\n".join(
        cell.source for cell in source.cells if notebooks.is_setup(notebooks.grade_id(cell))
    )
    config.TrustedExecute.test_path = str(submitted)
    config.TrustedExecute.sandboxed = sandboxed
    config.TrustedExecute.scratch = str(tmp / "temporales")
    if not sandboxed:
        return config
    box = sandbox.grading_box(lab, tmp, runtime, limits)
    if lab.outputs is not None and (submitted / lab.outputs).is_dir():
        box.readable[sandbox.Box.WORK / lab.outputs] = submitted / lab.outputs
    config.SandboxedKernelManager.box = box
    config.SandboxedKernelManager.transport = "ipc"
    config.SandboxedKernelManager.ip = str(runtime / "zmq")
    config.SandboxedKernelManager.connection_file = str(runtime / "conexion.json")
    return config


def _copy_outputs(folder: Path, submitted: Path, lab: Lab) -> None:
    """Copia la carpeta ``lab.outputs`` que está junto al cuaderno entregado, si existe.

    Las pruebas ocultas del laboratorio 7 leen la ejecución completa (punto de control,
    traducciones) en ``runs/07_multi30k/completa``, relativa al cuaderno; sin copiarla, la
    calificación solo vería la prueba rápida. Se leen los archivos, nunca se escriben.
    Solo pasan archivos normales, con un límite de tamaño (``course.grading.files``); lo
    omitido se avisa por stderr.
    """
    import sys

    from course.grading.files import copy_regular_files

    if lab.outputs is None or not (folder / lab.outputs).is_dir():
        return
    notes = copy_regular_files(folder / lab.outputs, submitted / lab.outputs, ignore=NOT_GRADED)
    for note in notes:
        print(f"aviso: {folder}: {note}", file=sys.stderr)


def restored(
    notebook: nbformat.NotebookNode, release: nbformat.NotebookNode
) -> nbformat.NotebookNode:
    """Una copia con los metadatos de nbgrader del cuaderno publicado ``release`` y sus
    celdas de nbgrader que faltaban (:func:`_known_ids_once`, :func:`_with_missing_cells`)."""
    return _with_missing_cells(_known_ids_once(notebook, release), release)


def _known_ids_once(
    notebook: nbformat.NotebookNode, release: nbformat.NotebookNode
) -> nbformat.NotebookNode:
    """Una copia en la que solo la primera celda de cada grade id del laboratorio conserva
    sus metadatos de nbgrader, y esos metadatos son los del cuaderno publicado.

    Copiar una celda en JupyterLab copia también su grade id, y nbgrader se detiene con un
    ``KeyError``; un grade id que el libro de notas no conoce (otro laboratorio, uno
    inventado) también lo detiene. Esas celdas siguen ejecutándose, como celdas normales.
    Lo que el estudiante cambie en los metadatos de una celda conocida (``grade``,
    ``solution``, ``points``, ``locked``, el tipo de celda) no cuenta: se restaura.
    """
    notebook = copy.deepcopy(notebook)
    published = {notebooks.grade_id(c): c for c in release.cells if notebooks.grade_id(c)}
    seen = set()
    for index, cell in enumerate(notebook.cells):
        grade_id = notebooks.grade_id(cell)
        original = published.get(grade_id)
        if original is None or grade_id in seen:
            notebooks.forget(cell)
        elif cell.cell_type != original.cell_type:
            notebook.cells[index] = _replacement(original, notebook)
        else:
            notebooks.copy_nbgrader(original, cell)
        seen.add(grade_id)
    return notebook


def _replacement(original: nbformat.NotebookNode, notebook: nbformat.NotebookNode):
    """La celda publicada, sin respuesta, en lugar de una celda cuyo tipo cambió."""
    restored = copy.deepcopy(original)
    restored.pop("id", None)
    if notebook.get("nbformat_minor", 0) >= 5:  # ids de celda desde nbformat 4.5
        restored["id"] = uuid.uuid4().hex[:12]
    answer = original.cell_type == "code" and notebooks.is_solution(restored)
    if answer and not notebooks.is_graded(restored):
        restored.source = MISSING
    return restored


MISSING = "# Esta celda faltaba en la entrega; se ha restaurado al calificar.\n"


def _with_missing_cells(
    notebook: nbformat.NotebookNode, release: nbformat.NotebookNode
) -> nbformat.NotebookNode:
    """Devuelve las celdas de nbgrader que faltan a su sitio (tras la anterior que sí está).

    nbgrader solo restaura celdas de prueba, y falla con ``KeyError`` si también falta la
    celda anterior (un cuaderno vacío, uno de otro laboratorio, una respuesta borrada);
    la celda de preparación borrada ni la restaura. Las celdas de prueba y las bloqueadas
    vuelven con su contenido (nbgrader lo sobrescribe después con el del libro de notas);
    las de respuesta vuelven vacías, para no tapar una función definida en otra celda.
    """
    notebook = copy.deepcopy(notebook)
    anchor = None
    for cell in release.cells:
        grade_id = notebooks.grade_id(cell)
        if grade_id is None:
            continue
        ids = [notebooks.grade_id(c) for c in notebook.cells]
        if grade_id not in ids:
            restored = _replacement(cell, notebook)
            if cell.cell_type == "code" and restored.source != MISSING:
                restored.source = MISSING + restored.source
            notebook.cells.insert(ids.index(anchor) + 1 if anchor in ids else 0, restored)
        anchor = grade_id
    return notebook


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
        with _quiet_stderr():
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
def _quiet_stderr():
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


def _collect(root: Path, lab: Lab) -> results.Result:
    autograded = nbformat.read(root / "autograded" / STUDENT / lab.id / f"{lab.id}.ipynb", 4)
    messages = {
        notebooks.grade_id(cell): _error_message(cell)
        for cell in autograded.cells
        if cell.cell_type == "code" and notebooks.grade_id(cell) is not None
    }
    result = results.Result("", lab.id)
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        warnings.simplefilter("ignore")  # avisos internos de SQLAlchemy en nbgrader
        submission = gradebook.find_submission_notebook(lab.id, lab.id, STUDENT)
        order = {cell.name: i for i, cell in enumerate(submission.notebook.source_cells)}
        for grade in sorted(submission.grades, key=lambda g: order.get(g.name, 0)):
            points = grade.score if not grade.needs_manual_grade else None
            result.cells.append(
                results.Cell(grade.name, points, grade.max_score, messages.get(grade.name, ""))
            )
    return result


def _error_message(cell: nbformat.NotebookNode) -> str:
    for output in cell.get("outputs", []):
        if output.output_type == "error":
            return f"{output.ename}: {output.evalue}" if output.evalue else output.ename
    return ""
