"""``python -m course feedback``: una página HTML por estudiante y laboratorio.

Sale de ``autograded/<estudiante>/<lab>/`` (lo que deja ``grade``) y se escribe en
``feedback/<estudiante>/<lab>/<lab>.html``, la ruta de ``nbgrader generate_feedback``,
así que ``nbgrader release_feedback`` la reparte igual. El cuaderno pasa por el mismo
filtro que usan ``nbgrader generate_feedback`` y Formgrader
(``course.grading.feedback.SafeFeedback``, con la configuración de
``nbgrader_config.py``): sin el código ni las salidas de las pruebas ocultas y con las
salidas recortadas. Encima, un resumen con los puntos de cada prueba, el mensaje de las
visibles y, de las ocultas que fallan, solo el error típico y la pista que el calificador
dejó para mostrar (``course.grading.diagnosis``). Las notas manuales puestas en Formgrader se toman de ``gradebook.db`` cuando
existen.
"""

import html
import re
from pathlib import Path
from typing import TYPE_CHECKING

from course import labs, notebooks
from course.labs import CourseError
from course.text import printable, student_message

if TYPE_CHECKING:  # el calificador (nbgrader, PyTorch) se importa al ejecutar la orden
    import nbformat

    from course.grading.results import Result

HELP = "escribe la devolución HTML de cada estudiante"


def add_arguments(parser) -> None:
    parser.add_argument("--lab", action="append", help="solo este laboratorio (repetible)")
    parser.add_argument(
        "--student", action="append", metavar="ESTUDIANTE", help="solo este estudiante (repetible)"
    )


def main(args) -> int:
    return run(lab_ids=args.lab, students=args.student)


def run(
    lab_ids: list[str] | None = None, students: list[str] | None = None, root: Path = labs.REPO
) -> int:
    import nbformat

    from course.grading import nbgrader_config, results
    from course.grading.feedback import SafeFeedback

    found = results.read_all(root / "autograded")
    _require_known(lab_ids, students, found)
    written = 0
    safe = SafeFeedback(config=nbgrader_config(root))
    for result in results.with_manual_scores(found, root / "gradebook.db"):
        if (lab_ids and result.lab not in lab_ids) or (students and result.student not in students):
            continue
        graded = root / "autograded" / result.student / result.lab / f"{result.lab}.ipynb"
        notebook = nbformat.read(graded, 4) if graded.exists() and not result.error else None
        hidden, named = _hidden_ids(notebook), _diagnoses(notebook)
        if notebook is not None:
            notebook, _ = safe.preprocess(notebook, {})
        target = root / "feedback" / result.student / result.lab / f"{result.lab}.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render(result, notebook, hidden, named), encoding="utf-8")
        written += 1
    print(f"{written} devoluciones escritas en feedback/.")
    return 0


def _require_known(
    lab_ids: list[str] | None, students: list[str] | None, found: list["Result"]
) -> None:
    """Un laboratorio o estudiante que no existe es un error (código 2) que lista los que hay."""
    for lab_id in lab_ids or []:
        labs.get(lab_id)
    known = sorted({result.student for result in found})
    for student in students or []:
        if student not in known:
            listed = ", ".join(known) if known else "ninguno (ejecuta antes python -m course grade)"
            raise CourseError(
                printable(
                    f"Estudiante desconocido: «{student}». Estudiantes calificados: {listed}."
                )
            )


def _hidden_ids(notebook: "nbformat.NotebookNode | None") -> set[str]:
    """Grade ids de las celdas que ``SafeFeedback`` trata como pruebas ocultas."""
    from course.grading.feedback import is_hidden_test

    cells = notebook.cells if notebook is not None else []
    return {
        notebooks.grade_id(cell)
        for cell in cells
        if notebooks.grade_id(cell) is not None and is_hidden_test(cell)
    }


