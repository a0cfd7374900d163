"""``python -m course feedback``: una página HTML por estudiante y laboratorio.

Sale de ``autograded/<estudiante>/<lab>/`` (lo que deja ``grade`` o ``nbgrader
autograde``) y se escribe en ``feedback/<estudiante>/<lab>/<lab>.html``, la ruta de
``nbgrader generate_feedback``, así que ``nbgrader release_feedback`` la reparte igual. Es
la misma página que escribe ``nbgrader generate_feedback`` («Generar devolución» en
Formgrader): el cuaderno pasa por el mismo filtro (``course.grading.feedback.SafeFeedback``,
sin el código ni las salidas de las pruebas ocultas) y la página sale de
``course.grading.feedback_page``, con las notas y los comentarios puestos a mano en
Formgrader cuando ``gradebook.db`` los tiene.
"""

from pathlib import Path
from typing import TYPE_CHECKING

from course import labs
from course.labs import CourseError
from course.text import printable

if TYPE_CHECKING:  # el calificador (nbgrader, PyTorch) se importa al ejecutar la orden
    from course.grading.results import Result

HELP = "escribe la devolución HTML de cada estudiante"


def add_arguments(parser) -> None:
    parser.add_argument("--lab", action="append", help="solo este laboratorio (repetible)")
    parser.add_argument(
        "--student", action="append", metavar="ESTUDIANTE", help="solo este estudiante (repetible)"
    )


def main(args) -> int:
    return run(lab_ids=args.lab, students=args.student)


def run(
    lab_ids: list[str] | None = None, students: list[str] | None = None, root: Path = labs.REPO
) -> int:
    import nbformat

    from course.grading import feedback_page, nbgrader_config, results
    from course.grading.feedback import FACTS, SafeFeedback

    found = results.read_all(root / "autograded")
    _require_known(lab_ids, students, found)
    written = 0
    safe = SafeFeedback(config=nbgrader_config(root))
    db = root / "gradebook.db"
    db_url = f"sqlite:///{db}" if db.is_file() else None
    for result in found:
        if (lab_ids and result.lab not in lab_ids) or (students and result.student not in students):
            continue
        graded = root / "autograded" / result.student / result.lab / f"{result.lab}.ipynb"
        notebook = nbformat.read(graded, 4) if graded.exists() and not result.error else None
        facts = {"hidden": set(), "named": {}}
        if notebook is not None:
            notebook, resources = safe.preprocess(notebook, {})
            facts = resources[FACTS]
        graders = feedback_page.from_gradebook(db_url, result.student, result.lab)
        page = feedback_page.render(
            feedback_page.with_graders(result, graders),
            notebook, facts["hidden"], facts["named"], graders.comments,
        )  # fmt: skip
        target = root / "feedback" / result.student / result.lab / f"{result.lab}.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, encoding="utf-8")
        written += 1
    print(f"{written} devoluciones escritas en feedback/.")
    return 0


def _require_known(
    lab_ids: list[str] | None, students: list[str] | None, found: list["Result"]
) -> None:
    """Un laboratorio o estudiante que no existe es un error (código 2) que lista los que hay."""
    for lab_id in lab_ids or []:
        labs.get(lab_id)
    known = sorted({result.student for result in found})
    for student in students or []:
        if student not in known:
            listed = ", ".join(known) if known else "ninguno (ejecuta antes python -m course grade)"
            raise CourseError(
                printable(
                    f"Estudiante desconocido: «{student}». Estudiantes calificados: {listed}."
                )
            )
