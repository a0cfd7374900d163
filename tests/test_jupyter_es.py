"""``python -m course jupyter-es``: las traducciones del curso, su instalación y la extensión.

Las cadenas que JupyterLab 4.6 y Notebook 7 muestran se sacan de sus paquetes JavaScript
instalados (``interface_strings``), no del código del curso.
"""

import gettext
import importlib.util
import json
import re
import shutil

import pytest
from interface_strings import source_strings

from course.commands import jupyter_es
from course.jupyter import language_pack

BUILD = language_pack.OURS.parents[2] / "extension" / "build.py"


@pytest.fixture(scope="module")
def original_pack(tmp_path_factory):
    """Una copia del paquete es_ES tal como lo instala pip (sin las cadenas del curso)."""
    installed = language_pack.folder()
    if installed is None:
        pytest.skip("falta jupyterlab-language-pack-es-ES (pip install -r requirements.txt)")
    folder = tmp_path_factory.mktemp("paquete_original")
    for path in installed.iterdir():
        if path.suffix in (".json", ".mo"):
            backup = installed / f"{path.name}.orig"
            shutil.copy2(backup if backup.exists() else path, folder / path.name)
    return folder


@pytest.fixture
def pack(original_pack, tmp_path):
    folder = tmp_path / "LC_MESSAGES"
    shutil.copytree(original_pack, folder)
    return folder


def _pack_strings(folder) -> dict:
    return json.loads((folder / "jupyterlab.json").read_text(encoding="utf-8"))


def test_every_string_of_the_interface_has_spanish(original_pack):
    known = _pack_strings(original_pack) | language_pack.translations()
    missing = sorted(key for key in source_strings() if key not in known)
    assert not missing, f"{len(missing)} cadenas sin traducir, p. ej. {missing[:10]}"


def test_translations_are_strings_of_this_jupyterlab(original_pack):
    fixed = set(_pack_strings(original_pack))  # las que corrigen al paquete
    unknown = set(language_pack.translations()) - source_strings() - fixed
    assert not unknown, f"cadenas que JupyterLab 4.6 ya no usa: {sorted(unknown)[:10]}"


def test_translations_keep_placeholders_and_code():
    for key, values in language_pack.translations().items():
        english = key.split("\x04")[-1]
        singular = values[0]  # el plural puede añadir %1 («estas %1 celdas»)
        assert sorted(re.findall(r"%\d", singular)) == sorted(re.findall(r"%\d", english)), key
        for value in values:
            assert set(re.findall(r"%\d", english)) <= set(re.findall(r"%\d", value)), key
            assert re.findall(r"`[^`]*`", value) == re.findall(r"`[^`]*`", english), key


def test_plural_strings_have_two_forms_that_differ():
    plurals = {k: v for k, v in language_pack.translations().items() if len(v) == 2}
    assert "Run Selected Cell" in plurals  # «Ejecutar la celda / las celdas seleccionadas»
    for key, (one, many) in plurals.items():
        assert one != many, key


def test_one_word_for_kernel_and_the_pack_errors_are_fixed(original_pack, pack):
    language_pack.install(pack)
    merged = _pack_strings(pack)
    original = _pack_strings(original_pack)
    assert "Mostar" in original["Show Line Numbers"][0]  # el error del paquete existe…
    assert merged["Show Line Numbers"] == ["Mostrar los números de línea"]  # …y se corrige
    for key, values in merged.items():
        for value in values if key else ():
            prose = re.sub(r'"[^"]*"|`[^`]*`', "", value)  # sin código ni identificadores
            assert not re.search(r"(?i)\bkernels?\b|intérprete", prose), (key, value)
            if value.rstrip().endswith("?"):
                assert "¿" in value, (key, value)
    assert merged["Restart Kernel?"] == ["¿Reiniciar el núcleo?"]


def test_install_writes_json_and_mo_keeps_the_original_and_is_idempotent(original_pack, pack):
    assert language_pack.install(pack) == list(language_pack.DOMAINS)
    assert language_pack.install(pack) == []
    assert language_pack.is_complete(pack)
    for path in original_pack.iterdir():
        if path.stem in language_pack.DOMAINS:
            assert (pack / f"{path.name}.orig").read_bytes() == path.read_bytes()
    with (pack / "jupyterlab.mo").open("rb") as file:
        server = gettext.GNUTranslations(file)  # el servidor traduce menús con el .mo
    assert server.pgettext("menu", "Kernel") == "Núcleo"
    assert server.pgettext("menu", "File") == "Archivo"  # del paquete, se conserva
    assert server.ngettext("Run Selected Cell", "Run Selected Cells", 3) == (
        "Ejecutar las celdas seleccionadas"
    )
    notebook = json.loads((pack / "notebook.json").read_text(encoding="utf-8"))
    assert notebook[""]["domain"] == "notebook"
    assert notebook["Launch Jupyter Notebook File Browser"] == [
        "Abrir el explorador de archivos de Jupyter Notebook"
    ]


