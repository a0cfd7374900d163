"""Una clase de prueba en una carpeta temporal, con la estructura de nbgrader.

Las pruebas que califican una clase entera (``course grade``, ``nbgrader autograde``,
Formgrader) la montan igual: una copia del curso y una entrega por estudiante en
``submitted/<estudiante>/<laboratorio>/<laboratorio>.ipynb``.
"""

import json
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from course import labs


def course_copy(root: Path) -> Path:
    """``source/``, ``release/`` y ``nbgrader_config.py`` del repositorio en ``root``: la
    prueba no toca el repositorio."""
    for folder in ("source", "release"):
        shutil.copytree(labs.REPO / folder, root / folder)
    shutil.copyfile(labs.REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    return root


def nbgrader_course(root: Path, lab: labs.Lab) -> Path:
    """Un curso de nbgrader en ``root`` con ``lab`` ya generado: la configuración del curso,
    ``source/``, ``release/`` y el libro de notas del curso preparado en caché."""
    from course import grading

    prepared = grading.prepared_course(lab)
    for folder in ("source", "release"):
        shutil.copytree(prepared / folder, root / folder)
    shutil.copyfile(prepared / "gradebook.db", root / "gradebook.db")
    shutil.copyfile(labs.REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    return root


# `python -m course grade ...` tal cual (argparse incluido), con el curso en otra carpeta:
# `[sys.executable, "-c", GRADE_CLI, str(root), "grade", ...]`.
GRADE_CLI = (
    "import functools, sys; from pathlib import Path; from course import cli;"
    " from course.commands import grade;"
    " grade.run = functools.partial(grade.run, root=Path(sys.argv[1]));"
    " sys.exit(cli.main(sys.argv[2:]))"
)


def collect(lab: labs.Lab, exchange: Path, course: Path, *options: str):
    """``nbgrader collect`` con la configuración del curso (``nbgrader_config.py``)."""
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", "collect", lab.id, f"--Exchange.root={exchange}",
         f"--CourseDirectory.root={course}",
         f"--CourseDirectory.db_url=sqlite:///{course / 'gradebook.db'}", *options],
        capture_output=True, text=True, timeout=300, cwd=labs.REPO,
    )  # fmt: skip


def submission_id(root: Path, student: str) -> str:
    """El id de Formgrader del cuaderno entregado por ``student`` (uno por curso)."""
    with sqlite3.connect(root / "gradebook.db") as db:
        return db.execute(
            "select submitted_notebook.id from submitted_notebook"
            " join submitted_assignment on submitted_notebook.assignment_id ="
            " submitted_assignment.id where submitted_assignment.student_id = ?",
            (student,),
        ).fetchone()[0]


def submission(root: Path, student: str, lab: labs.Lab) -> Path:
    """Dónde nbgrader busca la entrega de ``student`` (las carpetas ya creadas)."""
    folder = root / "submitted" / student / lab.id
    folder.mkdir(parents=True)
    return folder / f"{lab.id}.ipynb"


@dataclass
class Lab7Submission:
    """Una entrega del laboratorio 7: el cuaderno solución en ``folder`` y a su lado la
    ejecución «completa» (``run_dir``: puntos de control, ``origen.txt``,
    ``referencias.txt``) con su modelo ya cargado."""

    folder: Path
    run_dir: Path
    test: list[tuple[str, str]]  # las frases de prueba (alemán, inglés)
    result: object  # lo que devolvió el entrenamiento (pasos, pérdidas)
    model: object
    tokenizer: object

    @classmethod
    def copy(cls, trained: Path, folder: Path, test, result) -> "Lab7Submission":
        from course.translation.train import final_checkpoint, load_model

        lab = labs.get("07_multi30k")
        shutil.copy(lab.source, folder / f"{lab.id}.ipynb")
        run_dir = folder / lab.outputs
        shutil.copytree(trained, run_dir)
        model, tokenizer, _ = load_model(final_checkpoint(run_dir))
        return cls(folder, run_dir, test, result, model, tokenizer)

    def write_history(self, **fields) -> None:
        """``historial.json`` como lo deja la sección 11 del cuaderno en modo completo."""
        history = {"mode": "completa", **fields}
        (self.run_dir / "historial.json").write_text(json.dumps(history), encoding="utf-8")
