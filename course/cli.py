"""Línea de órdenes del curso, en español (``course.argparse_es``).

Cada orden es un módulo ``course/commands/<orden>.py`` con ``HELP``, ``add_arguments`` y
``main`` (``course.commands``); aquí solo se juntan. :data:`COMMANDS` fija cuáles son y
el orden en que las lista ``python -m course --ayuda``: primero las del estudiante, luego
las del profesor. Una orden cuyo módulo no está (el paquete del estudiante no lleva las del
profesor) no se ofrece.
"""

import importlib
import sys

from course.argparse_es import ArgumentParser
from course.commands import present
from course.labs import CourseError

# Módulos de course/commands/ (con «-» en lugar de «_» en la línea de órdenes), en orden.
COMMANDS = (
    "empezar", "check", "progreso", "build", "grade", "feedback", "export", "informe",
    "bundle", "doctor", "jupyter_es", "train", "aula",
)  # fmt: skip


def available() -> list[str]:
    """Las órdenes de :data:`COMMANDS` cuyo módulo trae este paquete, como se escriben."""
    return [name.replace("_", "-") for name in COMMANDS if present(f"commands.{name}")]


def _parser(argv: list[str] | None = None) -> ArgumentParser:
    """El analizador de ``python -m course``.

    Si ``argv`` empieza por una orden, solo se importa su módulo: ``empezar`` no tiene por
    qué cargar nbgrader y PyTorch, que importan las órdenes del profesor. Sin orden (la
    ayuda general, una orden mal escrita) se importan todas para listarlas.
    """
    parser = ArgumentParser(
        prog="python -m course", description="Herramientas del curso del Transformer."
    )
    commands = parser.add_subparsers(dest="command", title="órdenes", metavar="ORDEN")
    names = available()
    if argv and argv[0] in names:
        names = [argv[0]]
    for name in names:
        module = _module(name)
        command = commands.add_parser(name, help=module.HELP, description=module.HELP)
        command._positionals.title = "argumentos"
        command._optionals.title = "opciones"
        module.add_arguments(command)
        command.set_defaults(main=module.main)
    return parser


def _module(name: str):
    return importlib.import_module(f"course.commands.{name.replace('-', '_')}")


def main(argv: list[str] | None = None) -> int:
    """Ejecuta ``python -m course ARGV``; devuelve el código de salida (2: mal uso)."""
    argv = sys.argv[1:] if argv is None else argv
    parser = _parser(argv)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return args.main(args)
    except CourseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
