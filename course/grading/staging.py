"""Preparar una entrega para calificarla y lanzar ya su núcleo aislado.

Este módulo importa poco (nbformat, la caja y jupyter_client, sin nbgrader ni el paso de
ejecución): ``check`` lo usa para que el núcleo arranque mientras el calificador importa
nbgrader y prepara el curso temporal, y ``grade`` para preparar la entrega siguiente
mientras califica la actual (``course.grading.batch``). ``course.grading.runner`` califica
lo preparado.
"""

import contextlib
import copy
import shutil
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import nbformat
from traitlets.config import Config

from course import notebooks
from course.grading import cgroups, disk, integrity, pool, sandbox
from course.grading.files import copy_regular_files
from course.labs import NOT_GRADED, CourseError, Lab
from course.notebooks import grade_ids
from course.notebooks import read as read_notebook

STUDENT = "estudiante"


def identify(notebook: nbformat.NotebookNode) -> Lab:
    """El laboratorio del cuaderno, comparado con los cuadernos de ``source/``."""
    return notebooks.identify(notebook, "source")


@dataclass
class Staged:
    """Una entrega lista para calificar; su núcleo (``warm``) ya está arrancando."""

    lab: Lab
    root: Path  # curso temporal con la entrega en ``submitted/``
    trusted: Config  # configuración de ``TrustedExecute`` y de la caja
    findings: list
    warm: pool.WarmKernel | None
    group: cgroups.Group | None = None  # el cgroup de su núcleo, si hay


@contextlib.contextmanager
def staged(
    path: Path,
    lab: Lab | None = None,
    sandboxed: bool = True,
    limits: sandbox.Limits | None = None,
    zygote: object | None = None,
):
    """Prepara la calificación de ``path`` y lanza ya su núcleo aislado (nacido de
    ``zygote``, :class:`course.grading.zygote.Zygote`, si se da y puede).

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
        # Como root, todo lo que escribe el núcleo va a un tmpfs con tope (course.grading.disk).
        scratch = (limits or sandbox.Limits()).scratch
        own_disk = stack.enter_context(disk.disk(scratch)) if sandboxed else None
        runtime = own_disk.runtime if own_disk else Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="nucleo-", dir=sandbox.socket_parent())
        ))  # fmt: skip
        root = tmp / "curso"
        submitted = root / "submitted" / STUDENT / lab.id
        submitted.mkdir(parents=True)
        _copy_outputs(path.parent, submitted, lab)
        trusted = _trusted_config(lab, source, submitted, tmp, Path(runtime), sandboxed, limits)
        warm = group = None
        if sandboxed:
            group = _group(trusted.SandboxedKernelManager.box.limits)
            if group is not None:
                stack.callback(group.remove)  # después de destruir el núcleo
            trusted.SandboxedKernelManager.box.group = group
            trusted.SandboxedKernelManager.box.zygote = zygote
            trusted.SandboxedKernelManager.box.disk = own_disk
            # nbgrader la define al calificar, pero este núcleo nace antes (labs. 6 y 7 la leen).
            trusted.SandboxedKernelManager.box.env["NBGRADER_EXECUTION"] = "autograde"
            warm = pool.WarmKernel(trusted, trusted.TrustedExecute.setup_source)
            stack.callback(warm.destroy)  # antes de borrar sus carpetas (orden inverso)
            trusted.TrustedExecute.warm = warm
        from course.grading.nbgrader_course import prepared_course  # nbgrader, mientras arranca

        shutil.copytree(prepared_course(lab), root, dirs_exist_ok=True)
        release = nbformat.read(root / "release" / lab.id / f"{lab.id}.ipynb", 4)
        nbformat.write(restored(notebook, release), submitted / f"{lab.id}.ipynb")
        findings = integrity.scan(notebook, grade_ids(source), original=source)
        yield Staged(lab, root, trusted, findings, warm, group)


def _group(limits: sandbox.Limits) -> cgroups.Group | None:
    """El cgroup del núcleo de una entrega (:mod:`course.grading.cgroups`), si hay."""
    try:
        return cgroups.create(limits.memory, limits.processes)
    except OSError as error:
        print(f"aviso: el núcleo no tendrá cgroup ({error}): {cgroups.WITHOUT}", file=sys.stderr)
        return None


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
