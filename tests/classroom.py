"""Una clase de prueba en una carpeta temporal, con la estructura de nbgrader.

Las pruebas que califican una clase entera (``course grade``, ``nbgrader autograde``,
Formgrader) la montan igual: una copia del curso y una entrega por estudiante en
``submitted/<estudiante>/<laboratorio>/<laboratorio>.ipynb``.
"""

import shutil
from pathlib import Path

from course import labs


def course_copy(root: Path) -> Path:
    """``source/``, ``release/`` y ``nbgrader_config.py`` del repositorio en ``root``: la
    prueba no toca el repositorio."""
    for folder in ("source", "release"):
        shutil.copytree(labs.REPO / folder, root / folder)
    shutil.copyfile(labs.REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    return root


def submission(root: Path, student: str, lab: labs.Lab) -> Path:
    """Dónde nbgrader busca la entrega de ``student`` (las carpetas ya creadas)."""
    folder = root / "submitted" / student / lab.id
    folder.mkdir(parents=True)
    return folder / f"{lab.id}.ipynb"
