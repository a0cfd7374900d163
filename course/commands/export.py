"""``python -m course export``: notas en CSV con las columnas de ``nbgrader export``.

Columnas: las de nbgrader (``assignment, duedate, timestamp, student_id, last_name,
first_name, email, raw_score, late_submission_penalty, score, max_score``) y dos más al
final: ``needs_manual_grade`` (quedan preguntas abiertas por corregir) y ``error`` (la
entrega no se pudo calificar). ``assignment`` es el laboratorio y ``score``/``max_score``
los puntos y el máximo (100). Se leen del libro de notas, así que incluyen las notas
manuales puestas en Formgrader; las entregas que no se pudieron calificar salen con 0 y
el motivo en ``error``.

Con ``--excel`` el CSV es para hojas de cálculo configuradas en español (Excel,
LibreOffice Calc): punto y coma entre columnas, coma decimal y BOM UTF-8, que es lo que
esperan para abrirlo en columnas y con los acentos bien.

En los dos formatos, un texto que empieza por ``=``, ``+``, ``-``, ``@``, tabulador o
retorno de carro lleva delante un apóstrofo: el identificador ``+A1+1`` o el mensaje de
error de una entrega los escribe un estudiante, y una hoja de cálculo los abriría como
fórmulas. Las columnas de puntos siguen siendo números.
"""

import csv
import errno
import sys
import warnings
from pathlib import Path

from course import labs
from course.labs import CourseError
from course.text import printable, shorten

HELP = "exporta las notas a CSV (columnas de nbgrader)"
NUMBERS = ("raw_score", "late_submission_penalty", "score", "max_score")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
REASONS = {
    errno.ENOENT: "la carpeta no existe",
    errno.EACCES: "no tienes permiso para escribir ahí",
    errno.EPERM: "no tienes permiso para escribir ahí",
    errno.EISDIR: "es una carpeta",
    errno.EROFS: "el disco es de solo lectura",
    errno.ENOSPC: "no queda espacio en el disco",
}

COLUMNS = [
    "assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
    "raw_score", "late_submission_penalty", "score", "max_score", "needs_manual_grade", "error",
]  # fmt: skip


def rows(root: Path = labs.REPO) -> list[dict]:
    from course.grading import results

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
                "assignment": result.lab, "student_id": result.student,
                "raw_score": _number(0), "late_submission_penalty": _number(0),
                "score": _number(0), "max_score": _number(100),
                "needs_manual_grade": 0, "error": shorten(result.error.splitlines()[0]),
            }  # fmt: skip
    return [found[key] for key in sorted(found)]


def _number(value) -> str:
    return f"{value or 0:g}"


def add_arguments(parser) -> None:
    parser.add_argument(
        "--output", "-o", default="notas.csv", metavar="ARCHIVO", help="archivo CSV o - (pantalla)"
    )
    parser.add_argument(
        "--excel", action="store_true",
        help="para hojas de cálculo en español (Excel, LibreOffice): punto y coma, coma"
        " decimal y BOM UTF-8",
    )  # fmt: skip


def main(args) -> int:
    return run(args.output, excel=args.excel)


def run(output: str = "notas.csv", root: Path = labs.REPO, excel: bool = False) -> int:
    table = rows(root)
    if excel:
        table = [row | {k: row[k].replace(".", ",") for k in NUMBERS} for row in table]
    if output == "-":
        _write(sys.stdout, table, excel)
        return 0
    try:
        with open(output, "w", newline="", encoding="utf-8-sig" if excel else "utf-8") as handle:
            _write(handle, table, excel)
    except OSError as error:
        reason = REASONS.get(error.errno, "el sistema no deja escribir el archivo")
        raise CourseError(
            f"No puedo escribir las notas en «{output}»: {reason}. Elige otra ruta con -o"
            " (p. ej. -o notas.csv)."
        ) from None
    print(f"{len(table)} notas escritas en {output}.")
    return 0


def _write(handle, table: list[dict], excel: bool = False) -> None:
    writer = csv.DictWriter(
        handle, fieldnames=COLUMNS, lineterminator="\n", delimiter=";" if excel else ","
    )
    writer.writeheader()
    writer.writerows({k: v if k in NUMBERS else inert(v) for k, v in row.items()} for row in table)


def inert(value):
    """``value`` sin controles (:func:`course.text.printable`) y, si una hoja de cálculo lo
    leería como fórmula, con un apóstrofo delante (``'+A1+1``), que la hoja muestra como
    texto."""
    if not isinstance(value, str):
        return value
    value = printable(value)  # sin secuencias de escape (``export -o -`` va al terminal)
    return "'" + value if value.startswith(FORMULA_START) else value
