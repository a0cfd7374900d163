"""``python -m course doctor``: el idioma que JupyterLab mostrará de verdad, release/ al día
y los plurales del resumen."""

import json
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from course import labs
from course.commands import doctor, jupyter_es
from course.jupyter import language_pack

LAB = labs.get("01_atencion")


@pytest.mark.parametrize(
    ("results", "summary"),
    [
        ([(False, "a", "arréglalo")], "Hay 1 cosa que arreglar."),
        ([(False, "a", "arréglalo"), (False, "b", "arréglalo")], "Hay 2 cosas que arreglar."),
    ],
)
def test_summary_counts_in_spanish(monkeypatch, capsys, results, summary):
    monkeypatch.setattr(doctor, "checks", lambda: results + [(True, "c", "")])
    assert doctor.run() == 1
    assert capsys.readouterr().out.rstrip().endswith(summary)


def test_all_right_says_so(monkeypatch, capsys):
    monkeypatch.setattr(doctor, "checks", lambda: [(True, "c", "")])
    assert doctor.run() == 0
    assert capsys.readouterr().out.rstrip().endswith("Todo en orden.")


def _user_setting(monkeypatch, tmp_path, text: str | None):
    monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(tmp_path))
    if text is not None:
        doctor.user_settings().parent.mkdir(parents=True)
        doctor.user_settings().write_text(text)


def test_a_users_own_language_setting_is_reported(monkeypatch, tmp_path):
    # Lo que escribe JupyterLab al elegir Settings › Language › English: JSON5 con comentarios.
    _user_setting(monkeypatch, tmp_path, '{\n  // Idioma\n  "locale": "en",\n}\n')
    ok, what, fix = doctor._user_language()
    assert not ok
    assert "«en»" in what and str(doctor.user_settings()) in what
    assert "Configuración › Idioma › Español" in fix


@pytest.mark.parametrize("text", [None, '{"locale": "es_ES"}', '{"stringsPrefix": "!!"}'])
def test_no_user_setting_or_a_spanish_one_is_fine(monkeypatch, tmp_path, text):
    _user_setting(monkeypatch, tmp_path, text)
    assert doctor._user_language()[0]


def test_a_server_default_locale_also_overrides_ours(monkeypatch, tmp_path):
    _user_setting(monkeypatch, tmp_path, '{"locale": "default"}')
    assert not doctor._user_language()[0]


def test_missing_translations_are_reported_until_jupyter_es_runs(monkeypatch, tmp_path):
    installed = language_pack.folder()
    if installed is None:
        pytest.skip("falta jupyterlab-language-pack-es-ES (pip install -r requirements.txt)")
    pack = tmp_path / "LC_MESSAGES"
    pack.mkdir()
    for path in installed.iterdir():  # el paquete tal como lo deja pip
        if path.suffix in (".json", ".mo"):
            backup = installed / f"{path.name}.orig"
            shutil.copy2(backup if backup.exists() else path, pack / path.name)
    monkeypatch.setattr(language_pack, "folder", lambda: pack)
    monkeypatch.setattr(jupyter_es, "is_spanish", lambda: True)
    monkeypatch.setattr(jupyter_es, "extension_installed", lambda: True)
    monkeypatch.setattr(jupyter_es, "formgrader_enabled", lambda: True)
    ok, what, fix = doctor._language_pack()
    assert not ok and "las traducciones del curso" in what and "jupyter-es" in fix
    language_pack.install(pack)
    assert doctor._language_pack()[0]


def test_an_extension_that_differs_from_the_course_one_is_reported(tmp_path):
    assert not jupyter_es.extension_installed(str(tmp_path))
    shutil.copytree(jupyter_es.EXTENSION, jupyter_es.extension_path(str(tmp_path)))
    assert jupyter_es.extension_installed(str(tmp_path))
    package = jupyter_es.extension_path(str(tmp_path)) / "package.json"
    package.write_text(package.read_text().replace("1.0.0", "0.9.0"))
    assert not jupyter_es.extension_installed(str(tmp_path))


