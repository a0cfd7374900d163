"""Leer un cuaderno que escribió un usuario, con errores en español (calificar y ``check``)."""

from pathlib import Path

import nbformat

from course.labs import CourseError


def read(path: Path) -> nbformat.NotebookNode:
    """Lee y valida un cuaderno; cualquier problema es un ``CourseError`` que dice qué hacer."""
    if not path.exists():
        raise CourseError(f"No existe el archivo «{path}». Revisa la ruta.")
    if path.is_dir() or path.suffix != ".ipynb":
        raise CourseError(
            f"«{path}» no es un cuaderno (.ipynb). Indica el archivo del laboratorio."
        )
    try:
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
    except (ValueError, TypeError, AttributeError, KeyError, nbformat.ValidationError) as error:
        raise CourseError(
            f"«{path}» no es un cuaderno válido (JSON dañado o incompleto: {error})."
            " Recupera una versión anterior (Archivo > Revertir a punto de control) o descarga"
            " de nuevo el cuaderno del laboratorio."
        ) from None
    return notebook


def grade_ids(notebook: nbformat.NotebookNode) -> set[str]:
    """Los ``grade_id`` de nbgrader de las celdas del cuaderno."""
    return {
        cell.metadata["nbgrader"]["grade_id"]
        for cell in notebook.cells
        if "grade_id" in cell.get("metadata", {}).get("nbgrader", {})
    }
