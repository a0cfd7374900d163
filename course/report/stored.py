"""Lo que guardó la calificación, leído sin volver a calificar nada.

- Puntos: del libro de notas de nbgrader (``gradebook.db``), que incluye las notas que una
  persona puso en Formgrader; sin libro de notas, de cada ``calificacion.json``.
- Errores con nombre y ejercicios sin hacer: de ``calificacion.json`` (lo escribe el
  calificador por cualquier puerta: ``course grade``, ``nbgrader autograde``, Formgrader).
- Estudiantes: los del libro de notas (con su nombre) y los que tienen carpeta en
  ``autograded/``; quien no tiene entrega de un laboratorio cuenta como «sin entrega».

Del mensaje de cada celda solo se mira si empieza por ``NotImplementedError`` (el
ejercicio sin hacer): el mensaje de una prueba oculta puede citar valores de la
referencia y nunca llega al informe.
"""

import warnings
from dataclasses import dataclass, field
from pathlib import Path

from course.grading import results

UNATTEMPTED = "NotImplementedError"


@dataclass
class Submission:
    """La entrega calificada de un estudiante en un laboratorio."""

    student: str
    lab: str
    points: dict[str, float | None] = field(default_factory=dict)  # None: pendiente
    max_points: dict[str, float] = field(default_factory=dict)
    mistakes: dict[str, list[str]] = field(default_factory=dict)  # grade id -> frases
    unattempted: set[str] = field(default_factory=set)  # grade ids con NotImplementedError
    error: str = ""  # no se pudo calificar


@dataclass
class Classroom:
    """La clase: nombre de cada estudiante y sus entregas por laboratorio."""

    names: dict[str, str] = field(default_factory=dict)  # id -> «Nombre Apellido» o el id
    submissions: dict[tuple[str, str], Submission] = field(default_factory=dict)

    @property
    def labs(self) -> list[str]:
        from course import labs

        found = {lab for _, lab in self.submissions}
        return [lab_id for lab_id in labs.LABS if lab_id in found]

    def of_lab(self, lab: str) -> list[Submission]:
        return [s for (_, lab_id), s in sorted(self.submissions.items()) if lab_id == lab]


def load(root: Path) -> Classroom:
    """La clase del curso en ``root`` (``gradebook.db`` y ``autograded/``)."""
    room = Classroom()
    for result in results.read_all(root / "autograded"):
        room.names.setdefault(result.student, result.student)
        room.submissions[result.student, result.lab] = _from_result(result)
    db = root / "gradebook.db"
    if db.exists():
        _add_gradebook(room, db)
    return room


def _from_result(result: results.Result) -> Submission:
    found = Submission(result.student, result.lab, error=result.error)
    for cell in result.cells:
        found.points[cell.grade_id] = cell.points
        found.max_points[cell.grade_id] = cell.max_points
        found.mistakes[cell.grade_id] = list(cell.mistakes)
        if cell.message.startswith(UNATTEMPTED):
            found.unattempted.add(cell.grade_id)
    return found


def _add_gradebook(room: Classroom, db: Path) -> None:
    """Nombres y puntos del libro de notas, en una consulta por tabla (no objeto a objeto)."""
    from nbgrader.api import (
        Assignment,
        BaseCell,
        Grade,
        Gradebook,
        GradeCell,
        Student,
        SubmittedAssignment,
        SubmittedNotebook,
        TaskCell,
    )  # fmt: skip

    with warnings.catch_warnings(), Gradebook(f"sqlite:///{db}") as gradebook:
        warnings.simplefilter("ignore")  # avisos internos de SQLAlchemy en nbgrader
        session = gradebook.db
        for student, first, last in session.query(
            Student.id, Student.first_name, Student.last_name
        ):
            full = " ".join(part for part in (first, last) if part)
            room.names[student] = full or student
        # El máximo de cada celda, de sus tablas (``Grade.max_score`` lo calcula fila a fila).
        maxima = dict(session.query(GradeCell.id, GradeCell.max_score))
        maxima |= dict(session.query(TaskCell.id, TaskCell.max_score))
        rows = (
            session.query(
                Student.id,
                Assignment.name,
                BaseCell.name,
                Grade.auto_score,
                Grade.manual_score,
                Grade.extra_credit,
                Grade.cell_id,
            )  # fmt: skip
            .select_from(Grade)
            .join(SubmittedNotebook, Grade.notebook_id == SubmittedNotebook.id)
            .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
            .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
            .join(Student, SubmittedAssignment.student_id == Student.id)
            .join(BaseCell, Grade.cell_id == BaseCell.id)
        )
        for student, lab, grade_id, auto, manual, extra, cell_id in rows:
            found = room.submissions.get((student, lab))
            if found is not None and found.error:  # la última calificación falló (como export)
                continue
            if found is None:  # sin calificacion.json: solo puntos
                found = room.submissions[student, lab] = Submission(student, lab)
            score = manual if manual is not None else auto
            found.points[grade_id] = None if score is None else score + (extra or 0.0)
            found.max_points[grade_id] = maxima.get(cell_id) or 0.0
