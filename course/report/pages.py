"""Las páginas HTML del informe: una por laboratorio y un índice, sin nada de la red.

Cada página lleva plotly.js dentro y las figuras como datos JSON en
``<script type="application/json">`` (no se ejecutan); un solo guion, con el *nonce* de la
página, las dibuja. Todo texto que viene de una entrega o del libro de notas (nombres,
identificadores) pasa por :func:`html.escape`, y el JSON de las figuras no puede cerrar
su etiqueta (``<``, ``>`` y ``&`` van como ``\\u003c``…). La página declara además su
propia Content-Security-Policy: ningún guion sin el *nonce*.
"""

import functools
import html
import json
from collections.abc import Callable

from course.report import figures
from course.report.analysis import Item, LabReport

NotebookLink = Callable[[str], str | None]  # laboratorio -> URL de su cuaderno, o None

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; color: #212121;
       padding: 0 1rem; line-height: 1.45; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; width: 100%; }
th, td { border: 1px solid #bdbdbd; padding: 0.25rem 0.5rem; text-align: left;
         vertical-align: top; }
th { background: #eeeeee; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
.figura { min-height: 300px; margin: 1rem 0; }
.nota { color: #555; font-size: 0.92rem; }
nav a { margin-right: 1rem; }
@media print {
  body { margin: 0; max-width: none; font-size: 10pt; }
  nav, .solo-pantalla { display: none; }
  table, .figura, h2 { break-inside: avoid; page-break-inside: avoid; }
  h2 { break-after: avoid; page-break-after: avoid; }
  a { color: inherit; text-decoration: none; }
}
"""

DRAW = """
document.querySelectorAll("script.figura-datos").forEach(function (node) {
  var figure = JSON.parse(node.textContent);
  Plotly.newPlot(document.getElementById(node.dataset.para), figure.data, figure.layout,
                 {displayModeBar: false, responsive: true});
});
"""

EXPLAINED = (
    "<p class='nota'>Cada ejercicio (sus pruebas visible y oculta) y cada pregunta abierta es"
    " un ítem. <b>Dificultad</b> (índice p): la media de la proporción de puntos del ítem"
    " entre quienes entregaron (1 = todos con todos los puntos). <b>Discriminación</b>:"
    " correlación ítem-resto, la de Pearson entre los puntos del ítem y los del resto del"
    " laboratorio sin el ítem (punto-biserial corregida si el ítem es de todo o nada); por"
    " debajo de 0,2 el ítem apenas separa a quien domina el laboratorio. Un ejercicio está"
    " <b>intentado</b> si alguna prueba pasó de la plantilla sin hacer"
    " (<code>NotImplementedError</code>) y <b>superado</b> con todos sus puntos. Los errores"
    " con nombre son los que nombró el calificador al comparar, con las palabras de la"
    " prueba; cada estudiante cuenta una vez por ejercicio.</p>"
)


@functools.cache
def plotly_js() -> str:
    import plotly.offline

    return plotly.offline.get_plotlyjs()


def number(value: float | None, digits: int = 2) -> str:
    """``0,75``: coma decimal; «—» si no hay valor."""
    if value is None:
        return "—"
    return f"{value:.{digits}f}".replace(".", ",").replace("-", "−")


def points(value: float | None) -> str:
    return "—" if value is None else f"{value:g}".replace(".", ",")


def e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _json(data: object) -> str:
    """JSON que no puede cerrar su ``<script>`` ni abrir un comentario HTML."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _page(title: str, body: list[str], figure_data: dict[str, dict], nonce: str) -> str:
    policy = (
        f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'unsafe-inline';"
        " img-src data:; font-src data:; base-uri 'none'; form-action 'none'"
    )
    blocks = [
        f'<script type="application/json" class="figura-datos" data-para="{e(key)}">'
        f"{_json(figure)}</script>"
        for key, figure in figure_data.items()
    ]
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="es"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{e(policy)}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{e(title)}</title><style>{STYLE}</style></head><body>",
            *body,
            *blocks,
            f'<script nonce="{e(nonce)}">{plotly_js()}</script>',
            f'<script nonce="{e(nonce)}">{DRAW}</script>',
            "</body></html>",
        ]
    )


