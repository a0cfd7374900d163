"""El progreso del que estudia solo: lo que guardó su última ``check`` de cada laboratorio.

``python -m course check`` guarda, por laboratorio, los puntos de cada celda y los errores
que nombró el calificador en ``$XDG_STATE_HOME/transformer-es/progreso/<lab>.json``
(``~/.local/state`` si no está definido): nunca los mensajes de las pruebas, que pueden
citar valores de la referencia. ``python -m course progreso`` lo resume: puntos, errores
nombrados la última vez y qué apartado del cuaderno repasar.
"""

import json
import os
import time
from pathlib import Path

from course import labs, notebooks
from course.text import printable


def folder() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "transformer-es" / "progreso"


def save(result, notebook: Path) -> Path:
    """Guarda lo que ``check`` calificó en ``result`` (un ``course.grading.Result``)."""
    record = {
        "lab": result.lab,
        "notebook": str(notebook.resolve()),
        "checked_at": time.strftime("%Y-%m-%d %H:%M"),
        "cells": [
            {"grade_id": c.grade_id, "points": c.points, "max_points": c.max_points,
             "mistakes": list(c.mistakes)}
            for c in result.cells
        ],
    }  # fmt: skip
    target = folder() / f"{result.lab}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")
    temporary.replace(target)
    return target


def load(lab_id: str) -> dict | None:
    """Lo guardado de ``lab_id``; ``None`` si nunca se comprobó o el archivo no se entiende."""
    try:
        record = json.loads((folder() / f"{lab_id}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("lab") == lab_id else None


def _points(value: float) -> str:
    return f"{value:g}".replace(".", ",")


def summary(lab: labs.Lab, record: dict) -> list[str]:
    """Las líneas de un laboratorio comprobado."""
    from course.report.analysis import item_of, layout

    items: dict[str, list[dict]] = {}
    for cell in record["cells"]:
        name = item_of(cell["grade_id"])
        if name is not None and not notebooks.is_written(name):
            items.setdefault(name, []).append(cell)
    got = sum(c["points"] or 0 for cells in items.values() for c in cells)
    most = sum(c["max_points"] for cells in items.values() for c in cells)
    lines = [
        f"{lab.id} · {lab.title}: {_points(got)} / {_points(most)} puntos automáticos"
        f" (comprobado el {record.get('checked_at', '?')})"
    ]
    _, sections = layout(lab)
    review = []
    for name, cells in items.items():
        score = sum(c["points"] or 0 for c in cells)
        maximum = sum(c["max_points"] for c in cells)
        mark = "✔" if score >= maximum else "✘"
        lines.append(f"  {mark} {name:<24} {_points(score)} / {_points(maximum)}")
        named = list(dict.fromkeys(m for c in cells for m in c.get("mistakes", [])))
        lines += [f"      error: {text}" for text in named]
        if score < maximum and sections.get(name, ("", ""))[0]:
            review.append(f"§ {sections[name][0]}")
    if review:
        lines.append("  Repasa en el cuaderno: " + "; ".join(dict.fromkeys(review)))
    return lines


def report() -> str:
    """El progreso de todos los laboratorios, comprobados o no."""
    lines = ["Tu progreso según la última «python -m course check» de cada laboratorio", ""]
    for lab in labs.available():
        record = load(lab.id)
        if record is None:
            lines.append(f"{lab.id} · {lab.title}: sin comprobar todavía")
        else:
            lines += summary(lab, record)
        lines.append("")
    return printable("\n".join(lines).rstrip(), multiline=True)
