"""Línea de órdenes del curso, en español (``course.argparse_es``).

Cada orden llama a una función de ``course/commands/<orden>.py``. Una orden cuyo módulo no
está (el paquete del estudiante no lleva las del profesor) no se ofrece.
"""

import argparse
import importlib
import sys
from pathlib import Path

from course.argparse_es import ArgumentParser
from course.labs import CourseError

PACKAGE = Path(__file__).resolve().parent


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="python -m course", description="Herramientas del curso del Transformer."
    )
    commands = parser.add_subparsers(dest="command", title="órdenes", metavar="ORDEN")
    start = _command(commands, "empezar", "copia un laboratorio a trabajo/ para hacerlo ahí")
    start.add_argument("lab", help="el laboratorio (p. ej. 01_atencion)")
    check = _command(commands, "check", CHECK_HELP[_present("grading")])
    check.add_argument(
        "notebook", metavar="CUADERNO", help="ruta del cuaderno .ipynb (no se modifica)"
    )
    check.add_argument("--lab", help="laboratorio del cuaderno si no se reconoce solo")
    build = _command(commands, "build", "regenera release/ desde source/ y lo valida")
    build.add_argument(
        "lab", nargs="?", help="un laboratorio (p. ej. 01_atencion); todos si se omite"
    )
    _workflow_commands(commands)

    _train_arguments(commands)
    return parser


def _train_arguments(commands) -> None:
    """``train``: una receta (``course.translation.config.PRESETS``) y lo que se suele querer cambiar de
    ella sin editar código: épocas, tope de minutos y tamaño del lote."""
    train = _command(commands, "train", "entrena el traductor de Multi30k y mide su BLEU")
    train.add_argument(
        "--preset",
        choices=["gpu", "cpu", "rapida", "corta", "smoke"],
        default="cpu",
        metavar="RECETA",
        help="receta: gpu (una H100, ~10 min), cpu (2 núcleos, ~25 min), rapida (2 núcleos,"
        " ~10 min, para una clase), corta (2 núcleos, ~3 min, para probar primero) o smoke"
        " (segundos); por omisión, cpu",
    )
    train.add_argument("--epocas", type=_positive(int), metavar="N", help="número máximo de épocas")
    train.add_argument(
        "--minutos", type=_positive(float), metavar="M",
        help="tope de minutos de entrenamiento (sin contar datos ni traducción); la tasa de"
        " aprendizaje termina su coseno al agotarse",
    )  # fmt: skip
    train.add_argument(
        "--lote", type=_positive(int), metavar="TOKENS",
        help="tamaño del lote en tokens, relleno incluido (menos tokens: menos memoria y más"
        " pasos por época)",
    )  # fmt: skip
    train.add_argument(
        "--smoke",
        action="store_true",
        help="prueba de humo: pocos pasos con unos cientos de frases",
    )
    train.add_argument(
        "--out", metavar="CARPETA", help="carpeta de resultados (por omisión runs/RECETA)"
    )
    train.add_argument(
        "--resume", action="store_true", help="continúa desde CARPETA/last.pt si existe"
    )
    train.add_argument(
        "--cuaderno", metavar="CUADERNO",
        help="entrena con tus funciones del laboratorio 7 (collate, train_step, evaluate y"
        " corpus_bleu); en el paquete del estudiante, que no trae la solución, siempre, por"
        " omisión de trabajo/07_multi30k/07_multi30k.ipynb. Ejecuta su código sin aislar:"
        " solo con cuadernos de confianza, no con entregas",
    )  # fmt: skip


