"""Cuadernos del curso: leer el de un usuario, con errores en español, y entender sus celdas.

Lo que nbgrader guarda de cada celda (``metadata["nbgrader"]``: ``grade_id``, ``grade``,
``solution``, ``locked``, ``points``) se lee solo con las funciones de aquí, y el tipo de
celda que dice su ``grade_id`` (la convención de ``source/*.ipynb``) también:

- ``ej<N>_<nombre>``: la respuesta de un ejercicio;
- ``ej<N>_<nombre>_prueba``: sus pruebas visibles (van en el cuaderno del estudiante);
- ``ej<N>_<nombre>_oculta``: sus pruebas ocultas (solo al calificar);
- ``pregunta_<N>``: una respuesta escrita, de corrección manual;
- ``preparacion``: la celda de importaciones del laboratorio.
"""

import copy
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
            " Recupera una versión anterior (Archivo > Devolver Cuaderno al punto de control…) o descarga"
            " de nuevo el cuaderno del laboratorio."
        ) from None
    return notebook


VISIBLE_TEST = "_prueba"
HIDDEN_TEST = "_oculta"
WRITTEN = "pregunta"
SETUP = "preparacion"
EXERCISE = "ej"


def nbgrader(cell) -> dict:
    """Los metadatos de nbgrader de la celda (``{}`` si no es de nbgrader)."""
    return cell.get("metadata", {}).get("nbgrader", {})


def grade_id(cell) -> str | None:
    return nbgrader(cell).get("grade_id")


def is_graded(cell) -> bool:
    """Celda que da puntos: de pruebas o de respuesta calificada a mano."""
    return bool(nbgrader(cell).get("grade"))


def is_solution(cell) -> bool:
    """Celda que escribe el estudiante (una respuesta)."""
    return bool(nbgrader(cell).get("solution"))


def is_locked(cell) -> bool:
    return bool(nbgrader(cell).get("locked"))


def is_test(cell) -> bool:
    """Celda de pruebas, visibles u ocultas: da puntos y el estudiante no la escribe."""
    return is_graded(cell) and not is_solution(cell)


def points(cell) -> float:
    return nbgrader(cell).get("points", 0)


def forget(cell) -> None:
    """Quita a la celda sus metadatos de nbgrader: se ejecuta como una celda normal."""
    cell.get("metadata", {}).pop("nbgrader", None)


def copy_nbgrader(source, cell) -> None:
    """Pone en ``cell`` una copia de los metadatos de nbgrader de ``source``."""
    cell.metadata["nbgrader"] = copy.deepcopy(nbgrader(source))


def grade_ids(notebook: nbformat.NotebookNode) -> set[str]:
    """Los ``grade_id`` de nbgrader de las celdas del cuaderno."""
    return {grade_id(cell) for cell in notebook.cells if grade_id(cell) is not None}


def is_visible_test(grade_id: str) -> bool:
    return grade_id.endswith(VISIBLE_TEST)


def is_hidden_test(grade_id: str) -> bool:
    return grade_id.endswith(HIDDEN_TEST)


def is_written(grade_id: str) -> bool:
    """Una respuesta escrita (``pregunta_N``): la corrige una persona."""
    return grade_id.startswith(WRITTEN)


def is_setup(grade_id: str | None) -> bool:
    return grade_id == SETUP


def is_exercise(grade_id: str) -> bool:
    """De un ejercicio (su respuesta o sus pruebas), no una pregunta ni una explicación."""
    return grade_id.startswith(EXERCISE)


def exercise(grade_id: str) -> str:
    """El ejercicio de una celda: ``ej1_puntuaciones_oculta`` -> ``ej1_puntuaciones``;
    ``pregunta_2`` y las respuestas, igual."""
    for suffix in (VISIBLE_TEST, HIDDEN_TEST):
        if grade_id.endswith(suffix):
            return grade_id.removesuffix(suffix)
    return grade_id


def visible_test(exercise: str) -> str:
    """El ``grade_id`` de las pruebas visibles de ``exercise``."""
    return exercise + VISIBLE_TEST


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
