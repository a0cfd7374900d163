"""Leer un cuaderno que escribió un usuario, con errores en español (calificar y ``check``)."""

from pathlib import Path

import nbformat

from course.labs import CourseError, Lab, available


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


def identify(notebook: nbformat.NotebookNode, copy: str) -> Lab:
    """El laboratorio cuyas celdas calificadas más se parecen a las del cuaderno.

    ``copy`` elige con qué cuaderno de cada laboratorio se compara: ``"source"`` (el
    repositorio del profesor) o ``"release"`` (el paquete del estudiante).
    """
    ids = grade_ids(notebook)
    scored = [
        (len(ids & grade_ids(nbformat.read(path, 4))), lab)
        for lab in available()
        if (path := getattr(lab, copy)).exists()
    ]
    best, lab = max(scored, key=lambda pair: pair[0], default=(0, None))
    if best == 0:
        raise CourseError(
            "No se reconoce el laboratorio de este cuaderno: no tiene ninguna celda calificada"
            " del curso. Indica cuál es con --lab (p. ej. --lab 01_atencion)."
        )
    return lab