@pytest.mark.slow
def test_a_release_notebook_edited_in_place_is_stale(tmp_path):
    released = tmp_path / "release" / LAB.id / f"{LAB.id}.ipynb"
    released.parent.mkdir(parents=True)
    shutil.copy2(LAB.release, released)
    assert doctor.stale_releases([LAB], tmp_path) == []
    # Lo que hace el autoguardado de JupyterLab al trabajar dentro de release/.
    notebook = nbformat.read(released, 4)
    notebook.cells[0].metadata["trusted"] = True
    notebook.metadata["widgets"] = {}
    nbformat.write(notebook, released)
    assert doctor.stale_releases([LAB], tmp_path) == [LAB.id]
    released.unlink()
    assert doctor.stale_releases([LAB], tmp_path) == [LAB.id]


def test_release_check_says_which_labs_and_what_to_do(monkeypatch):
    monkeypatch.setattr(doctor, "stale_releases", lambda: ["03_posicional"])
    ok, what, fix = doctor._release()
    assert not ok and "03_posicional" in what
    assert "python -m course build 03_posicional" in fix


def test_warnings_are_shown_but_do_not_fail(monkeypatch, capsys):
    results = [(doctor.WARN, "sin bubblewrap", "sudo apt-get install bubblewrap"), (True, "c", "")]
    monkeypatch.setattr(doctor, "checks", lambda: results)
    assert doctor.run() == 0
    out = capsys.readouterr().out
    assert "⚠ sin bubblewrap\n    → sudo apt-get install bubblewrap" in out
    assert out.rstrip().endswith("Todo en orden, con 1 aviso.")


def test_missing_bubblewrap_or_chromium_is_a_warning_that_says_how_to_install(monkeypatch):
    from course.grading import sandbox

    monkeypatch.setattr(sandbox, "available", lambda: "no se encuentra «bwrap»")
    ok, what, fix = doctor._sandbox()
    assert ok == doctor.WARN and "bwrap" in what and "apt-get install bubblewrap" in fix
    monkeypatch.setattr(doctor, "CHROMIUM", (Path("/no/existe/chromium"), "no-existe-chromium"))
    ok, what, fix = doctor._chromium()
    assert ok == doctor.WARN and "apt-get install chromium" in fix


def test_the_whole_data_message_is_shown(monkeypatch):
    from course.translation.data import sources

    def missing(**_):
        raise sources.DataError("No se encuentran.\n  1. uno;\n  2. dos.\nDescarga y define X.")

    monkeypatch.setattr(sources, "locate", missing)
    ok, what, fix = doctor._data()
    assert not ok and "1. uno;" in what and "2. dos." in what and "define X." in what


def _kernel_spec(monkeypatch, tmp_path, python: str) -> None:
    spec = tmp_path / "kernels" / "python3" / "kernel.json"
    spec.parent.mkdir(parents=True)
    argv = [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec.write_text(json.dumps({"argv": argv, "display_name": "Python 3", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))


def test_the_kernel_python_imports_this_course(monkeypatch, tmp_path):
    _kernel_spec(monkeypatch, tmp_path, sys.executable)
    assert doctor.kernel_python() == sys.executable
    ok, what, _ = doctor._kernel()
    assert ok is True and "este paquete" in what


def test_a_kernel_without_the_course_fails(monkeypatch, tmp_path):
    # Un núcleo con otro Python (el del sistema, sin el curso instalado): doctor no dice ✔.
    bare = tmp_path / "bare" / "bin" / "python"
    bare.parent.mkdir(parents=True)
    bare.write_text(f'#!/bin/sh\nexec {sys.executable} -I -S "$@"\n')
    bare.chmod(0o755)
    _kernel_spec(monkeypatch, tmp_path, str(bare))
    ok, what, fix = doctor._kernel()
    assert ok is False and "no encuentran el paquete «course»" in what and "pip install -e ." in fix


def test_a_kernel_that_says_python_uses_the_python_of_jupyter(monkeypatch, tmp_path):
    _kernel_spec(monkeypatch, tmp_path, "python")
    fake = tmp_path / "bin" / "jupyter"
    fake.parent.mkdir()
    fake.write_text("#!/otro/entorno/bin/python3.11\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    assert doctor.kernel_python() == "/otro/entorno/bin/python3.11"
    ok, what, _ = doctor._kernel()
    assert ok is False and "/otro/entorno/bin/python3.11" in what
