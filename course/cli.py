"""Línea de órdenes del curso (argparse, ayuda en español)."""

import argparse
import importlib
import sys

from course.labs import CourseError


class _SpanishHelp(argparse.HelpFormatter):
    def add_usage(self, usage, actions, groups, prefix=None):
        return super().add_usage(usage, actions, groups, "uso: " if prefix is None else prefix)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m course",
        description="Herramientas del curso del Transformer.",
        formatter_class=_SpanishHelp,
        add_help=False,
    )
    parser.add_argument(
        "-h", "--help", "--ayuda", action="help", help="muestra esta ayuda y termina"
    )
    parser._optionals.title = "opciones"
    commands = parser.add_subparsers(dest="command", title="órdenes", metavar="ORDEN")

    build = _command(commands, "build", "regenera release/ desde source/ y lo valida")
    build.add_argument(
        "lab", nargs="?", help="un laboratorio (p. ej. 01_atencion); todos si se omite"
    )

    check = _command(
        commands, "check", "califica tu cuaderno con las pruebas ocultas, sin modificarlo"
    )
    check.add_argument("notebook", help="ruta del cuaderno .ipynb")
    check.add_argument("--lab", help="laboratorio del cuaderno si no se reconoce solo")
    _workflow_commands(commands)

    train = _command(
        commands, "train", "entrena el Transformer alemán→inglés en Multi30k y mide su BLEU"
    )
    train.add_argument(
        "--preset",
        choices=["gpu", "cpu", "smoke"],
        default="cpu",
        help="receta: gpu (una H100, ~10 min), cpu (2 núcleos, ~30 min) o smoke",
    )
    train.add_argument(
        "--smoke",
        action="store_true",
        help="prueba de humo: pocos pasos con unos cientos de frases",
    )
    train.add_argument("--out", help="carpeta de resultados (por omisión runs/RECETA)")
    train.add_argument("--resume", action="store_true", help="continúa desde OUT/last.pt si existe")
    return parser


WORKFLOW = ("grade", "feedback", "export", "bundle", "doctor", "jupyter-es")


def _workflow_commands(commands) -> None:
    """Órdenes del profesor y del estudiante por libre (course/commands/<orden>.py)."""
    grade = _command(commands, "grade", "califica en paralelo todas las entregas de submitted/")
    grade.add_argument("--lab", action="append", help="solo este laboratorio (repetible)")
    grade.add_argument(
        "--zip", action="append", metavar="ARCHIVO",
        help="zip del aula virtual: <estudiante>/<lab>/<lab>.ipynb o <estudiante>_<lab>.ipynb",
    )  # fmt: skip
    grade.add_argument("--jobs", type=int, help="procesos en paralelo (por omisión, los núcleos)")
    grade.add_argument("--shard", metavar="i/n", help="califica solo el fragmento i de n")
    grade.add_argument("--timeout", type=int, help="segundos por celda (por omisión, 60)")
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
    feedback.add_argument("--student", action="append", help="solo este estudiante (repetible)")
    export = _command(commands, "export", "exporta las notas a CSV (columnas de nbgrader)")
    export.add_argument("--output", "-o", default="notas.csv", help="archivo CSV o - (pantalla)")
    bundle = _command(commands, "bundle", "prepara un zip para estudiantes hasta un laboratorio")
    bundle.add_argument("--through", required=True, metavar="LAB", help="último laboratorio")
    bundle.add_argument("--output", "-o", help="ruta del zip (por omisión dist/…)")
    _command(commands, "doctor", "revisa el entorno y dice qué arreglar")
    _command(commands, "jupyter-es", "pone JupyterLab en español en este entorno")


def _run_workflow(args) -> int:
    # Un import por orden: el zip de estudiantes (bundle) no lleva las del profesor.
    command = importlib.import_module(f"course.commands.{args.command.replace('-', '_')}")
    if args.command == "grade":
        return command.run(
            zips=args.zip, jobs=args.jobs, shard=args.shard, timeout=args.timeout,
            merge_only=args.merge_only, lab_ids=args.lab, sandboxed=not args.no_sandbox,
            memory_gib=args.memory,
        )  # fmt: skip
    if args.command == "feedback":
        return command.run(lab_ids=args.lab, students=args.student)
    if args.command == "export":
        return command.run(args.output)
    if args.command == "bundle":
        return command.run(args.through, args.output)
    if args.command == "doctor":
        return command.run()
    return command.run()


def _command(commands, name: str, text: str) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        name, help=text, description=text, formatter_class=_SpanishHelp, add_help=False
    )
    parser.add_argument(
        "-h", "--help", "--ayuda", action="help", help="muestra esta ayuda y termina"
    )
    parser._positionals.title = "argumentos"
    parser._optionals.title = "opciones"
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "build":
            from course.commands import build

            return build.run(args.lab)
        if args.command == "check":
            from course.commands import check

            return check.run(args.notebook, args.lab)
        if args.command in WORKFLOW:
            return _run_workflow(args)
        if args.command == "train":
            from course.commands import train

            return train.run(args.preset, args.smoke, args.out, args.resume)
    except CourseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    _parser().print_help()
    return 2
