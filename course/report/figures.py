"""Las figuras del informe como datos de plotly (``data`` y ``layout``), en español.

Solo llevan nombres de ejercicios, frases del curso y cifras: ningún nombre de
estudiante. Los textos se escapan como HTML, porque plotly interpreta algunas etiquetas
(``<br>``, ``<a>``) en sus rótulos; los únicos ``<br>`` son los que se ponen aquí para
partir líneas largas.
"""

import html
import textwrap

from course.report.analysis import BINS, LabReport

SEPARATORS = ",."  # coma decimal, punto de miles
FONT = {"family": "system-ui, sans-serif", "size": 13}
COLOURS = {"superado": "#2e7d32", "intentado": "#f9a825", "sin intentar": "#9e9e9e"}
TOP_MISTAKES = 15
LABEL_WIDTH = 48  # caracteres por línea de un rótulo largo


def bins() -> list[str]:
    """Los rótulos de los tramos de 10 %: «0–10 %», …, «90–100 %»."""
    step = 100 // BINS
    return [f"{i * step}–{(i + 1) * step} %" for i in range(BINS)]


def _count_axis(largest: int, title: str = "estudiantes") -> dict:
    """Un eje de recuentos: marcas enteras (ni «0,5» ni «1,5 estudiantes»), unas 8 como mucho."""
    return {"title": {"text": title}, "rangemode": "tozero", "dtick": max(1, -(-largest // 8))}


def _label(text: str, width: int = LABEL_WIDTH) -> str:
    return "<br>".join(html.escape(line) for line in textwrap.wrap(text, width)) or " "


def _layout(title: str, **extra) -> dict:
    return {
        "title": {"text": html.escape(title)},
        "separators": SEPARATORS,
        "font": FONT,
        "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        **extra,
    }


def outcomes(report: LabReport) -> dict:
    """Barras apiladas por ejercicio: superado, intentado sin superar, sin intentar."""
    exercises = [item for item in report.items if not item.written]
    names = [html.escape(item.name) for item in exercises]
    counts = {
        "superado": [item.passed for item in exercises],
        "intentado": [item.attempted - item.passed for item in exercises],
        "sin intentar": [len(item.shares) - item.attempted for item in exercises],
    }
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "name": html.escape(label),
            "y": names,
            "x": values,
            "marker": {"color": COLOURS[label]},
            "hovertemplate": "%{y}: %{x} estudiantes<extra>" + html.escape(label) + "</extra>",
        }  # fmt: skip
        for label, values in counts.items()
    ]
    layout = _layout(
        "Resultado por ejercicio",
        barmode="stack",
        xaxis=_count_axis(max((len(i.shares) for i in exercises), default=0)),
        yaxis={"autorange": "reversed", "automargin": True},
        legend={"orientation": "h", "y": -0.2},
        height=120 + 34 * len(exercises),
    )
    return {"data": data, "layout": layout}


def distribution(report: LabReport) -> dict:
    """Cuántos estudiantes hay en cada tramo de la nota del laboratorio (ya calificado)."""
    from course.report.analysis import histogram

    data = [
        {
            "type": "bar",
            "x": bins(),
            "y": histogram(report.totals),
            "marker": {"color": "#1565c0"},
            "hovertemplate": "%{x}: %{y} estudiantes<extra></extra>",
        }  # fmt: skip
    ]
    layout = _layout(
        "Distribución de la nota del laboratorio",
        xaxis={"title": {"text": "proporción de los puntos calificados"}},
        yaxis=_count_axis(max(histogram(report.totals))),
        height=360,
    )
    return {"data": data, "layout": layout}


def item_analysis(report: LabReport) -> dict:
    """Dificultad frente a discriminación, un punto por ítem con las dos cifras."""
    shown = [i for i in report.items if i.difficulty is not None and i.discrimination is not None]
    data = [
        {
            "type": "scatter",
            "mode": "markers+text",
            "x": [i.difficulty for i in shown],
            "y": [i.discrimination for i in shown],
            "text": [html.escape(i.name) for i in shown],
            "textposition": "top center",
            "marker": {"size": 10, "color": "#6a1b9a"},
            "hovertemplate": "%{text}<br>dificultad %{x:.2f}<br>discriminación %{y:.2f}"
            "<extra></extra>",
        }  # fmt: skip
    ]
    guide = {"type": "line", "x0": 0, "x1": 1, "y0": 0.2, "y1": 0.2, "line": {"dash": "dot"}}
    layout = _layout(
        "Dificultad y discriminación por ítem",
        xaxis={"title": {"text": "dificultad p (media de la proporción de puntos)"},
               "range": [-0.05, 1.05]},
        yaxis={"title": {"text": "discriminación (correlación ítem-resto)"}, "range": [-1.05, 1.05]},
        shapes=[guide],
        height=420,
    )  # fmt: skip
    return {"data": data, "layout": layout}


def mistakes(report: LabReport) -> dict:
    """Los errores con nombre más frecuentes del laboratorio (estudiantes por error)."""
    rows = sorted(
        ((count, item.name, text) for item in report.items for text, count in item.mistakes),
        key=lambda row: (-row[0], row[1], row[2]),
    )[:TOP_MISTAKES]
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "x": [count for count, _, _ in rows],
            "y": [_label(f"{name}: {text}") for _, name, text in rows],
            "marker": {"color": "#c62828"},
            "hovertemplate": "%{x} estudiantes<extra></extra>",
        }  # fmt: skip
    ]
    layout = _layout(
        "Errores con nombre más frecuentes",
        xaxis=_count_axis(max((count for count, _, _ in rows), default=0)),
        yaxis={"autorange": "reversed", "automargin": True},
        height=140 + 52 * max(1, len(rows)),
    )
    return {"data": data, "layout": layout}


def lab_means(reports: list[LabReport]) -> dict:
    """La media de la nota (proporción de lo calificado) de cada laboratorio."""
    means = [sum(r.totals) / len(r.totals) if r.totals else None for r in reports]
    data = [
        {
            "type": "bar",
            "x": [r.lab for r in reports],
            "y": [None if m is None else 100 * m for m in means],
            "marker": {"color": "#1565c0"},
            "hovertemplate": "%{x}: %{y:.1f} %<extra></extra>",
        }  # fmt: skip
    ]
    layout = _layout(
        "Nota media por laboratorio",
        yaxis={"title": {"text": "% de los puntos calificados"}, "range": [0, 100]},
        xaxis={"title": {"text": "laboratorio"}},
        height=360,
    )
    return {"data": data, "layout": layout}
