"""``python -m course jupyter-es``: JupyterLab en español para todo este entorno.

Es el paso que sigue a ``pip install -r requirements.txt``. Hace tres cosas, y repetirla
no cambia nada:

1. Escribe ``<entorno>/share/jupyter/lab/settings/overrides.json`` (los valores por
   defecto del entorno, que JupyterLab y Notebook 7 leen al arrancar; la configuración
   propia de cada usuario sigue mandando) con el idioma ``es_ES`` y sin el aviso de
   noticias. Conserva lo que ya hubiera en el archivo.
2. Completa el paquete de idioma ``jupyterlab-language-pack-es-ES`` con las traducciones
   del curso (``course/jupyter/language_pack.py``).
3. Copia la extensión del curso que pone en español lo que el paquete de idioma no
   alcanza, como las etiquetas de nbgrader (``course/jupyter/labextension``, fuente en
   ``extension/``), a ``<entorno>/share/jupyter/labextensions/``.
4. Activa en el servidor de Jupyter la extensión que traduce Formgrader
   (``course/jupyter/formgrader.py``) y la que le da al servidor el idioma del entorno
   (``course/jupyter/server_locale.py``) con un archivo en
   ``<entorno>/etc/jupyter/jupyter_server_config.d/``.
"""

import filecmp
import json
import shutil
import sys
from pathlib import Path

from course.commands import present
from course.jupyter import language_pack

HELP = "pone JupyterLab en español en este entorno"
SETTINGS = {
    "@jupyterlab/translation-extension:plugin": {"locale": "es_ES"},
    "@jupyterlab/apputils-extension:notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}
EXTENSION = Path(language_pack.__file__).parent / "labextension"
# La protección de Formgrader (safety) limpia con course.grading, que el zip de
# estudiantes no lleva: allí no hay entregas que calificar y la extensión no se activa.
_SAFETY = present("jupyter.safety")
SERVER = {
    "ServerApp": {
        "jpserver_extensions": {
            "course.jupyter.formgrader": True,
            **({"course.jupyter.safety": True, "course.jupyter.report": True} if _SAFETY else {}),
            "course.jupyter.server_locale": True,
        }
    }
}


def overrides_path(prefix: str | None = None) -> Path:
    return Path(prefix or sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"


def extension_path(prefix: str | None = None) -> Path:
    name = json.loads((EXTENSION / "package.json").read_text())["name"]
    return Path(prefix or sys.prefix) / "share" / "jupyter" / "labextensions" / name


def server_config_path(prefix: str | None = None) -> Path:
    folder = Path(prefix or sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.d"
    return folder / "course-formgrader-es.json"


def formgrader_enabled(prefix: str | None = None) -> bool:
    return _load(server_config_path(prefix)) == SERVER


def _load(path: Path) -> dict | None:
    """El contenido de ``overrides.json``, o ``None`` si no existe o no es JSON válido."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def is_spanish(prefix: str | None = None) -> bool:
    data = _load(overrides_path(prefix)) or {}
    return data.get("@jupyterlab/translation-extension:plugin", {}).get("locale") == "es_ES"


def extension_installed(prefix: str | None = None) -> bool:
    """Si la extensión instalada es igual a la del curso, archivo por archivo."""
    target = extension_path(prefix)
    sources = sorted(p.relative_to(EXTENSION) for p in EXTENSION.rglob("*") if p.is_file())
    installed = sorted(p.relative_to(target) for p in target.rglob("*") if p.is_file())
    return sources == installed and all(
        filecmp.cmp(EXTENSION / p, target / p, shallow=False) for p in sources
    )


def _settings(prefix: str | None) -> bool:
    path = overrides_path(prefix)
    data = _load(path)
    if data is None:
        if path.exists():
            print(f"aviso: {path} no era JSON válido; se reemplaza.")
        data = {}
    before = json.dumps(data, sort_keys=True)
    for plugin, values in SETTINGS.items():
        data.setdefault(plugin, {}).update(values)
    if path.exists() and json.dumps(data, sort_keys=True) == before:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    return True


def _extension(prefix: str | None) -> bool:
    if extension_installed(prefix):
        return False
    target = extension_path(prefix)
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(EXTENSION, target)
    return True


def _formgrader(prefix: str | None) -> bool:
    if formgrader_enabled(prefix):
        return False
    path = server_config_path(prefix)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(SERVER, indent=2) + "\n")
    return True


def add_arguments(parser) -> None:
    """``jupyter-es`` no tiene argumentos: cambia el entorno de este Python."""


def main(args) -> int:
    return run()


def run(prefix: str | None = None, messages: Path | None = None) -> int:
    """``messages``: el ``LC_MESSAGES`` del paquete de idioma (por omisión, el instalado)."""
    messages = messages or language_pack.folder()
    if messages is None:
        print(
            "error: falta el paquete de idioma jupyterlab-language-pack-es-ES; ejecuta"
            " «pip install -r requirements.txt» dentro del entorno virtual.",
            file=sys.stderr,
        )
        return 1
    try:
        steps = [
            (_settings(prefix), f"idioma es_ES para todo el entorno en {overrides_path(prefix)}"),
            (
                bool(language_pack.install(messages)),
                f"traducciones del curso en el paquete de idioma ({messages})",
            ),
            (
                _extension(prefix),
                f"extensión con las etiquetas de nbgrader en {extension_path(prefix)}",
            ),
            (_formgrader(prefix), f"Formgrader en español: {server_config_path(prefix)}"),
        ]
    except OSError as error:
        print(f"error: no se pudo escribir en el entorno: {error}", file=sys.stderr)
        return 1
    print("JupyterLab en español para este entorno:")
    for changed, what in steps:
        print(f"  {'hecho' if changed else 'ya estaba'}: {what}")
    if any(changed for changed, _ in steps):
        print("Si JupyterLab estaba abierto, reinícialo y recarga la página del navegador.")
    return 0
