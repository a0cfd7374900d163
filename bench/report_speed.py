"""Cuánto tarda ``python -m course informe`` con una clase grande ya calificada.

Monta una clase sintética de N estudiantes × los 7 laboratorios sin calificar nada: un
``calificacion.json`` por entrega (puntos al azar con semilla fija y frases reales del
catálogo como errores con nombre) y el ``gradebook.db`` que dejaría ``grade``
(``results.merge``), más un 2 % de estudiantes sin entrega. Después mide el informe entero
(leer lo guardado, analizar, escribir las páginas y los CSV), que debe quedar en ≤ 10 s
con 300 estudiantes.

Uso: python bench/report_speed.py [--estudiantes N] [--carpeta DIR]
(la clase se guarda en DIR y se reutiliza si ya está; por omisión, una carpeta temporal).
"""

import os
import random
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import nbformat

from course import labs, mistakes, notebooks
from course.argparse_es import ArgumentParser
from course.grading import results
from course.report import build

SEED = 2026
WRONG = 0.3  # probabilidad de fallar una prueba


def cells_of(lab: labs.Lab) -> list[tuple[str, float]]:
    """(grade id, puntos) de las celdas calificadas del cuaderno publicado."""
    notebook = nbformat.read(lab.release, 4)
    return [
        (notebooks.grade_id(c), notebooks.points(c))
        for c in notebook.cells
        if notebooks.is_graded(c)
    ]


def synthetic_class(root: Path, students: int) -> None:
    chance = random.Random(SEED)
    found = []
    for lab in labs.LABS.values():
        catalogue = mistakes.catalogue(lab.id)
        for number in range(students):
            if chance.random() < 0.02:
                continue  # sin entrega
            cells = []
            for grade_id, most in cells_of(lab):
                if notebooks.is_written(grade_id):
                    cells.append(
                        results.Cell(grade_id, chance.choice([None, most / 2, most]), most)
                    )
                    continue
                wrong = chance.random() < WRONG
                named = [m.message for m in catalogue if m.exercise == notebooks.exercise(grade_id)]
                cells.append(
                    results.Cell(
                        grade_id,
                        0.0 if wrong else most,
                        most,
                        "",
                        [chance.choice(named)] if wrong and named else [],
                    )  # fmt: skip
                )
            found.append(results.Result(f"est{number:03d}", lab.id, cells))
    for result in found:
        results.write(root / "autograded", result)
    bulk_gradebook(found, root / "gradebook.db")


def bulk_gradebook(found: list[results.Result], db: Path) -> None:
    """El ``gradebook.db`` que dejaría ``grade``: ``results.merge`` de una entrega por
    laboratorio (las definiciones de nbgrader) y el resto en inserciones en bloque en las
    mismas tablas (``merge`` entrega a entrega tarda más de una hora con 2100)."""
    from nbgrader.api import (
        Assignment,
        BaseCell,
        Grade,
        Gradebook,
        Notebook,
        Student,
        SubmittedAssignment,
        SubmittedNotebook,
    )  # fmt: skip
    from sqlalchemy import insert

    first = {r.lab: r for r in reversed(found)}
    results.merge(list(first.values()), db)
    rest = [r for r in found if first[r.lab] is not r]
    with Gradebook(f"sqlite:///{db}") as gradebook:
        session = gradebook.db
        notebook = dict(
            session.query(Assignment.name, Notebook.id).join(
                Notebook, Notebook.assignment_id == Assignment.id
            )
        )
        assignment = dict(session.query(Assignment.name, Assignment.id))
        cell = {
            (lab, name): cell_id
            for lab, name, cell_id in session.query(Assignment.name, BaseCell.name, BaseCell.id)
            .join(Notebook, BaseCell.notebook_id == Notebook.id)
            .join(Assignment, Notebook.assignment_id == Assignment.id)
        }
        known = {row[0] for row in session.query(Student.id)}
        students = sorted({r.student for r in rest} - known)
        session.execute(insert(Student), [{"id": s} for s in students])
        submitted, notebooks_, grades = [], [], []
        for result in rest:
            sub_id, nb_id = uuid.uuid4().hex, uuid.uuid4().hex
            submitted.append(
                {
                    "id": sub_id,
                    "assignment_id": assignment[result.lab],
                    "student_id": result.student,
                }
            )
            notebooks_.append(
                {"id": nb_id, "assignment_id": sub_id, "notebook_id": notebook[result.lab]}
            )
            grades += [
                {
                    "id": uuid.uuid4().hex,
                    "notebook_id": nb_id,
                    "cell_id": cell[result.lab, c.grade_id],
                    "auto_score": c.points,
                    "needs_manual_grade": c.points is None,
                }  # fmt: skip
                for c in result.cells
            ]
        session.execute(insert(SubmittedAssignment), submitted)
        session.execute(insert(SubmittedNotebook), notebooks_)
        session.execute(insert(Grade), grades)
        session.commit()


def main() -> int:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--estudiantes", type=int, default=300, help="estudiantes de la clase")
    parser.add_argument("--carpeta", help="dónde se guarda la clase sintética (se reutiliza)")
    args = parser.parse_args()
    root = Path(args.carpeta or tempfile.mkdtemp(prefix="informe-bench-"))
    if not (root / "gradebook.db").exists():
        start = time.perf_counter()
        root.mkdir(parents=True, exist_ok=True)
        synthetic_class(root, args.estudiantes)
        print(f"clase sintética montada en {time.perf_counter() - start:.0f} s: {root}")
    out = root / "informe"
    shutil.rmtree(out, ignore_errors=True)
    start, cpu = time.perf_counter(), time.process_time()
    written = build.write(root, out)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    size = sum(p.stat().st_size for p in written) / 2**20
    print(
        f"informe: {len(written)} archivos ({size:.0f} MiB) en {seconds:.2f} s"
        f" ({cpu:.2f} s de CPU; carga media {os.getloadavg()[0]:.1f})"
    )
    return 0 if seconds <= 10 else 1


if __name__ == "__main__":
    raise SystemExit(main())
