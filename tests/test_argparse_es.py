"""course/argparse_es.py: ayuda, uso y errores de argparse en español."""

import argparse

import pytest

from course.argparse_es import ArgumentParser, positive

ENGLISH = (
    "usage:",
    "positional arguments",
    "options:",
    "show this help",
    "required",
    "unrecognized",
    "invalid",
    "choose from",
    "expected",
    "argument ",
)


def _parser() -> ArgumentParser:
    parser = ArgumentParser(prog="prueba", description="Una prueba.")
    parser.add_argument("lab", help="un laboratorio")
    parser.add_argument("--jobs", type=int, help="procesos")
    parser.add_argument("--lr", type=float, help="tasa")
    parser.add_argument("--preset", choices=["cpu", "gpu"], help="receta")
    parser.add_argument("--pair", nargs=2, help="dos valores")
    orders = parser.add_subparsers(dest="order", title="órdenes", metavar="ORDEN")
    orders.add_parser("sub", help="una orden").add_argument("notebook")
    return parser


def _error(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exit_:
        _parser().parse_args(argv)
    assert exit_.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("flag", ["-h", "--help", "--ayuda"])
def test_help_flags_print_spanish_help(capsys, flag):
    with pytest.raises(SystemExit) as exit_:
        _parser().parse_args([flag])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("uso: prueba")
    assert "argumentos:" in text and "opciones:" in text and "órdenes:" in text
    assert "-h, --help, --ayuda  muestra esta ayuda y termina" in text
    assert not [word for word in ENGLISH if word in text]


@pytest.mark.parametrize(
    ("argv", "spanish"),
    [
        ([], "faltan argumentos obligatorios: lab"),
        (["01", "--zz"], "argumentos no reconocidos: --zz"),
        (["01", "--preset", "tpu"], "opción no válida: 'tpu' (elige entre 'cpu', 'gpu')"),
        (["01", "--jobs", "dos"], "argumento --jobs: 'dos' no es un número entero válido"),
        (["01", "--lr", "x"], "'x' no es un número válido"),
        (["01", "--jobs"], "argumento --jobs: espera un valor"),
        (["01", "--pair", "1"], "espera 2 valores"),
        (["01", "otra"], "argumento ORDEN: opción no válida: 'otra'"),
        (["01", "sub"], "prueba lab sub: error: faltan argumentos obligatorios: notebook"),
    ],
)
def test_misuse_exits_2_with_spanish_error(capsys, argv, spanish):
    text = _error(capsys, argv)
    assert text.startswith("uso: ")
    assert spanish in text
    assert not [word for word in ENGLISH if word in text]


def test_other_parsers_in_the_process_stay_english(capsys):
    _parser().format_help()
    plain = argparse.ArgumentParser(prog="otro")
    with pytest.raises(SystemExit):
        plain.parse_args(["--zz"])
    assert "unrecognized arguments: --zz" in capsys.readouterr().err
    assert plain.format_help().startswith("usage: otro")


@pytest.mark.parametrize(
    ("kind", "text", "spanish"),
    [
        (int, "0", "debe ser mayor que cero, no 0"),
        (int, "-3", "debe ser mayor que cero, no -3"),
        (int, "2.5", "«2.5» no es un número entero"),
        (float, "x", "«x» no es un número"),
    ],
)
def test_positive_refuses_zero_negatives_and_words_in_spanish(capsys, kind, text, spanish):
    parser = ArgumentParser(prog="prueba")
    parser.add_argument("--n", type=positive(kind))
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args(["--n", text])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argumento --n: {spanish}" in err and not [w for w in ENGLISH if w in err]


def test_positive_keeps_the_number_and_its_kind():
    parser = ArgumentParser(prog="prueba")
    parser.add_argument("--n", type=positive(int))
    parser.add_argument("--m", type=positive(float))
    args = parser.parse_args(["--n", "3", "--m", "0.5"])
    assert (args.n, type(args.n), args.m) == (3, int, 0.5)
