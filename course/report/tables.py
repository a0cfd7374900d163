"""Las tablas del informe en CSV, para hojas de cálculo en español.

Punto y coma entre columnas, coma decimal y BOM UTF-8 (como ``export --excel``); un texto
que una hoja leería como fórmula lleva un apóstrofo delante (``export.inert``): un
identificador de estudiante lo elige quien se matricula.
"""

import csv
from pathlib import Path

from course.commands.export import inert
from course.report.analysis import LabReport


class Number(str):
    """Una cifra ya escrita con coma decimal: no es texto de nadie, no lleva apóstrofo."""


def _number(value: float | None, digits: int = 3) -> Number:
    text = "" if value is None else f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return Number(text.replace(".", ","))


def write(path: Path, headers: list[str], rows: list[list]) -> Path:
    with open(path, "w", newline="", encoding="utf-8-sig") as handle:
        writer = csv.writer(handle, delimiter=";", lineterminator="\n")
        writer.writerow(headers)
        writer.writerows([c if isinstance(c, Number) else inert(c) for c in row] for row in rows)
    return path


def exercises(report: LabReport) -> tuple[list[str], list[list]]:
    headers = [
        "laboratorio", "item", "tipo", "apartado", "puntos_max", "entregas", "intentaron",
        "superaron", "pendientes", "media_puntos", "dificultad", "discriminacion",
    ]  # fmt: skip
    rows = [
        [report.lab, i.name, "pregunta" if i.written else "ejercicio", i.section,
         _number(i.max_points), i.submitted, i.attempted, i.passed, i.pending,
         _number(i.mean_points), _number(i.difficulty), _number(i.discrimination)]
        for i in report.items
    ]  # fmt: skip
    return headers, rows


def mistakes(report: LabReport) -> tuple[list[str], list[list]]:
    headers = ["laboratorio", "ejercicio", "error", "estudiantes", "apartado"]
    rows = [
        [report.lab, i.name, text, count, i.section]
        for i in report.items
        for text, count in i.mistakes
    ]
    return headers, rows


def students(report: LabReport, names: dict[str, str]) -> tuple[list[str], list[list]]:
    """Solo para el profesor: una fila por estudiante y error (o sin entrega)."""
    headers = ["laboratorio", "estudiante", "nombre", "ejercicio", "error"]
    rows = [
        [report.lab, student, names.get(student, student), item, text]
        for student, found in sorted(report.by_student.items())
        for item, text in found
    ]
    rows += [[report.lab, s, names.get(s, s), "", "sin entrega"] for s in report.missing]
    return headers, rows
