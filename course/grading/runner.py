"""Calificar un cuaderno con nbgrader (su curso y su API: ``nbgrader_course``).

Todo pasa por la API de nbgrader en este mismo proceso (se importa una vez) y sobre un
directorio de curso temporal cuando se califica, de modo que la entrega original y el
libro de notas del instructor nunca se tocan.
"""

import contextlib
import os
import shutil
import warnings
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook
from sqlalchemy import event
from sqlalchemy.engine import Engine

from course import notebooks
from course.grading import diagnosis, results, sandbox
from course.grading.kernel_view import GradingFailure
from course.grading.nbgrader_course import nbgrader_api, quiet_stderr, require_success
from course.grading.staging import STUDENT, Staged, staged
from course.labs import Lab


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
    try:
        with quiet_stderr(), unsynced(root / "gradebook.db"):
            result = nbgrader_api(root, timeout, trusted).autograde(
                lab.id, STUDENT, force=True, create=True
            )
    finally:
        _require_memory(stage)
    if report.get("failure"):  # un fallo del calificador: sin nota, nunca un 0
        raise GradingFailure(f"No se pudo calificar: {report['failure']}")
    require_success(result, "calificar")
    graded = _collect(root, lab)
    graded.findings = stage.findings
    if keep is not None:  # copia aparte y renombre: nunca queda un cuaderno a medias
        keep.parent.mkdir(parents=True, exist_ok=True)
        temporary = keep.with_name(f"{keep.name}.{os.getpid()}.tmp")
        shutil.copyfile(root / "autograded" / STUDENT / lab.id / f"{lab.id}.ipynb", temporary)
        temporary.replace(keep)
    return graded


OUT_OF_MEMORY = (
    "error del calificador: sin memoria: los procesos del núcleo de esta entrega pasaron"
    " juntos de {gib:g} GiB y el sistema mató {kills}; la entrega queda sin nota (no es un"
    " cero). Revisa el cuaderno (¿procesos o datos de más?) o califícala con más --memory"
)


def _require_memory(stage: Staged) -> None:
    """Si el sistema mató procesos del núcleo por falta de memoria, la entrega no tiene
    nota: :class:`GradingFailure` (lo cuenta su cgroup, :mod:`course.grading.cgroups`)."""
    kills = stage.group.oom_kills() if stage.group is not None else 0
    if kills:
        gib = stage.trusted.SandboxedKernelManager.box.limits.memory / sandbox.GIB
        what = "1 proceso" if kills == 1 else f"{kills} procesos"
        raise GradingFailure(OUT_OF_MEMORY.format(gib=gib, kills=what))


@contextlib.contextmanager
def unsynced(gradebook: Path):
    """El libro de notas temporal ``gradebook``, sin esperar al disco en cada ``commit``.

    nbgrader hace decenas de ``commit`` por cuaderno y SQLite espera a que cada uno llegue
    al disco (``fsync``): en una máquina ocupada, casi un segundo por entrega. Este libro
    se copia de la caché y se borra al terminar, así que perderlo en un apagón no importa.
    Cualquier otra base de datos (el libro de notas del instructor) no cambia.
    """
    target = gradebook.resolve()

    def connect(connection, record) -> None:
        if Path(connection.execute("PRAGMA database_list").fetchone()[2]).resolve() == target:
            connection.execute("PRAGMA synchronous = OFF")
            connection.execute("PRAGMA journal_mode = MEMORY")

    event.listen(Engine, "connect", connect)
    try:
        yield
    finally:
        event.remove(Engine, "connect", connect)


def _collect(root: Path, lab: Lab) -> results.Result:
    autograded = nbformat.read(root / "autograded" / STUDENT / lab.id / f"{lab.id}.ipynb", 4)
    code = [c for c in autograded.cells if c.cell_type == "code" and notebooks.grade_id(c)]
    messages = {notebooks.grade_id(cell): _error_message(cell) for cell in code}
    named = {notebooks.grade_id(cell): _named_mistakes(cell) for cell in code}
    result = results.Result("", lab.id)
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        warnings.simplefilter("ignore")  # avisos internos de SQLAlchemy en nbgrader
        submission = gradebook.find_submission_notebook(lab.id, lab.id, STUDENT)
        order = {cell.name: i for i, cell in enumerate(submission.notebook.source_cells)}
        for grade in sorted(submission.grades, key=lambda g: order.get(g.name, 0)):
            points = grade.score if not grade.needs_manual_grade else None
            message, named_here = messages.get(grade.name, ""), named.get(grade.name, [])
            result.cells.append(
                results.Cell(grade.name, points, grade.max_score, message, named_here)
            )
    return result


def _named_mistakes(cell: nbformat.NotebookNode) -> list[str]:
    """Los errores típicos que nombró esta calificación en la celda: de las frases que anotó
    ``course.grading.diagnosis`` (que borra las de la entrega antes de ejecutarla), solo las
    del curso que nombran un error, no la pista."""
    known = diagnosis.known()
    return [s for s in cell.metadata.get(diagnosis.KEY, []) if s in known]


def _error_message(cell: nbformat.NotebookNode) -> str:
    for output in cell.get("outputs", []):
        if output.output_type == "error":
            return f"{output.ename}: {output.evalue}" if output.evalue else output.ename
    return ""