def _diagnoses(notebook: "nbformat.NotebookNode | None") -> dict[str, list[str]]:
    """Grade id -> frases que el calificador dejó para mostrar de cada prueba que falló."""
    from course.grading.feedback import diagnosed

    cells = notebook.cells if notebook is not None else []
    found = {notebooks.grade_id(cell): diagnosed(cell) for cell in cells}
    return {grade_id: said for grade_id, said in found.items() if grade_id and said}


def _points(value) -> str:
    return "pendiente" if value is None else f"{value:g}"


def summary(result: "Result", hidden: set[str], named: dict[str, list[str]] | None = None) -> str:
    """Tabla HTML en español: cada prueba con sus puntos y, si falló, su mensaje.

    El de las pruebas ocultas (``hidden`` o ``*_oculta``) no, que puede citar la
    referencia: solo las frases de ``named`` (error típico y pista, sin valores).
    """
    lab = labs.LABS[result.lab]
    rows = []
    for cell in result.cells:
        secret = cell.grade_id in hidden or notebooks.is_hidden_test(cell.grade_id)
        kind = (
            "prueba oculta" if secret
            else "prueba visible" if notebooks.is_visible_test(cell.grade_id)
            else "pregunta abierta" if cell.written else "ejercicio"
        )  # fmt: skip
        ok = cell.points is not None and cell.points >= cell.max_points
        message = student_message(cell.message, 500) if not ok else ""
        if secret and not ok:
            said = (named or {}).get(cell.grade_id)
            message = (
                "no superada: " + " ".join(said)
                if said
                else "no superada (las pruebas ocultas no muestran su mensaje)"
            )
        rows.append(
            f"<tr class='{'ok' if ok else 'fallo'}'><td>{html.escape(cell.grade_id)}</td>"
            f"<td>{kind}</td><td>{_points(cell.points)} / {cell.max_points:g}</td>"
            f"<td>{html.escape(message)}</td></tr>"
        )
    head = (
        f"<h1>{html.escape(lab.title)} ({result.lab})</h1>"
        f"<p>Estudiante: <b>{html.escape(result.student)}</b> · calificado el {result.graded_at}</p>"
    )
    if result.error:
        reason = html.escape(student_message(result.error, 500))
        return head + f"<p class='error'>No se pudo calificar: {reason}</p>"
    pending = result.pending_max
    return head + (
        f"<p>Puntos: <b>{result.auto_points:g} / {result.max_points:g}</b>"
        + (f" ({pending:g} puntos pendientes de corrección manual)" if pending else "")
        + "</p><table><tr><th>celda</th><th>tipo</th><th>puntos</th><th>motivo</th></tr>"
        + "".join(rows)
        + "</table><h2>Tu cuaderno calificado</h2>"
    )


STYLE = (
    "<style>.resumen{font-family:sans-serif;max-width:1000px;margin:1em auto}"
    ".resumen table{border-collapse:collapse}.resumen td,.resumen th{border:1px solid #ccc;"
    "padding:4px 8px;text-align:left}.resumen .fallo{background:#fde8e8}"
    ".resumen .ok{background:#e8f6e8}</style>"
)


def render(
    result: "Result",
    notebook: "nbformat.NotebookNode | None",
    hidden: set[str],
    named: dict[str, list[str]] | None = None,
) -> str:
    """La página: el resumen y, debajo, ``notebook`` ya filtrado por ``SafeFeedback``."""
    top = f"{STYLE}<div class='resumen'>{summary(result, hidden, named)}</div>"
    if notebook is None:
        return f"<!DOCTYPE html><html lang='es'><meta charset='utf-8'><body>{top}</body></html>"
    from nbconvert import HTMLExporter

    from course.grading.feedback import offline_page

    exporter = HTMLExporter(template_name="lab")
    body, _ = exporter.from_notebook_node(notebook)
    body = re.sub(r"<html[^>]*>", '<html lang="es">', body, count=1)
    body = re.sub(
        r"<title>.*?</title>",
        f"<title>Devolución · {result.lab}</title>",
        body,
        count=1,
        flags=re.S,
    )
    return offline_page(re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + top, body, count=1))
