"""Resultados de ``python -m course grade``: un JSON por estudiante y laboratorio.

Cada proceso de calificación escribe ``autograded/<estudiante>/<lab>/calificacion.json``
junto al cuaderno calificado (``<lab>.ipynb``, el que usa Formgrader). El libro de notas
de nbgrader (``gradebook.db``, un solo archivo SQLite) lo escribe únicamente el proceso
principal, al final, con :func:`merge`: así varios procesos, o varias máquinas con
``--shard``, nunca escriben a la vez en él. Para unir fragmentos basta con copiar sus
carpetas ``autograded/`` en una y ejecutar ``python -m course grade --merge-only``.
"""

import contextlib
import fcntl
import json
import os
import shutil
import sqlite3
import sys
import warnings
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from course import names, notebooks
from course.text import printable

RESULT_NAME = "calificacion.json"
BACKUPS_KEPT = 5  # copias gradebook.db.*.bak que se guardan; las más antiguas se borran
LOCK_TIMEOUT_S = 10.0  # cuánto se espera a que otro proceso suelte gradebook.db


@dataclass
class Cell:
    """Una celda calificada de una entrega (un elemento de ``cells`` en el JSON)."""

    grade_id: str
    points: float | None  # None: pendiente de corrección manual
    max_points: float
    message: str = ""  # último error de la celda, si falló
    # Los errores típicos que nombró la comparación del calificador (nunca el núcleo): las
    # frases del curso de ``course.grading.diagnosis``, sin valores. Falta en los JSON
    # anteriores: entonces, ninguno.
    mistakes: list[str] = field(default_factory=list)

    @property
    def exercise(self) -> str:
        return notebooks.exercise(self.grade_id)

    @property
    def written(self) -> bool:
        """Una respuesta escrita: la califica una persona, no las pruebas."""
        return notebooks.is_written(self.grade_id)


@dataclass
class Result:
    """La calificación de una entrega: la de ``grade_notebook`` (``check``, ``grade``) y la
    que se guarda en ``calificacion.json``; ``Result(**json)`` la lee de vuelta."""

    student: str
    lab: str
    cells: list[Cell] = field(default_factory=list)
    error: str = ""  # por qué no se pudo calificar (cuaderno dañado, fallo de nbgrader...)
    seconds: float = 0.0
    findings: list[str] = field(default_factory=list)  # informe de integridad
    graded_at: str = ""
    timestamp: str = ""  # hora de entrega (timestamp.txt de nbgrader), si venía
    fingerprint: str = ""  # de lo que decidió la nota (course.grading.resume)
    warnings: list[str] = field(default_factory=list)  # avisos que no impiden calificar
    name: str = ""  # nombre completo para mostrar (carpeta de Moodle), si se sabe

    def __post_init__(self):
        self.cells = [cell if isinstance(cell, Cell) else Cell(**cell) for cell in self.cells]

    @property
    def auto_points(self) -> float:
        """Los puntos de las celdas con nota (con :func:`with_manual_scores`, también las
        que calificó una persona)."""
        return sum(c.points for c in self.cells if c.points is not None)

    @property
    def auto_max(self) -> float:
        """El máximo de lo que califican las pruebas: todo menos las respuestas escritas."""
        return sum(c.max_points for c in self.cells if not c.written)

    @property
    def manual_max(self) -> float:
        return sum(c.max_points for c in self.cells if c.written)

    @property
    def pending_max(self) -> float:
        """Los puntos que esperan corrección manual (celdas sin nota)."""
        return sum(c.max_points for c in self.cells if c.points is None)

    @property
    def max_points(self) -> float:
        return sum(c.max_points for c in self.cells)


def path_for(autograded: Path, student: str, lab: str) -> Path:
    return autograded / student / lab / RESULT_NAME


def write(autograded: Path, result: Result) -> Path:
    """Escribe el JSON de forma atómica (archivo temporal y ``rename``)."""
    target = path_for(autograded, result.student, result.lab)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(asdict(result), ensure_ascii=False, indent=1))
    temporary.replace(target)
    return target


def read(autograded: Path, student: str, lab: str) -> Result:
    """El resultado que :func:`write` dejó para ``student`` y ``lab``."""
    return _load(path_for(autograded, student, lab))


def read_all(autograded: Path) -> list[Result]:
    """Todos los resultados bajo ``autograded/``, ordenados por estudiante y laboratorio."""
    return [_load(path) for path in sorted(autograded.glob(f"*/*/{RESULT_NAME}"))]