def test_a_pip_reinstall_is_detected_and_repaired(pack):
    language_pack.install(pack)
    for domain in language_pack.DOMAINS:  # pip vuelve a poner los archivos originales
        shutil.copy2(pack / f"{domain}.json.orig", pack / f"{domain}.json")
    assert not language_pack.is_complete(pack)
    assert language_pack.install(pack) == list(language_pack.DOMAINS)
    assert language_pack.is_complete(pack)


def test_a_pip_upgrade_of_the_pack_becomes_the_new_original(pack):
    language_pack.install(pack)
    upgraded = json.loads((pack / "jupyterlab.json.orig").read_text(encoding="utf-8"))
    upgraded["Una cadena nueva del paquete"] = ["Una traducción nueva del paquete"]
    (pack / "jupyterlab.json").write_text(json.dumps(upgraded), encoding="utf-8")
    language_pack.install(pack)
    installed = _pack_strings(pack)
    assert installed["Una cadena nueva del paquete"] == ["Una traducción nueva del paquete"]
    assert installed["Restart Kernel?"] == ["¿Reiniciar el núcleo?"]
    assert language_pack.install(pack) == []


def test_extension_artefact_matches_its_sources():
    spec = importlib.util.spec_from_file_location("build_extension", BUILD)
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    expected = build.files()
    folder = jupyter_es.EXTENSION
    committed = {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in folder.rglob("*")
        if p.is_file()
    }
    assert committed == expected, "ejecuta «python extension/build.py» y añade el resultado"
    package = json.loads(expected["package.json"])
    code = expected[package["jupyterlab"]["_build"]["load"]]
    assert f"_JUPYTERLAB)[{json.dumps(package['name'])}]" in code
    assert '"Validate": "Validar"' in code


def test_command_is_idempotent_keeps_other_settings_and_says_what_it_did(pack, tmp_path, capsys):
    prefix = tmp_path / "entorno"
    settings = jupyter_es.overrides_path(str(prefix))
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"otro:plugin": {"valor": 1}}))

    assert jupyter_es.run(str(prefix), pack) == 0
    first = capsys.readouterr().out
    assert first.count("hecho:") == 4
    assert jupyter_es.run(str(prefix), pack) == 0
    second = capsys.readouterr().out
    assert "hecho:" not in second and second.count("ya estaba:") == 4

    data = json.loads(settings.read_text())
    assert data["otro:plugin"] == {"valor": 1}
    assert data["@jupyterlab/translation-extension:plugin"]["locale"] == "es_ES"
    assert jupyter_es.extension_installed(str(prefix))
    assert jupyter_es.formgrader_enabled(str(prefix))
    assert language_pack.is_complete(pack)


def test_command_fails_in_spanish_without_the_language_pack(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(language_pack, "folder", lambda: None)
    assert jupyter_es.run(str(tmp_path)) == 1
    assert "pip install -r requirements.txt" in capsys.readouterr().err
    assert not jupyter_es.overrides_path(str(tmp_path)).exists()


# Palabras que van con mayúscula dentro de una etiqueta: nombres propios, teclas, siglas.
PROPER = set(
    "JupyterLab Jupyter Python Markdown LaTeX Notebook IPython NumPy SciPy Matplotlib SymPy"
    " CodeMirror Git GitHub JavaScript Debugger Hub Mayús Shift Ctrl Alt Enter Tab Esc Kernel"
    " Julia Go Vega Lumino Binder Chrome Chromium Firefox Edge Unicode MathJax Formgrader"
    " JSONLines Closure Stylesheets Common Lisp Spec Reveal Meta Lab Comando Edición Escape"
    " JupyterHub"
    # nombres de menús («Abrir el menú Editar»)
    " Archivo Editar Ver Ejecutar Núcleo Pestañas Configuración Ayuda".split()
)


def test_the_pack_errors_are_fixed(original_pack, pack):
    """Los errores del paquete oficial que señaló la revisión de la interfaz (issue 21)."""
    language_pack.install(pack)
    merged = _pack_strings(pack)
    assert merged["Go"] == ["Go"]  # el lenguaje, no el verbo «ir»
    assert "1" not in merged["%1 Terminals, %2 Kernel sessions"][0].split("%")[0]
    for english in (
        "%1 Terminals, %2 Kernel sessions",
        "%1 workspace with %2 tabs, last modified on %3",
    ):
        assert not re.search(r"%\d (terminales|sesiones|pestañas)", merged[english][0]), english
    for key, values in merged.items():
        assert not any("la selecciona " in value for value in values), key


def test_no_title_case_calques_in_short_labels(original_pack, pack):
    """«Cerrar Todas las Pestañas»: en español solo va con mayúscula la primera palabra."""
    language_pack.install(pack)
    calques = []
    for key, values in _pack_strings(pack).items():
        for value in values if key else ():
            found = re.findall(r"[A-Za-zÁÉÍÓÚÑáéíóúñü]+", value)
            capitals = [w for w in found[1:] if w[0].isupper() and not w.isupper()]
            after_stop = re.search(r"[.:?!]\s+\S+$|[.:?!]\s", value)
            if len(found) <= 8 and set(capitals) - PROPER and not after_stop:
                calques.append((key, value))
    assert not calques, f"{len(calques)} etiquetas con mayúsculas calcadas, p. ej. {calques[:5]}"
