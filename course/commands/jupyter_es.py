"""``python -m course jupyter-es``: JupyterLab en español para todo este entorno.

Escribe ``<entorno>/share/jupyter/lab/settings/overrides.json`` (los valores por defecto
del entorno, que JupyterLab y Notebook 7 leen al arrancar; la configuración propia de
cada usuario sigue mandando) con el idioma ``es_ES`` del paquete
``jupyterlab-language-pack-es-ES`` y sin el aviso de noticias. Conserva lo que ya hubiera
en el archivo. Es el paso que sigue a ``pip install -r requirements.txt``.
"""

import json
import sys
from pathlib import Path

SETTINGS = {
    "@jupyterlab/translation-extension:plugin": {"locale": "es_ES"},
    "@jupyterlab/apputils-extension:notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def overrides_path(prefix: str | None = None) -> Path:
    return Path(prefix or sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"


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


def run(prefix: str | None = None) -> int:
    path = overrides_path(prefix)
    data = _load(path)
    if data is None:
        if path.exists():
            print(f"aviso: {path} no era JSON válido; se reemplaza.")
        data = {}
    for plugin, values in SETTINGS.items():
        data.setdefault(plugin, {}).update(values)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    print(f"JupyterLab en español para este entorno: {path}")
    return 0