def _load(path: Path) -> Result:
    return Result(**json.loads(path.read_text()))


@contextlib.contextmanager
def _locked(db: Path):
    """Un solo escritor del libro de notas a la vez, también entre órdenes distintas."""
    with open(db.with_name(db.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def backup(db: Path) -> Path | None:
    """Copia ``gradebook.db`` a ``gradebook.db.<fecha>-<microsegundos>.bak`` antes de escribir.

    La copia se hace mientras se tiene el cerrojo de escritura de SQLite (nadie cambia el
    archivo a medias de copiarlo), se escribe aparte y se renombra: un proceso matado a
    mitad no deja una copia truncada con nombre de copia buena. Se guardan las
    :data:`BACKUPS_KEPT` más recientes; las anteriores se borran.
    """
    if not db.exists():
        return None
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    target = db.with_name(f"{db.name}.{stamp}.bak")
    temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    with _unlocked_gradebook(), contextlib.closing(sqlite3.connect(db, LOCK_TIMEOUT_S)) as held:
        held.execute("BEGIN IMMEDIATE")  # falla si otro proceso está escribiendo
        shutil.copy2(db, temporary)
        held.rollback()
    temporary.replace(target)
    for old in sorted(db.parent.glob(f"{db.name}.*.bak"))[:-BACKUPS_KEPT]:
        old.unlink()
    return target


@contextlib.contextmanager
def _unlocked_gradebook():
    """«database is locked» de SQLite (Formgrader escribiendo) se convierte en CourseError."""
    from sqlalchemy.exc import OperationalError

    from course.labs import CourseError

    try:
        yield
    except (sqlite3.OperationalError, OperationalError) as error:
        if "database is locked" not in str(error):
            raise
        raise CourseError(
            "gradebook.db está bloqueado por otro proceso (¿Formgrader guardando una nota?). "
            "Cierra Formgrader o espera a que termine y vuelve a ejecutar la orden; "
            "no se ha cambiado ninguna nota."
        ) from None


@contextlib.contextmanager
def _one_transaction(gradebook):
    """Todos los cambios de :func:`merge` en una sola transacción de SQLite.

    Los métodos ``update_or_create_*`` de nbgrader confirman (``commit``) tras cada
    cambio; si el proceso muriera a mitad, el libro de notas quedaría con unas entregas
    nuevas y otras viejas. Mientras dura la unión, ``commit`` solo envía los cambios a la
    transacción abierta (``flush``); al final se confirma una vez. Si el proceso muere
    antes, SQLite descarta la transacción al abrir el archivo: el libro de notas queda
    como estaba.
    """
    session = gradebook.db()  # la sesión de SQLAlchemy detrás de ``scoped_session``
    session.commit = session.flush
    try:
        yield
    except BaseException:
        session.rollback()
        raise
    finally:
        del session.commit
    session.commit()


def merge(results: list[Result], db: Path) -> int:
    """Pasa los puntos automáticos al libro de notas de nbgrader; devuelve cuántas entregas.

    Respeta las notas manuales que ya hubiera: solo cambia ``auto_score`` y marca para
    revisión lo que la necesita (:func:`update_grade`). Si el laboratorio no está en el
    libro de notas, copia su definición del curso preparado por ``course.grading``.
    """
    from nbgrader.api import Gradebook, MissingEntry

    from course import grading, labs

    good = [r for r in results if not r.error and _admitted(r.student)]
    if not good:
        return 0
    with _locked(db), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # avisos internos de SQLAlchemy en nbgrader
        backup(db)
        url = f"sqlite:///{db}?timeout={LOCK_TIMEOUT_S}"
        with _unlocked_gradebook(), Gradebook(url) as gradebook, _one_transaction(gradebook):
            known = {a.name for a in gradebook.assignments}
            for lab_id in sorted({r.lab for r in good} - known):
                _copy_assignment(grading.prepared_course(labs.get(lab_id)), lab_id, gradebook)
            for result in good:
                student = gradebook.update_or_create_student(result.student)
                if result.name and not (student.first_name or student.last_name):
                    gradebook.update_or_create_student(result.student, last_name=result.name)
                when = _when(result)
                gradebook.update_or_create_submission(result.lab, result.student, **when)
                for cell in result.cells:
                    try:
                        grade = gradebook.find_grade(
                            cell.grade_id, result.lab, result.lab, result.student
                        )
                    except MissingEntry:  # el libro de notas es de otra versión del cuaderno
                        print(
                            f"aviso: {cell.grade_id} no está en gradebook.db para {result.lab};"
                            " ejecuta python -m course build y vuelve a unir (--merge-only)",
                            file=sys.stderr,
                        )
                        continue
                    update_grade(grade, cell.points)
    return len(good)


def _admitted(student: str) -> bool:
    """Un estudiante entra en ``gradebook.db`` solo si su nombre cumple la regla
    (``course.names``); un ``autograded/`` de otra versión del curso podría traer otro."""
    problem = names.problem(student, "estudiante")
    if problem:
        print(printable(f"aviso: no se une a gradebook.db: {problem}"), file=sys.stderr)
    return not problem


def _when(result: Result) -> dict:
    """La hora de entrega para nbgrader, si la hay y se entiende; si no, ninguna y un aviso.

    ``grade`` ya la normaliza, pero ``--merge-only`` une los JSON que haya en
    ``autograded/``: una fecha que nbgrader no entiende fallaría dentro de la transacción
    y nadie tendría nota.
    """
    from nbgrader.utils import parse_utc

    from course.text import printable, shorten

    if not result.timestamp:
        return {}
    try:
        return {"timestamp": parse_utc(result.timestamp)}
    except (ValueError, OverflowError, TypeError, ArithmeticError):
        print(
            printable(
                f"aviso: {result.student} · {result.lab}: la hora de entrega"
                f" «{shorten(result.timestamp, 60)}» no es una fecha; se une sin ella"
            ),
            file=sys.stderr,
        )
        return {}


def update_grade(grade, points: float | None) -> None:
    """Pone la nota automática de una celda sin deshacer lo que calificó una persona.

    Sin nota manual, la celda pide revisión si no tiene nota automática (una pregunta
    abierta). Con nota manual, se queda como la dejó la persona en Formgrader, salvo que
    la nota automática cambie: entonces la nota manual se puso sobre otro resultado y se
    marca para revisarla. (``nbgrader autograde`` la marca siempre; una recalificación
    volvía a pedir la corrección manual ya hecha.)
    """
    changed = grade.auto_score != points
    grade.auto_score = points
    if grade.manual_score is None:
        grade.needs_manual_grade = points is None
    elif changed:
        grade.needs_manual_grade = True


def manual_scores(db: Path) -> dict[tuple[str, str, str], float]:
    """Notas puestas a mano en Formgrader: (estudiante, lab, grade id) -> puntos."""
    if not db.exists():
        return {}
    from nbgrader.api import Gradebook

    scores = {}
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{db}") as gradebook:
        warnings.simplefilter("ignore")
        for assignment in gradebook.assignments:
            for submission in gradebook.assignment_submissions(assignment.name):
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        if grade.manual_score is not None:
                            key = (submission.student.id, assignment.name, grade.name)
                            scores[key] = grade.manual_score
    return scores


def with_manual_scores(found: list[Result], db: Path) -> list[Result]:
    """``found`` con las notas manuales de ``gradebook.db`` en lugar de las automáticas
    (lo que cuenta nbgrader: la nota manual, si la hay)."""
    scores = manual_scores(db)
    for result in found:
        for cell in result.cells:
            key = (result.student, result.lab, cell.grade_id)
            if key in scores:
                cell.points = scores[key]
    return found


def _copy_assignment(course: Path, lab_id: str, gradebook) -> None:
    """Copia laboratorio, cuaderno y celdas del libro de notas de ``course`` a ``gradebook``."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as source:
        assignment = source.find_assignment(lab_id)
        gradebook.update_or_create_assignment(lab_id, duedate=assignment.duedate)
        for notebook in assignment.notebooks:
            gradebook.update_or_create_notebook(notebook.name, lab_id)
            scored = (
                (notebook.grade_cells, gradebook.update_or_create_grade_cell),
                (notebook.task_cells, gradebook.update_or_create_task_cell),
            )
            for cells, create in scored:  # celdas con puntos: de pruebas y de respuesta escrita
                for cell in cells:
                    create(
                        cell.name, notebook.name, lab_id, max_score=cell.max_score,
                        cell_type=cell.cell_type,
                    )  # fmt: skip
            for cell in notebook.solution_cells:
                gradebook.update_or_create_solution_cell(cell.name, notebook.name, lab_id)
            for cell in notebook.source_cells:
                gradebook.update_or_create_source_cell(
                    cell.name, notebook.name, lab_id, cell_type=cell.cell_type,
                    locked=cell.locked, source=cell.source, checksum=cell.checksum,
                )  # fmt: skip
