"""Una clase de prueba en una carpeta temporal, con la estructura de nbgrader.

Las pruebas que califican una clase entera (``course grade``, ``nbgrader autograde``,
Formgrader) la montan igual: una copia del curso y una entrega por estudiante en
``submitted/<estudiante>/<laboratorio>/<laboratorio>.ipynb``.
"""

import json
import shutil
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
