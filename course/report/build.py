"""El informe completo: una página por laboratorio, el índice y sus tablas en CSV."""

import os
import secrets
from pathlib import Path

from course.report import analysis, pages, stored, tables

INDEX = "index.html"


def lab_file(lab_id: str) -> str:
    return f"{lab_id}.html"


def reports(root: Path, lab_ids: list[str] | None = None) -> tuple[stored.Classroom, list]:
    """La clase guardada en ``root`` y el análisis de cada laboratorio con entregas."""
    room = stored.load(root)
    chosen = [lab for lab in room.labs if not lab_ids or lab in lab_ids]
    return room, [analysis.analyse(room, lab) for lab in chosen]


def write(
    root: Path, out: Path, lab_ids: list[str] | None = None, anonymous: bool = False
) -> list[Path]:
    """Escribe el informe de ``root`` en ``out``; devuelve los archivos escritos."""
    room, found = reports(root, lab_ids)
    names = {} if anonymous else room.names
    out.mkdir(parents=True, exist_ok=True)
    nonce = secrets.token_urlsafe(16)
    written = []

    def notebook(lab_id: str) -> str:
        return Path(_relative(root / "release" / lab_id / f"{lab_id}.ipynb", out)).as_posix()

    for report in found:
        page = pages.lab_page(report, names, nonce, notebook, anonymous)
        written.append(_text(out / lab_file(report.lab), page))
        written.append(
            tables.write(out / f"{report.lab}_ejercicios.csv", *tables.exercises(report))
        )
        written.append(tables.write(out / f"{report.lab}_errores.csv", *tables.mistakes(report)))
        if not anonymous:
            path = out / f"{report.lab}_estudiantes.csv"
            written.append(tables.write(path, *tables.students(report, names)))
    index = pages.index_page(found, names, nonce, lab_file, anonymous)
    written.append(_text(out / INDEX, index))
    return written


def _text(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _relative(target: Path, start: Path) -> str:
    return os.path.relpath(target.resolve(), start.resolve())
