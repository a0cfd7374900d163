"""``python -m course``: ayuda en español, errores claros con código 2, nada se modifica."""

import hashlib
import importlib
import inspect
import subprocess
import sys

import pytest

from course import cli
from course.labs import LABS, REPO

COMMANDS = sorted(cli._parser()._subparsers._group_actions[0].choices)
BENCH = sorted(path.name for path in (REPO / "bench").glob("*.py"))
# texto de argparse en inglés (ayuda, uso y errores)
ENGLISH = (
    "usage:", "positional arguments", "options:", "show this help", "the following",
    "required", "unrecognized", "invalid", "choose from", "expected", "argument ",
)  # fmt: skip


def _english(text: str) -> list[str]:
    return [phrase for phrase in ENGLISH if phrase in text]


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


def test_every_command_module_is_listed_and_has_help_arguments_and_main():
    modules = {p.stem for p in (REPO / "course" / "commands").glob("*.py")} - {"__init__"}
    assert modules == set(cli.COMMANDS)
    for name in cli.COMMANDS:
        module = importlib.import_module(f"course.commands.{name}")
        assert isinstance(module.HELP, str) and "\n" not in module.HELP, name
        assert callable(module.add_arguments) and callable(module.main), name


# Lo que escribe quien usa la orden y la llamada a ``run`` que le corresponde (los
# parámetros que la línea de órdenes fija; los demás, por omisión).
CALLS = [
    (["empezar", "01_atencion"], "empezar", {"lab_id": "01_atencion"}),
    (["check", "c.ipynb", "--lab", "01_atencion"], "check", {"notebook": "c.ipynb", "lab_id": "01_atencion"}),
    (["build"], "build", {"lab_id": None}),
    (
        ["grade", "--lab", "01_atencion", "--zip", "a.zip", "--jobs", "3", "--shard", "1/2",
         "--timeout", "9", "--memory", "2", "--no-sandbox"],
        "grade",
        {"zips": ["a.zip"], "jobs": 3, "shard": "1/2", "timeout": 9, "merge_only": False,
         "lab_ids": ["01_atencion"], "sandboxed": False, "memory_gib": 2.0, "progress": True},
    ),
    (["grade", "--merge-only"], "grade", {"merge_only": True, "sandboxed": True, "memory_gib": 4.0}),
    (["feedback", "--student", "ana"], "feedback", {"lab_ids": None, "students": ["ana"]}),
    (["export", "-o", "-", "--excel"], "export", {"output": "-", "excel": True}),
    (["bundle", "--through", "02_normalizacion"], "bundle", {"through": "02_normalizacion", "output": None}),
    (["doctor"], "doctor", {}),
    (["jupyter-es"], "jupyter_es", {"prefix": None, "messages": None}),
    (
        ["train", "--preset", "rapida", "--epocas", "2", "--resume", "--cuaderno", "c.ipynb"],
        "train",
        {"preset": "rapida", "smoke": False, "out": None, "resume": True,
         "overrides": {"epochs": 2}, "notebook": "c.ipynb"},
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    "argv, name, expected", CALLS, ids=lambda v: v if isinstance(v, str) else None
)
def test_each_command_calls_its_run_with_what_was_typed(argv, name, expected, monkeypatch):
    module = importlib.import_module(f"course.commands.{name}")
    signature = inspect.signature(module.run)
    calls = []
    monkeypatch.setattr(module, "run", lambda *a, **k: calls.append(signature.bind(*a, **k)) or 7)
    assert cli.main(argv) == 7  # el código de salida de la orden, tal cual
    [bound] = calls
    bound.apply_defaults()
    assert {key: bound.arguments[key] for key in expected} == expected


def test_a_command_whose_module_is_missing_is_not_offered(monkeypatch, capsys):
    # El paquete del estudiante no lleva commands/grade.py: ni se lista ni se acepta.
    monkeypatch.setattr(cli, "present", lambda module: module != "commands.grade")
    with pytest.raises(SystemExit):
        cli.main(["--ayuda"])
    lines = capsys.readouterr().out.split("órdenes:")[1].splitlines()
    listed = [line.split()[0] for line in lines if line.startswith("    ")]
    assert "check" in listed and "grade" not in listed
    with pytest.raises(SystemExit) as exit_:
        cli.main(["grade", "--merge-only"])
    assert exit_.value.code == 2
    assert "opción no válida: 'grade'" in capsys.readouterr().err


def test_a_command_imports_only_its_own_module_and_arguments_load_no_grader():
    # Con una orden solo se importa su módulo (doctor funciona aunque otra orden no cargue);
    # sin orden se importan todas, y leer sus argumentos no carga nbgrader ni PyTorch: la
    # ayuda y los errores de uso son inmediatos.
    code = (
        "import sys; from course import cli; cli._parser(['empezar', '01_atencion']);"
        " print(sorted(m for m in sys.modules if m.startswith('course.commands.')));"
        " cli._parser(); print(len([m for m in sys.modules if m.startswith('course.commands.')]),"
        " 'nbgrader' in sys.modules, 'torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == [
        "['course.commands.empezar']",
        str(len(cli.COMMANDS)),
        "False",
        "False",
    ], done.stderr


def test_the_walk_finds_every_command():
    assert {"empezar", "check", "build", "grade", "feedback", "export", "bundle"} <= set(COMMANDS)
    assert {"grade_many.py", "grade_speed.py", "translate_speed.py"} <= set(BENCH)


@pytest.mark.parametrize("flag", ["-h", "--help", "--ayuda"])
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_answers_help_in_spanish(command, flag, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main([command, flag])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"uso: python -m course {command}") and "opciones:" in out
    assert not _english(out)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_rejects_an_unknown_option_in_spanish(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main([command, "--no-existe"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "argumentos no reconocidos: --no-existe" in err or "faltan argumentos" in err
    assert err.startswith("uso: python -m course") and not _english(err)


@pytest.mark.parametrize(
    "argv, spanish",
    [
        (["orden"], "argumento ORDEN: opción no válida: 'orden' (elige entre 'empezar',"),
        (["check"], "faltan argumentos obligatorios: CUADERNO"),
        (["bundle"], "faltan argumentos obligatorios: --through"),
        (["grade", "--jobs", "dos"], "argumento --jobs: 'dos' no es un número entero válido"),
        (["grade", "--memory", "x"], "argumento --memory: 'x' no es un número válido"),
        (["grade", "--lab"], "argumento --lab: espera un valor"),
    ],
)
def test_misuse_exits_2_with_spanish_argparse_text(argv, spanish, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("uso: python -m course") and spanish in err and not _english(err)


def test_course_help_lists_every_command_with_one_spanish_line(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    orders = out.split("órdenes:")[1].splitlines()[2:]
    assert not [line for line in orders if line.startswith(" " * 5)], "una orden ocupa dos líneas"
    lines = {
        line.split()[0]: line for line in out.splitlines() if line[:4] == "    " and line[4] != " "
    }
    assert sorted(lines) == COMMANDS
    assert all(len(line.split()) > 2 for line in lines.values())


@pytest.mark.parametrize("script", BENCH)
def test_bench_scripts_answer_help_and_misuse_in_spanish(script):
    run = [sys.executable, str(REPO / "bench" / script)]
    shown = subprocess.run([*run, "--help"], capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert shown.stdout.startswith("uso: ") and "--ayuda" in shown.stdout
    assert not _english(shown.stdout)
    refused = subprocess.run([*run, "--no-existe"], capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2
    assert "argumentos no reconocidos: --no-existe" in refused.stderr or (
        "faltan argumentos obligatorios" in refused.stderr
    )
    assert not _english(refused.stderr)


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


@pytest.mark.parametrize(
    "argv",
    [
        ["build", "01_atencio"],
        ["empezar", "01_atencio"],
        ["check", str(LABS["01_atencion"].release), "--lab", "01_atencio"],
        ["grade", "--lab", "01_atencio"],
        ["feedback", "--lab", "01_atencio"],
        ["bundle", "--through", "01_atencio"],
    ],
    ids=lambda argv: argv[0],
)
def test_an_unknown_lab_exits_2_listing_the_known_ones(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "Laboratorio desconocido: «01_atencio». Laboratorios disponibles: 01_atencion," in err
    assert not list(tmp_path.iterdir())


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