def _table(headers: list[str], rows: list[list[str]], numeric: set[int] = frozenset()) -> str:
    """Una tabla; las celdas ya vienen escapadas."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td class='n'>{c}</td>" if i in numeric else f"<td>{c}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _section(item: Item, lab: str, notebook: NotebookLink) -> str:
    """El apartado del cuaderno que enseña el ítem, con enlace si se sabe dónde está."""
    if not item.section:
        return ""
    href = notebook(lab)
    if href is None:
        return f"§ {e(item.section)}"
    return f'<a href="{e(href)}#{e(item.anchor)}">§ {e(item.section)}</a>'


def _figure(key: str) -> str:
    return f'<div class="figura" id="{e(key)}" role="img"></div>'


def lab_page(
    report: LabReport,
    names: dict[str, str],
    nonce: str,
    notebook: NotebookLink,
    anonymous: bool = False,
    index_href: str = "index.html",
) -> str:
    """La página de un laboratorio; con ``anonymous``, sin ningún nombre de estudiante."""
    total = sum(report.totals) / len(report.totals) if report.totals else None
    exercises = [i for i in report.items if not i.written]
    questions = [i for i in report.items if i.written]
    body = [
        f'<nav class="solo-pantalla"><a href="{e(index_href)}">← Informe de la clase</a></nav>',
        f"<h1>Informe de la clase · {e(report.lab)} · {e(report.title)}</h1>",
        _table(
            ["Entregas calificadas", "Sin entrega", "Sin calificar (error)", "Nota media"],
            [
                [
                    str(len(report.submitted)),
                    str(len(report.missing)),
                    str(len(report.failed)),
                    f"{number(None if total is None else 100 * total, 1)} %",
                ]
            ],
            {0, 1, 2, 3},
        ),  # fmt: skip
        EXPLAINED,
        "<h2>Ejercicios</h2>",
        _table(
            [
                "Ejercicio",
                "Apartado",
                "Puntos",
                "Entregas",
                "Intentaron",
                "Superaron",
                "Media",
                "Dificultad",
                "Discriminación",
            ],
            [
                [
                    e(i.name),
                    _section(i, report.lab, notebook),
                    points(i.max_points),
                    str(i.submitted),
                    str(i.attempted),
                    str(i.passed),
                    number(i.mean_points, 1),
                    number(i.difficulty),
                    number(i.discrimination),
                ]
                for i in exercises
            ],
            {2, 3, 4, 5, 6, 7, 8},
        ),  # fmt: skip
        _figure("resultado"),
        _figure("distribucion"),
        _figure("items"),
        "<h2>Errores con nombre</h2>",
        _mistakes_table(report, notebook),
        _figure("errores"),
        "<h2>Preguntas abiertas</h2>",
        _questions_table(questions),
    ]
    if not anonymous:
        body += _students(report, names)
    figure_data = {
        "resultado": figures.outcomes(report),
        "distribucion": figures.distribution(report),
        "items": figures.item_analysis(report),
        "errores": figures.mistakes(report),
    }
    return _page(f"Informe · {report.lab}", body, figure_data, nonce)


def _mistakes_table(report: LabReport, notebook: NotebookLink) -> str:
    rows = [
        [e(item.name), e(text), str(count), _section(item, report.lab, notebook)]
        for item in report.items
        for text, count in item.mistakes
    ]
    if not rows:
        return "<p>Ninguna prueba nombró un error típico en este laboratorio.</p>"
    return _table(
        ["Ejercicio", "Error (palabras de la prueba)", "Estudiantes", "Dónde se enseña"], rows, {2}
    )


def _questions_table(questions: list[Item]) -> str:
    if not questions:
        return "<p>Este laboratorio no tiene preguntas abiertas.</p>"
    labels = figures.bins()
    rows = [
        [e(q.name), e(q.section), points(q.max_points), str(q.pending), str(len(q.shares)),
         number(q.mean_points, 1),
         ", ".join(f"{label}: {n}" for label, n in zip(labels, q.histogram, strict=True) if n)
         or "—"]
        for q in questions
    ]  # fmt: skip
    return _table(
        ["Pregunta", "Apartado", "Puntos", "Pendientes de corregir", "Corregidas", "Media",
         "Distribución (tramo: estudiantes)"],
        rows, {2, 3, 4, 5},
    )  # fmt: skip


def _who(student: str, names: dict[str, str]) -> str:
    name = names.get(student, student)
    return e(name) if name == student else f"{e(name)} ({e(student)})"


def _students(report: LabReport, names: dict[str, str]) -> list[str]:
    """Solo para el profesor: los errores de cada estudiante y quién no entregó."""
    rows = [
        [_who(student, names), e(item), e(text)]
        for student, found in sorted(report.by_student.items())
        for item, text in found
    ]
    body = ["<h2>Por estudiante (solo para el profesor)</h2>"]
    body.append(
        _table(["Estudiante", "Ejercicio", "Error"], rows)
        if rows
        else "<p>Nadie tiene errores con nombre.</p>"
    )
    if report.missing:
        who = ", ".join(_who(s, names) for s in report.missing)
        body.append(f"<p><b>Sin entrega:</b> {who}</p>")
    if report.failed:
        who = ", ".join(_who(s, names) for s in report.failed)
        body.append(f"<p><b>Sin calificar (error del calificador o de la entrega):</b> {who}</p>")
    return body


def index_page(
    reports: list[LabReport],
    names: dict[str, str],
    nonce: str,
    lab_href: Callable[[str], str],
    anonymous: bool = False,
) -> str:
    """El índice: una fila por laboratorio y, para el profesor, las ideas de cada estudiante."""
    rows = []
    for r in reports:
        mean = 100 * sum(r.totals) / len(r.totals) if r.totals else None
        named = sum(count for item in r.items for _, count in item.mistakes)
        rows.append(
            [f'<a href="{e(lab_href(r.lab))}">{e(r.lab)}</a>', e(r.title),
             str(len(r.submitted)), str(len(r.missing)), str(len(r.failed)),
             f"{number(mean, 1)} %", str(named)]
        )  # fmt: skip
    body = [
        "<h1>Informe de la clase</h1>",
        _table(
            [
                "Laboratorio",
                "Título",
                "Entregas calificadas",
                "Sin entrega",
                "Sin calificar",
                "Nota media",
                "Errores nombrados",
            ],
            rows,
            {2, 3, 4, 5, 6},
        ),  # fmt: skip
        _figure("medias"),
    ]
    if not anonymous:
        body += _ideas(reports, names)
    return _page("Informe de la clase", body, {"medias": figures.lab_means(reports)}, nonce)


def _ideas(reports: list[LabReport], names: dict[str, str]) -> list[str]:
    """Cada estudiante, las ideas que aún falla y dónde (laboratorio · ejercicio)."""
    ideas: dict[str, dict[str, list[str]]] = {}
    for r in reports:
        for student, found in r.by_student.items():
            for item, text in found:
                ideas.setdefault(student, {}).setdefault(text, []).append(f"{r.lab} · {item}")
    rows = [
        [_who(student, names), e(text), e(", ".join(where))]
        for student in sorted(ideas)
        for text, where in ideas[student].items()
    ]
    table = _table(["Estudiante", "Idea que falla", "Dónde"], rows) if rows else "<p>Nadie.</p>"
    return ["<h2>Ideas que cada estudiante aún falla (solo para el profesor)</h2>", table]
