"""Completa el paquete de idioma es_ES de JupyterLab con las traducciones del curso.

El paquete oficial (``jupyterlab-language-pack-es-ES`` 4.5.post3) se quedó en JupyterLab
4.5: le faltan cadenas de JupyterLab 4.6 y de Notebook 7 (Run, Kernel, Tabs, Idle…) y
tiene errores («Mostar», «Reiniciar Kernel?», Kernel, intérprete y núcleo para lo mismo).
``es_ES.json`` tiene las cadenas del curso en el formato del paquete (``msgid`` o
``contexto\\x04msgid`` -> ``[traducción]``, o ``[singular, plural]``).

JupyterLab lee el paquete instalado de dos maneras: el navegador pide
``LC_MESSAGES/<dominio>.json`` y el servidor traduce menús y ajustes con
``<dominio>.mo``. Se reescriben los dos, con las cadenas del paquete y las del curso
encima, para los dominios ``jupyterlab``, ``notebook`` (el de Notebook 7, casi vacío en el
paquete) y ``jupyterlab_widgets``. Lo que escribimos lleva una marca en la cabecera
(``MARK``); un archivo sin ella es del paquete (recién instalado, reinstalado o
actualizado con pip) y se guarda al lado como original (``.orig``). Cada instalación parte
del original: repetirla no cambia nada.
"""

import gettext
import importlib.util
import json
import shutil
import struct
from pathlib import Path

OURS = Path(__file__).parent / "es_ES.json"
DOMAINS = ("jupyterlab", "notebook", "jupyterlab_widgets")
PACK = "jupyterlab_language_pack_es_ES"
MARK = "x-completado-por"  # en la cabecera ("") de los .json que escribimos


def folder() -> Path | None:
    """``LC_MESSAGES`` del paquete instalado, o ``None`` si no está."""
    spec = importlib.util.find_spec(PACK)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "locale" / "es_ES" / "LC_MESSAGES"


def translations() -> dict[str, list[str]]:
    return json.loads(OURS.read_text(encoding="utf-8"))


def _original(messages: Path, name: str) -> Path:
    backup = messages / f"{name}.orig"
    return backup if backup.exists() else messages / name


def merged(messages: Path, domain: str) -> dict:
    """El ``<dominio>.json`` del paquete original con las cadenas del curso encima.

    Notebook 7 y los widgets usan también cadenas de JupyterLab: sus dominios las reciben
    todas.
    """
    data = json.loads(_original(messages, f"{domain}.json").read_text(encoding="utf-8"))
    if domain != "jupyterlab":
        lab = json.loads(_original(messages, "jupyterlab.json").read_text(encoding="utf-8"))
        data.update({key: value for key, value in lab.items() if key})
    data.update(translations())
    return data


def is_complete(messages: Path) -> bool:
    """Si los ``.json`` instalados tienen ya todas las cadenas del curso."""
    ours = translations()
    for domain in DOMAINS:
        try:
            installed = json.loads((messages / f"{domain}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        if any(installed.get(key) != value for key, value in ours.items()):
            return False
    return True


def install(messages: Path) -> list[str]:
    """Escribe los dominios completados; devuelve los que cambiaron."""
    changed = []
    for domain in DOMAINS:
        current = json.loads((messages / f"{domain}.json").read_text(encoding="utf-8"))
        if MARK not in current.get("", {}):  # lo dejó pip: es el original
            for name in (f"{domain}.json", f"{domain}.mo"):
                shutil.copy2(messages / name, messages / f"{name}.orig")
        data = merged(messages, domain)
        data[""] = {**data[""], MARK: "python -m course jupyter-es"}
        text = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
        target = messages / f"{domain}.json"
        if target.read_text(encoding="utf-8") == text:
            continue
        target.write_text(text, encoding="utf-8")
        header = _header(_original(messages, f"{domain}.mo"))
        (messages / f"{domain}.mo").write_bytes(_mo(data, header))
        changed.append(domain)
    return changed


def _header(mo: Path) -> str:
    with mo.open("rb") as file:
        return gettext.GNUTranslations(file)._catalog.get("", "")


def _mo(data: dict, header: str) -> bytes:
    """Un catálogo GNU gettext (.mo) con las entradas de ``data`` (formato del .json).

    Los plurales se guardan como ``msgid\\0msgid``: gettext busca solo por el singular.
    """
    entries = {"": header}
    for key, values in data.items():
        if not key:
            continue
        msgid = key if len(values) == 1 else f"{key}\x00{key}"
        entries[msgid] = "\x00".join(values)
    ids = sorted(entries)
    keys = [i.encode() for i in ids]
    values = [entries[i].encode() for i in ids]
    start = 7 * 4 + 16 * len(ids)
    table, blob = [], b""
    for text in keys + values:
        table.append((len(text), start + len(blob)))
        blob += text + b"\x00"
    head = struct.pack("<7I", 0x950412DE, 0, len(ids), 28, 28 + 8 * len(ids), 0, 0)
    offsets = b"".join(struct.pack("<2I", *pair) for pair in table)
    return head + offsets + blob
