"""``python -m course feedback``: una página HTML por estudiante y laboratorio.

Sale de ``autograded/<estudiante>/<lab>/`` (lo que deja ``grade``) y se escribe en
``feedback/<estudiante>/<lab>/<lab>.html``, la ruta de ``nbgrader generate_feedback``,
así que ``nbgrader release_feedback`` la reparte igual. A diferencia de la de nbgrader,
no muestra el código de las pruebas ocultas (ni en la celda ni en la traza del error):
solo los puntos y el mensaje en español de cada prueba. Las notas manuales puestas en
Formgrader se toman de ``gradebook.db`` cuando existen.
"""

import copy
import html
import re
import warnings
from pathlib import Path

import nbformat

from course import labs
from course.grading import results

HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[ \t]*\n?", re.M | re.S)
REMOVED = "# (Pruebas ocultas retiradas de la devolución: abajo ves su resultado.)\n"


def run(
    lab_ids: list[str] | None = None, students: list[str] | None = None, root: Path = labs.REPO
) -> int:
    written = 0
    manual = _manual_scores(root / "gradebook.db")
    for result in results.read_all(root / "autograded"):
        if (lab_ids and result.lab not in lab_ids) or (students and result.student not in students):
            continue
        graded = root / "autograded" / result.student / result.lab / f"{result.lab}.ipynb"
        notebook = nbformat.read(graded, 4) if graded.exists() and not result.error else None
        for cell in result.cells:
            key = (result.student, result.lab, cell["grade_id"])
            if key in manual:
                cell["points"] = manual[key]
        target = root / "feedback" / result.student / result.lab / f"{result.lab}.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render(result, notebook), encoding="utf-8")
        written += 1
    print(f"{written} devoluciones escritas en feedback/.")
    return 0


def _manual_scores(db: Path) -> dict[tuple[str, str, str], float]:
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


def strip_hidden(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Copia sin el código de las pruebas ocultas ni las trazas de sus errores."""
    notebook = copy.deepcopy(notebook)
    for cell in notebook.cells:
        if "HIDDEN TESTS" not in cell.source:
            continue
        cell.source = HIDDEN.sub(REMOVED, cell.source).replace("HIDDEN TESTS", "")
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                output.traceback = [f"{output.ename}: {output.evalue}"]
    return notebook


def _points(value) -> str:
    return "pendiente" if value is None else f"{value:g}"


def summary(result: results.Result) -> str:
    """Tabla HTML en español: cada prueba con sus puntos y, si falló, su mensaje."""
    lab = labs.LABS[result.lab]
    graded = [c for c in result.cells if c["points"] is not None]
    total = sum(c["points"] for c in graded)
    rows = []
    for cell in result.cells:
        kind = (
            "prueba oculta" if cell["grade_id"].endswith("_oculta")
            else "prueba visible" if cell["grade_id"].endswith("_prueba")
            else "pregunta abierta" if cell["grade_id"].startswith("pregunta") else "ejercicio"
        )  # fmt: skip
        ok = cell["points"] is not None and cell["points"] >= cell["max_points"]
        message = cell["message"].splitlines()[0][:500] if cell["message"] and not ok else ""
        rows.append(
            f"<tr class='{'ok' if ok else 'fallo'}'><td>{html.escape(cell['grade_id'])}</td>"
            f"<td>{kind}</td><td>{_points(cell['points'])} / {cell['max_points']:g}</td>"
            f"<td>{html.escape(message)}</td></tr>"
        )
    head = (
        f"<h1>{html.escape(lab.title)} ({result.lab})</h1>"
        f"<p>Estudiante: <b>{html.escape(result.student)}</b> · calificado el {result.graded_at}</p>"
    )
    if result.error:
        return head + f"<p class='error'>No se pudo calificar: {html.escape(result.error)}</p>"
    pending = sum(c["max_points"] for c in result.cells if c["points"] is None)
    return head + (
        f"<p>Puntos: <b>{total:g} / {result.max_points:g}</b>"
        + (f" ({pending:g} pendientes de corrección manual)" if pending else "")
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


def render(result: results.Result, notebook: nbformat.NotebookNode | None) -> str:
    top = f"{STYLE}<div class='resumen'>{summary(result)}</div>"
    if notebook is None:
        return f"<!DOCTYPE html><html lang='es'><meta charset='utf-8'><body>{top}</body></html>"
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab")
    body, _ = exporter.from_notebook_node(strip_hidden(notebook))
    body = re.sub(r"<html[^>]*>", '<html lang="es">', body, count=1)
    body = re.sub(
        r"<title>.*?</title>",
        f"<title>Devolución · {result.lab}</title>",
        body,
        count=1,
        flags=re.S,
    )
    return re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + top, body, count=1)
