"""``python -m course informe``: qué ejercicio y qué idea falló la clase, por laboratorio.

Lee lo que ya guardó la calificación (``gradebook.db`` y cada ``calificacion.json``), sin
volver a calificar, y escribe en ``CARPETA`` una página HTML por laboratorio, un índice
(``index.html``) y las mismas tablas en CSV (``course.report``). Las páginas no cargan nada
de la red: plotly.js va dentro. Con ``--anonimo`` no aparece ningún nombre de estudiante
(ni las tablas por estudiante): es la versión que se puede enseñar a la clase.
"""

from pathlib import Path

from course import labs
from course.labs import CourseError

HELP = "informe de la clase: ejercicios y errores con nombre"


def add_arguments(parser) -> None:
    parser.add_argument(
        "--lab", action="append", metavar="LAB", help="solo este laboratorio (repetible)"
    )
    parser.add_argument(
        "-o", "--output", default="informe", metavar="CARPETA",
        help="carpeta donde se escribe el informe (por omisión, informe/)",
    )  # fmt: skip
    parser.add_argument(
        "--anonimo", action="store_true",
        help="sin nombres de estudiantes ni tablas por estudiante (para enseñarlo a la clase)",
    )  # fmt: skip


def main(args) -> int:
    return run(args.output, args.lab, args.anonimo)


def run(output: str = "informe", lab_ids: list[str] | None = None, anonymous: bool = False,
        root: Path = labs.REPO) -> int:  # fmt: skip
    from course.report import build

    for lab_id in lab_ids or []:
        labs.get(lab_id)  # CourseError con los laboratorios disponibles
    target = Path(output)
    if target.exists() and not target.is_dir():
        raise CourseError(f"«{output}» existe y no es una carpeta. Elige otra con -o.")
    try:
        written = build.write(root, target, lab_ids, anonymous)
    except OSError as error:
        raise CourseError(
            f"No puedo escribir el informe en «{output}»: {error.strerror}. Elige otra carpeta"
            " con -o."
        ) from None
    pages = [p for p in written if p.suffix == ".html"]
    print(
        f"Informe escrito en {target}/: {len(pages)} páginas y {len(written) - len(pages)} tablas CSV."
    )
    print(f"Ábrelo con tu navegador: {target / build.INDEX}")
    return 0
