"""La página de devolución, la misma por cualquier puerta.

``python -m course feedback`` y ``nbgrader generate_feedback`` (el botón «Generar
devolución» de Formgrader, que usa ``FeedbackExporter``) escriben esta página: un resumen
en español con los puntos de cada prueba, el mensaje de las visibles y, de las ocultas que
fallan, solo el error típico y la pista que el calificador dejó para mostrar
(``course.grading.diagnosis``); las notas y los comentarios que puso una persona en
Formgrader (``gradebook.db``); y debajo el cuaderno calificado, ya filtrado por
``SafeFeedback`` (sin pruebas ocultas), sin ningún guion y con las fórmulas en MathML.
"""

import html
import re
import warnings
from dataclasses import dataclass, field

import nbformat

from course import labs, notebooks
from course.grading.feedback import offline_page
from course.grading.results import Result
from course.text import student_message


@dataclass
class Graders:
    """Lo que puso una persona en Formgrader para una entrega: notas y comentarios por
    grade id de celda."""

    scores: dict[str, float] = field(default_factory=dict)
    comments: dict[str, str] = field(default_factory=dict)


def from_gradebook(db_url: str | None, student: str, lab: str) -> Graders:
    """Las notas y comentarios manuales de ``student`` en ``lab``; ninguno si el libro de
    notas no tiene esa entrega."""
    from nbgrader.api import Gradebook, MissingEntry

    found = Graders()
    if not db_url:
        return found
    with warnings.catch_warnings(), Gradebook(db_url) as gradebook:
        warnings.simplefilter("ignore")  # avisos internos de SQLAlchemy en nbgrader
        try:
            submission = gradebook.find_submission(lab, student)
        except MissingEntry:
            return found
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                if grade.manual_score is not None:
                    found.scores[grade.name] = grade.manual_score
            for comment in notebook.comments:
                if (comment.manual_comment or "").strip():
                    found.comments[comment.name] = comment.manual_comment.strip()
    return found


def with_graders(result: Result, graders: Graders) -> Result:
    """``result`` con las notas manuales en lugar de las automáticas (lo que cuenta
    nbgrader: la nota manual, si la hay)."""
    for cell in result.cells:
        if cell.grade_id in graders.scores:
            cell.points = graders.scores[cell.grade_id]
    return result


def _points(value) -> str:
    return "pendiente" if value is None else f"{value:g}"


def summary(result: Result, hidden: set[str], named: dict[str, list[str]] | None = None) -> str:
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
        + "</table>"
    )


def comments_section(comments: dict[str, str]) -> str:
    """Los comentarios del profesor, por celda; nada si no hay ninguno."""
    if not comments:
        return ""
    items = "".join(
        f"<li><b>{html.escape(grade_id)}</b>: {html.escape(text)}</li>"
        for grade_id, text in sorted(comments.items())
    )
    return f"<h2>Comentarios del profesor</h2><ul class='comentarios'>{items}</ul>"


STYLE = (
    "<style>.resumen{font-family:sans-serif;max-width:1000px;margin:1em auto}"
    ".resumen table{border-collapse:collapse}.resumen td,.resumen th{border:1px solid #ccc;"
    "padding:4px 8px;text-align:left}.resumen .fallo{background:#fde8e8}"
    ".resumen .ok{background:#e8f6e8}.comentarios{white-space:pre-wrap}</style>"
)


def render(
    result: Result,
    notebook: nbformat.NotebookNode | None,
    hidden: set[str],
    named: dict[str, list[str]] | None = None,
    comments: dict[str, str] | None = None,
) -> str:
    """La página: el resumen, los comentarios y, debajo, ``notebook`` ya filtrado por
    ``SafeFeedback``."""
    parts = [summary(result, hidden, named)]
    if not result.error:
        parts += [comments_section(comments or {}), "<h2>Tu cuaderno calificado</h2>"]
    top = f"{STYLE}<div class='resumen'>{''.join(parts)}</div>"
    if notebook is None:
        return f"<!DOCTYPE html><html lang='es'><meta charset='utf-8'><body>{top}</body></html>"
    from nbconvert import HTMLExporter

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