def _positive(kind):
    """Tipo de argparse: un número de tipo ``kind`` mayor que cero, con error en español."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            what = "un número entero" if kind is int else "un número"
            raise argparse.ArgumentTypeError(f"«{text}» no es {what}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"debe ser mayor que cero, no {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


CHECK_HELP = {
    True: "califica tu cuaderno con las pruebas ocultas",
    False: "ejecuta las pruebas visibles de tu cuaderno",
}


def _present(module: str) -> bool:
    """¿Trae este paquete ``course.<module>``? (el del estudiante no lleva las del profesor)

    Se mira el archivo junto a este, no ``importlib.util.find_spec``: con otra copia del
    curso instalada en modo editable, esta encontraría sus módulos.
    """
    path = PACKAGE.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _workflow_commands(commands) -> None:
    """Órdenes del profesor y del estudiante por libre (course/commands/<orden>.py)."""
    grade = _command(commands, "grade", "califica en paralelo todas las entregas de submitted/")
    grade.add_argument("--lab", action="append", help="solo este laboratorio (repetible)")
    grade.add_argument(
        "--zip", action="append", metavar="ARCHIVO",
        help="zip del aula virtual, una carpeta por estudiante: <estudiante>/<lab>/<lab>.ipynb",
    )  # fmt: skip
    grade.add_argument(
        "--jobs", type=int, metavar="N", help="procesos en paralelo (por omisión, los núcleos)"
    )
    grade.add_argument("--shard", metavar="i/n", help="califica solo el fragmento i de n")
    grade.add_argument(
        "--timeout", type=int, metavar="SEGUNDOS", help="segundos por celda (por omisión, 60)"
    )
    grade.add_argument(
        "--memory", type=float, default=4.0, metavar="GIB",
        help="memoria de cada núcleo aislado en GiB (por omisión, 4)",
    )  # fmt: skip
    grade.add_argument(
        "--no-sandbox", action="store_true",
        help="califica sin bubblewrap: PELIGROSO, el código de los estudiantes podría leer las"
        " soluciones y las pruebas ocultas, cambiar notas de otros, usar la red y dejar"
        " procesos vivos; solo con entregas de confianza",
    )  # fmt: skip
    grade.add_argument(
        "--merge-only", action="store_true",
        help="no califica: une los resultados de autograded/ en gradebook.db",
    )  # fmt: skip
    feedback = _command(commands, "feedback", "escribe la devolución HTML de cada estudiante")
    feedback.add_argument("--lab", action="append", help="solo este laboratorio (repetible)")
    feedback.add_argument(
        "--student", action="append", metavar="ESTUDIANTE", help="solo este estudiante (repetible)"
    )
    export = _command(commands, "export", "exporta las notas a CSV (columnas de nbgrader)")
    export.add_argument(
        "--output", "-o", default="notas.csv", metavar="ARCHIVO", help="archivo CSV o - (pantalla)"
    )
    export.add_argument(
        "--excel", action="store_true",
        help="para hojas de cálculo en español (Excel, LibreOffice): punto y coma, coma"
        " decimal y BOM UTF-8",
    )  # fmt: skip
    bundle = _command(commands, "bundle", "prepara un zip para estudiantes hasta un laboratorio")
    bundle.add_argument("--through", required=True, metavar="LAB", help="último laboratorio")
    bundle.add_argument("--output", "-o", metavar="ZIP", help="ruta del zip (por omisión dist/…)")
    _command(commands, "doctor", "revisa el entorno y dice qué arreglar")
    _command(commands, "jupyter-es", "pone JupyterLab en español en este entorno")


def _command(commands, name: str, text: str) -> ArgumentParser:
    """Añade la orden ``name``; si su módulo no está en este paquete, el analizador queda
    suelto (se le pueden añadir argumentos, pero la orden no se ofrece)."""
    if not _present(f"commands.{name.replace('-', '_')}"):
        return ArgumentParser(prog=name)
    parser = commands.add_parser(name, help=text, description=text)
    parser._positionals.title = "argumentos"
    parser._optionals.title = "opciones"
    return parser


def _run(args) -> int:
    # Un import por orden: el paquete del estudiante no lleva las del profesor.
    command = importlib.import_module(f"course.commands.{args.command.replace('-', '_')}")
    if args.command == "empezar":
        return command.run(args.lab)
    if args.command == "check":
        return command.run(args.notebook, args.lab)
    if args.command == "build":
        return command.run(args.lab)
    if args.command == "grade":
        return command.run(
            zips=args.zip, jobs=args.jobs, shard=args.shard, timeout=args.timeout,
            merge_only=args.merge_only, lab_ids=args.lab, sandboxed=not args.no_sandbox,
            memory_gib=args.memory,
        )  # fmt: skip
    if args.command == "feedback":
        return command.run(lab_ids=args.lab, students=args.student)
    if args.command == "export":
        return command.run(args.output, excel=args.excel)
    if args.command == "bundle":
        return command.run(args.through, args.output)
    if args.command == "train":
        overrides = {"epochs": args.epocas, "max_minutes": args.minutos, "max_tokens": args.lote}
        return command.run(
            args.preset, args.smoke, args.out, args.resume,
            overrides={k: v for k, v in overrides.items() if v is not None},
            notebook=args.cuaderno,
        )  # fmt: skip
    return command.run()


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return _run(args)
    except CourseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
