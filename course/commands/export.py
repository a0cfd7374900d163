"""``python -m course export``: notas en CSV con las columnas de ``nbgrader export``.

Columnas: las de nbgrader (``assignment, duedate, timestamp, student_id, last_name,
first_name, email, raw_score, late_submission_penalty, score, max_score``) y dos más al
final: ``needs_manual_grade`` (quedan preguntas abiertas por corregir) y ``error`` (la
entrega no se pudo calificar). ``assignment`` es el laboratorio y ``score``/``max_score``
los puntos y el máximo (100). Se leen del libro de notas, así que incluyen las notas
manuales puestas en Formgrader; las entregas que no se pudieron calificar salen con 0 y
el motivo en ``error``.
"""

import csv
import sys
import warnings
from pathlib import Path

from course import labs
from course.grading import results

COLUMNS = [
    "assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
    "raw_score", "late_submission_penalty", "score", "max_score", "needs_manual_grade", "error",
]  # fmt: skip


def rows(root: Path = labs.REPO) -> list[dict]:
    found = {}
    db = root / "gradebook.db"
    if db.exists():
        from nbgrader.api import Gradebook

        with warnings.catch_warnings(), Gradebook(f"sqlite:///{db}") as gradebook:
            warnings.simplefilter("ignore")
            for assignment in gradebook.assignments:
                for submission in gradebook.assignment_submissions(assignment.name):
                    student = submission.student
                    found[(student.id, assignment.name)] = {
                        "assignment": assignment.name,
                        "duedate": assignment.duedate or "",
                        "timestamp": submission.timestamp or "",
                        "student_id": student.id,
                        "last_name": student.last_name or "",
                        "first_name": student.first_name or "",
                        "email": student.email or "",
                        "raw_score": _number(submission.score),
                        "late_submission_penalty": _number(submission.late_submission_penalty),
                        "score": _number(submission.score - submission.late_submission_penalty),
                        "max_score": _number(submission.max_score),
                        "needs_manual_grade": int(submission.needs_manual_grade),
                        "error": "",
                    }
    for result in results.read_all(root / "autograded"):
        if result.error:
            found[(result.student, result.lab)] = {
                **dict.fromkeys(COLUMNS, ""),
                "assignment": result.lab, "student_id": result.student, "raw_score": 0,
                "late_submission_penalty": 0, "score": 0, "max_score": 100,
                "needs_manual_grade": 0, "error": result.error.splitlines()[0][:300],
            }  # fmt: skip
    return [found[key] for key in sorted(found)]


def _number(value) -> str:
    return f"{value or 0:g}"


def run(output: str = "notas.csv", root: Path = labs.REPO) -> int:
    table = rows(root)
    if output == "-":
        _write(sys.stdout, table)
    else:
        with open(output, "w", newline="", encoding="utf-8") as handle:
            _write(handle, table)
        print(f"{len(table)} notas escritas en {output}.")
    return 0


def _write(handle, table: list[dict]) -> None:
    writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(table)
