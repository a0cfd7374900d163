"""La única regla para los nombres que entran en el curso desde fuera.

Un nombre de estudiante, de laboratorio o de archivo de una entrega lo escribe otra
persona (una carpeta de ``submitted/``, un zip del aula virtual, ``nbgrader submit``, un
usuario del servidor de clase) y acaba en rutas, en ``gradebook.db``, en la terminal y en
las páginas de Formgrader. Solo vale si tiene letras sin tilde (``a-z``, ``A-Z``), cifras
y los signos ``.``, ``_`` y ``-``, no empieza por ``.`` ni por ``-`` y tiene como mucho
:data:`MAX_LENGTH` caracteres: así no puede ser HTML, ni una ruta, ni una opción.

Dos nombres que solo difieren en mayúsculas (``Ana`` y ``ana``) son el mismo
(:func:`key`): no se convierten a minúsculas (la carpeta ``submitted/Ana`` sigue
llamándose así en el libro de notas), pero si llegan los dos es un error que nombra a
ambos (:func:`clashes`); no se elige ninguno.
"""

import re

from course.labs import CourseError
from course.text import printable, shorten

MAX_LENGTH = 64
ALLOWED = (
    f"solo letras sin tilde (a-z, A-Z), cifras y los signos «.», «_» y «-», sin empezar"
    f" por «.» ni por «-», y como mucho {MAX_LENGTH} caracteres"
)
RULE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")


class BadName(CourseError):
    """Un nombre que no cumple la regla; el mensaje dice cuál es y qué se permite."""


def problem(name: str, what: str) -> str:
    """Por qué ``name`` no vale como ``what`` («estudiante», «laboratorio», «archivo»);
    vacío si vale."""
    if len(name) <= MAX_LENGTH and RULE.fullmatch(name):
        return ""
    return f"«{shown(name)}» no vale como nombre de {what}: {ALLOWED}"


def check(name: str, what: str) -> str:
    """``name`` si cumple la regla; si no, :class:`BadName` con el motivo en español."""
    reason = problem(name, what)
    if reason:
        raise BadName(reason + ".")
    return name


def key(name: str) -> str:
    """La identidad de un nombre: ``Ana`` y ``ana`` son la misma."""
    return name.lower()


def clashes(names: list[str]) -> dict[str, list[str]]:
    """Los nombres distintos que comparten identidad, agrupados por :func:`key`."""
    groups: dict[str, set[str]] = {}
    for name in names:
        groups.setdefault(key(name), set()).add(name)
    return {k: sorted(same) for k, same in groups.items() if len(same) > 1}


def shown(name: str) -> str:
    """Un nombre que no se cree, para mostrarlo: sin controles de terminal y recortado."""
    return printable(shorten(name, 80))
