"""argparse en español: `ArgumentParser` con ayuda, uso y errores traducidos.

argparse saca todo su texto por `gettext` (`argparse._` y `argparse.ngettext`), y sus
identificadores de mensaje son la interfaz estable que usan sus traducciones. Aquí se
traducen esos identificadores, solo mientras trabaja un `ArgumentParser` de este módulo:
el argparse de otras bibliotecas del mismo proceso sigue igual.

    from course.argparse_es import ArgumentParser

    parser = ArgumentParser(prog="python bench/x.py", description="…")
    parser.add_argument("--steps", type=int, default=10, help="pasos de medida")
    args = parser.parse_args()

`-h`, `--help` y `--ayuda` muestran la ayuda; un uso incorrecto termina con código 2.
"""

import argparse
import contextlib
import functools

MESSAGES = {
    "usage: ": "uso: ",
    "positional arguments": "argumentos",
    "options": "opciones",
    "subcommands": "órdenes",
    "show this help message and exit": "muestra esta ayuda y termina",
    "show program's version number and exit": "muestra la versión y termina",
    "%(prog)s: error: %(message)s\n": "%(prog)s: error: %(message)s\n",
    "argument %(argument_name)s: %(message)s": "argumento %(argument_name)s: %(message)s",
    "the following arguments are required: %s": "faltan argumentos obligatorios: %s",
    "unrecognized arguments: %s": "argumentos no reconocidos: %s",
    "invalid choice: %(value)r (choose from %(choices)s)": (
        "opción no válida: %(value)r (elige entre %(choices)s)"
    ),
    "unknown parser %(parser_name)r (choices: %(choices)s)": (
        "orden desconocida %(parser_name)r (elige entre %(choices)s)"
    ),
    "expected one argument": "espera un valor",
    "expected at most one argument": "espera como mucho un valor",
    "expected at least one argument": "espera al menos un valor",
    "ambiguous option: %(option)s could match %(matches)s": (
        "opción ambigua: %(option)s puede ser %(matches)s"
    ),
    "not allowed with argument %s": "no se puede usar junto con %s",
    "one of the arguments %s is required": "hace falta uno de estos argumentos: %s",
    "ignored explicit argument %r": "este argumento no lleva valor: %r",
    "unexpected option string: %s": "opción inesperada: %s",
    "can't open '%(filename)s': %(error)s": "no se puede abrir «%(filename)s»: %(error)s",
    'argument "-" with mode %r': "el argumento «-» no admite el modo %r",
}

PLURALS = {"expected %s argument": ("espera %s valor", "espera %s valores")}

TYPE_NAMES = {"int": "número entero", "float": "número"}


class _TypeMessage(str):
    """'invalid %(type)s value' con el nombre del tipo en español (int → número entero)."""

    def __mod__(self, args):
        return str.__mod__(self, dict(args, type=TYPE_NAMES.get(args["type"], args["type"])))


_INVALID_TYPE = "invalid %(type)s value: %(value)r"
_ORIGINAL = (argparse._, argparse.ngettext)
_depth = 0


def gettext(message: str) -> str:
    if message == _INVALID_TYPE:
        return _TypeMessage("%(value)r no es un %(type)s válido")
    return MESSAGES.get(message, message)


def ngettext(singular: str, plural: str, n: int) -> str:
    if singular in PLURALS:
        return PLURALS[singular][0 if n == 1 else 1]
    return _ORIGINAL[1](singular, plural, n)


@contextlib.contextmanager
def spanish():
    """Traduce los mensajes de argparse mientras dura el bloque (admite anidarse)."""
    global _depth
    if _depth == 0:
        argparse._, argparse.ngettext = gettext, ngettext
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            argparse._, argparse.ngettext = _ORIGINAL


def _in_spanish(method):
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        with spanish():
            return method(*args, **kwargs)

    return wrapper


def positive(kind):
    """Tipo de argparse (``type=positive(int)``): un número de tipo ``kind`` mayor que cero,
    con el error en español."""

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


class ArgumentParser(argparse.ArgumentParser):
    """`argparse.ArgumentParser` en español, con `-h`, `--help` y `--ayuda`.

    Los subanalizadores de `add_subparsers().add_parser` son también de esta clase.
    """

    @_in_spanish
    def __init__(self, *args, add_help: bool = True, **kwargs):
        super().__init__(*args, add_help=False, **kwargs)
        if add_help:
            self.add_argument(
                "-h", "--help", "--ayuda", action="help", help="muestra esta ayuda y termina"
            )

    add_subparsers = _in_spanish(argparse.ArgumentParser.add_subparsers)
    parse_args = _in_spanish(argparse.ArgumentParser.parse_args)
    parse_known_args = _in_spanish(argparse.ArgumentParser.parse_known_args)
    format_usage = _in_spanish(argparse.ArgumentParser.format_usage)
    format_help = _in_spanish(argparse.ArgumentParser.format_help)
    error = _in_spanish(argparse.ArgumentParser.error)
