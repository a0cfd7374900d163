"""Quién entregó: del nombre de la carpeta de una entrega, el estudiante.

La carpeta la nombra nbgrader (``submitted/<estudiante>/``), el servidor de clase o el
aula virtual, pero el nombre viene de fuera: solo vale si cumple la regla de
``course.names``. Moodle («Descargar todas las entregas») nombra cada carpeta
``Nombre Apellido_12345_assignsubmission_file_`` (y ``…_assignsubmission_onlinetext_``):
el estudiante es el número, y el nombre completo se guarda solo para mostrarlo. Moodle
cambia cada ``_`` del nombre por un espacio, así que el primer ``_`` separa el nombre del
número. Ese número es el identificador del participante en esa tarea de Moodle (el mismo
en cada descarga de la tarea, pero otro en otra tarea).
"""

import re
from dataclasses import dataclass

from course import names
from course.text import printable, shorten

MOODLE = re.compile(r"(?P<name>[^_]+)_(?P<id>\d+)_assignsubmission_[a-z]+_")
DISPLAY_MAX = 80


@dataclass(frozen=True)
class Student:
    """El estudiante de una carpeta: su identificador y el nombre que se muestra."""

    id: str
    name: str = ""  # nombre completo (carpeta de Moodle); vacío si no se sabe


def identify(folder: str) -> Student:
    """El estudiante de la carpeta ``folder``; :class:`course.names.BadName` si no vale."""
    moodle = MOODLE.fullmatch(folder)
    if moodle:
        name = printable(shorten(" ".join(moodle["name"].split()), DISPLAY_MAX))
        return Student(names.check(moodle["id"], "estudiante"), name)
    return Student(names.check(folder, "estudiante"))


def refusal(folder: str) -> str:
    """Por qué la carpeta ``folder`` no dice quién entregó (vacío si lo dice)."""
    try:
        identify(folder)
    except names.BadName as bad:
        return str(bad)
    return ""
