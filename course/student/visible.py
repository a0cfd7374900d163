"""Pruebas visibles de un cuaderno, sin nbgrader: ``check`` en el paquete del estudiante.

El paquete del estudiante no lleva las pruebas ocultas ni el calificador. ``check`` ejecuta
entonces una copia del cuaderno de arriba abajo, como «Ejecutar todo» en JupyterLab, y
dice qué pruebas visibles (celdas ``*_prueba``) pasan. Las ocultas las pasa el profesor
al calificar la entrega.
"""

import subprocess
import sys
from pathlib import Path

import nbformat

from course import labs, notebooks
from course.text import student_message

CELL_TIMEOUT_S = 600


def run(path: Path, lab_id: str | None = None) -> int:
    notebook = notebooks.read(path)
    lab = labs.get(lab_id) if lab_id else notebooks.identify(notebook, "release")
    print(f"Ejecuto una copia de {path.name} (el archivo no cambia)…", file=sys.stderr)
    print(report(lab, execute(notebook, path.parent)))
    return 0


def execute(notebook: nbformat.NotebookNode, folder: Path) -> nbformat.NotebookNode:
    """Ejecuta ``notebook`` (una copia en memoria) en un núcleo nuevo, desde ``folder``."""
    from nbclient import NotebookClient

    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        allow_errors=True,
        kernel_name="python3",
        resources={"metadata": {"path": str(folder)}},
    )
    # lo que el núcleo escribe en stderr (avisos de jupyter en inglés) no llega al estudiante
    return client.execute(stderr=subprocess.DEVNULL)


def _error(cell: nbformat.NotebookNode) -> str | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return output.get("evalue") or output.get("ename", "error")
    return None


def report(lab: labs.Lab, notebook: nbformat.NotebookNode) -> str:
    """Una línea por prueba visible y, al final, qué queda para la calificación."""
    lines = [f"Laboratorio {lab.id} · {lab.title} · pruebas visibles", ""]
    passed = total = hidden = manual = 0
    for cell in notebook.cells:
        if not notebooks.is_graded(cell):
            continue
        points, grade_id = notebooks.points(cell), notebooks.grade_id(cell)
        if cell.cell_type != "code":
            manual += points
        elif not notebooks.is_visible_test(grade_id):
            hidden += points
        else:
            total += points
            error = _error(cell)
            passed += 0 if error else points
            mark = f"✘ {grade_id:<28} {student_message(error)}" if error else None
            lines.append(mark or f"✔ {grade_id}")
    lines += [
        "",
        f"Pruebas visibles superadas: {passed:g} / {total:g} puntos.",
        f"Las pruebas ocultas ({hidden:g} puntos) no van en el paquete del estudiante: las"
        " pasa tu profesor al calificar la entrega.",
        f"Preguntas abiertas: {manual:g} puntos, de corrección manual.",
    ]
    return "\n".join(lines)
