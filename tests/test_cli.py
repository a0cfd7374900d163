"""``python -m course``: ayuda en español, errores claros con código 2, nada se modifica."""

import hashlib
import subprocess
import sys

import pytest

from course import cli
from course.labs import LABS


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("flag", ["-h", "--help", "--ayuda"])
@pytest.mark.parametrize("command", [[], ["build"], ["check"], ["grade"], ["train"]])
def test_help_is_spanish(command, flag, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main([*command, flag])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("uso: ") and "opciones" in out
    assert bool(command) or ("órdenes" in out and "check" in out)


def test_no_command_prints_help_and_fails(capsys):
    assert cli.main([]) == 2
    assert "uso: " in capsys.readouterr().out


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda tmp: tmp / "no_existe.ipynb", "No existe el archivo"),
        (lambda tmp: tmp, "no es un cuaderno"),
        (lambda tmp: _write(tmp / "notas.txt", "hola"), "no es un cuaderno"),
        (lambda tmp: _write(tmp / "roto.ipynb", '{"cells": [ {'), "JSON dañado"),
        (lambda tmp: _write(tmp / "raro.ipynb", '{"cells": 3}'), "no es un cuaderno válido"),
    ],
)
def test_check_rejects_bad_input_with_spanish_message(tmp_path, capsys, make, message):
    path = make(tmp_path)
    before = _digest(path) if path.is_file() else None
    assert cli.main(["check", str(path)]) == 2
    assert message in capsys.readouterr().err
    if before:
        assert _digest(path) == before


def test_check_rejects_unknown_lab(capsys):
    assert cli.main(["check", str(LABS["01_atencion"].release), "--lab", "99_nada"]) == 2
    assert "Laboratorio desconocido: «99_nada»" in capsys.readouterr().err


def test_check_rejects_a_notebook_from_no_lab(tmp_path, capsys):
    path = _write(
        tmp_path / "vacio.ipynb",
        '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}',
    )
    assert cli.main(["check", str(path)]) == 2
    assert "No se reconoce el laboratorio" in capsys.readouterr().err


def test_build_rejects_unknown_lab(capsys):
    assert cli.main(["build", "99_nada"]) == 2
    assert "Laboratorio desconocido" in capsys.readouterr().err


@pytest.mark.slow
def test_check_reports_zero_for_untouched_release_without_modifying_it(tmp_path):
    notebook = tmp_path / "mi_lab1.ipynb"
    notebook.write_bytes(LABS["01_atencion"].release.read_bytes())
    before = _digest(notebook), notebook.stat().st_mtime_ns
    done = subprocess.run(
        [sys.executable, "-m", "course", "check", str(notebook)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "Puntos automáticos: 0 / 80" in done.stdout
    assert "NotImplementedError" in done.stdout and "sin responder" in done.stdout
    assert (_digest(notebook), notebook.stat().st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mi_lab1.ipynb"]


def _write(path, text):
    path.write_text(text)
    return path
