"""Antes y después de cada entrega por las puertas de nbgrader (``nbgrader autograde``,
``nbgrader generate_feedback`` y sus botones en Formgrader).

- **Antes de calificar**, :func:`before_autograde` define el laboratorio en
  ``gradebook.db`` si no está (tarea, cuadernos y celdas, copiados del curso preparado
  que genera ``course.grading`` desde ``source/``, como ``python -m course build``). Sin
  esto, en un clon recién hecho ``nbgrader autograde`` se detenía con «No assignment with
  ID … exists in the database» hasta ejecutar ``course build``.
- **Después**, :func:`give_to_course_owner`: si la puerta corre como root, lo que acaba
  de escribir (``autograded/`` o ``feedback/`` de esa entrega, y ``gradebook.db``) pasa
  a ser del dueño de la carpeta del curso. Antes quedaba de root, y la siguiente
  calificación como profesor fallaba (``PermissionError``).

nbgrader llama a los ganchos con ``notebooks``: las rutas de los cuadernos de la entrega
(``<curso>/<paso>/<estudiante>/<lab>/<cuaderno>.ipynb``, la estructura de carpetas de
nbgrader que usa el curso); de ahí salen el curso, el estudiante y el laboratorio.
"""

import contextlib
import os
import sqlite3
from pathlib import Path

from course import labs
from course.labs import CourseError

GRADEBOOK = "gradebook.db"


def _entry(notebooks: list) -> tuple[Path, str, str, str] | None:
    """(carpeta del curso, paso, estudiante, laboratorio) de la entrega, si se reconoce.
    Rutas absolutas sin resolver enlaces: las da nbgrader a partir de la carpeta del curso."""
    if not notebooks:
        return None
    lab = Path(os.path.abspath(notebooks[0])).parent
    return lab.parents[2], lab.parents[1].name, lab.parent.name, lab.name


def before_autograde(assignment=None, student=None, notebooks=None) -> None:
    """``Autograde.pre_convert_hook``: el laboratorio en el libro de notas, si falta."""
    entry = _entry(notebooks or [])
    if entry is None:
        return
    root, _, _, lab_id = entry
    try:
        lab = labs.get(lab_id)
    except CourseError:  # no es un laboratorio del curso: nbgrader dirá lo suyo
        return
    define_lab(root / GRADEBOOK, lab)
    give_to_course_owner(root, [root / GRADEBOOK])


def define_lab(db: Path, lab: labs.Lab) -> bool:
    """Copia a ``db`` la definición de ``lab`` (tarea, cuadernos, celdas) si no la tiene;
    dice si la copió. Las notas y entregas que ya hubiera no se tocan."""
    if _defined(db, lab.id):
        return False
    from nbgrader.api import Gradebook

    from course import grading

    prepared = grading.prepared_course(lab) / GRADEBOOK
    with Gradebook(f"sqlite:///{db}") as gradebook:
        with Gradebook(f"sqlite:///{prepared}") as source:
            _copy_definition(source.find_assignment(lab.id), gradebook)
    return True


def _defined(db: Path, lab_id: str) -> bool:
    """Si ``db`` ya define ``lab_id`` (con sqlite3: la mirada de cada entrega cuesta poco;
    abrir un ``Gradebook`` crea antes todas sus tablas)."""
    if not db.is_file():
        return False
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
        try:
            found = connection.execute("select 1 from assignment where name = ?", (lab_id,))
        except sqlite3.DatabaseError:  # sin tablas aún: nbgrader las crea
            return False
        return found.fetchone() is not None


def _copy_definition(assignment, gradebook) -> None:
    gradebook.update_or_create_assignment(assignment.name, duedate=assignment.duedate)
    for notebook in assignment.notebooks:
        where = (notebook.name, assignment.name)
        gradebook.update_or_create_notebook(*where)
        for cell in notebook.source_cells:
            gradebook.update_or_create_source_cell(
                cell.name, *where, cell_type=cell.cell_type, locked=cell.locked,
                source=cell.source, checksum=cell.checksum,
            )  # fmt: skip
        for cell in notebook.grade_cells:
            gradebook.update_or_create_grade_cell(
                cell.name, *where, max_score=cell.max_score, cell_type=cell.cell_type
            )
        for cell in notebook.task_cells:
            gradebook.update_or_create_task_cell(
                cell.name, *where, max_score=cell.max_score, cell_type=cell.cell_type
            )
        for cell in notebook.solution_cells:
            gradebook.update_or_create_solution_cell(cell.name, *where)


def after_convert(assignment=None, student=None, notebooks=None) -> None:
    """``post_convert_hook`` de ``Autograde`` y ``GenerateFeedback``: lo escrito, del dueño
    del curso."""
    entry = _entry(notebooks or [])
    if entry is None:
        return
    root, step, student_id, lab_id = entry
    written = "feedback" if step == "autograded" else "autograded"
    give_to_course_owner(root, [root / written / student_id / lab_id, root / GRADEBOOK])


def give_to_course_owner(root: Path, paths: list[Path]) -> None:
    """Como root, ``paths`` (con su contenido y las carpetas entre ``root`` y ellas) pasan
    al dueño de ``root``. Sin root, nada. Nunca a través de un enlace simbólico: root no
    cambia el dueño de nada fuera de la carpeta del curso."""
    if os.geteuid() != 0:
        return
    owner = os.stat(root)
    if owner.st_uid == 0:
        return
    for path in paths:
        steps = [root / part for part in reversed(path.relative_to(root).parents[:-1])]
        if not os.path.lexists(path) or any(p.is_symlink() for p in [*steps, path]):
            continue
        for step in steps:
            _chown(step, owner)
        for folder, subfolders, files in os.walk(path):
            for name in [*subfolders, *files]:
                _chown(Path(folder) / name, owner)
        _chown(path, owner)
    for journal in root.glob(GRADEBOOK + "-*"):  # el diario de SQLite, si quedó alguno
        _chown(journal, owner)


def _chown(path: Path, owner: os.stat_result) -> None:
    os.chown(path, owner.st_uid, owner.st_gid, follow_symlinks=False)
