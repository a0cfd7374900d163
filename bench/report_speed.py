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

import random
import shutil
import tempfile
import time
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
    results.merge(found, root / "gradebook.db")


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
    start = time.perf_counter()
    written = build.write(root, out)
    seconds = time.perf_counter() - start
    size = sum(p.stat().st_size for p in written) / 2**20
    print(f"informe: {len(written)} archivos ({size:.0f} MiB) en {seconds:.2f} s")
    return 0 if seconds <= 10 else 1


if __name__ == "__main__":
    raise SystemExit(main())
