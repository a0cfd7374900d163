"""Línea de órdenes del curso (argparse, ayuda en español)."""

import argparse
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
    parser.add_argument("-h", "--ayuda", action="help", help="muestra esta ayuda y termina")
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
    return parser


def _command(commands, name: str, text: str) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        name, help=text, description=text, formatter_class=_SpanishHelp, add_help=False
    )
    parser.add_argument("-h", "--ayuda", action="help", help="muestra esta ayuda y termina")
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
    except CourseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    _parser().print_help()
    return 2
