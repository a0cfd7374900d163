"""Las cadenas en inglés de la interfaz instalada: JupyterLab, Notebook 7 y nbgrader.

Se leen de lo que el navegador recibe de verdad (los paquetes JavaScript compilados y
los esquemas de ajustes), no del código del curso, para saber qué falta por traducir y
qué palabras de una etiqueta visible son inglesas.
"""

import json
import re
import sys
from functools import cache
from pathlib import Path

SHARE = Path(sys.prefix) / "share" / "jupyter"
_LITERAL = r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\$]|\\.|\$(?!\{))*`)"""
_CALLS = {
    "__": re.compile(r"\.__\(\s*" + _LITERAL),
    "_p": re.compile(r"\._p\(\s*" + _LITERAL + r"\s*,\s*" + _LITERAL),
    "_n": re.compile(r"\._n\(\s*" + _LITERAL + r"\s*,\s*" + _LITERAL),
}
# rutas de un esquema de ajustes que jupyterlab_server traduce, con su contexto (las de
# DEFAULT_SCHEMA_SELECTORS en jupyterlab_server/translation_utils.py)
_SCHEMA = {
    re.compile(r"/properties/[^/]+/(title|description)"): "settings",
    re.compile(r"/definitions/[^/]+/properties/[^/]+/(title|description)"): "settings",
    re.compile(r"/(title|description)"): "schema",
    re.compile(r"/jupyter\.lab\.setting-icon-label"): "settings",
    re.compile(r"/jupyter\.lab\.menus/.*/label"): "menu",
    re.compile(r"/jupyter\.lab\.toolbars/.*/label"): "toolbar",
}


def _text(literal: str) -> str:
    if literal[0] == "`":  # plantilla sin ${}: los saltos de línea van tal cual
        inner = literal[1:-1].replace("\\`", "`").replace('"', '\\"').replace("\n", "\\n")
        literal = f'"{inner}"'
    if literal[0] == "'":
        literal = '"' + literal[1:-1].replace("\\'", "'").replace('"', '\\"') + '"'
    try:
        return json.loads(literal)
    except ValueError:  # escapes de JavaScript que JSON no conoce (\x41, \'), o no es texto
        try:
            return json.loads(literal.replace("\\'", "'").replace("\\x", "\\u00"))
        except ValueError:
            return literal[1:-1]


def _bundles() -> list[Path]:
    import notebook

    lab = sorted((SHARE / "lab" / "static").glob("*.js"))
    extensions = sorted((SHARE / "labextensions").glob("**/static/*.js"))
    return lab + extensions + sorted((Path(notebook.__file__).parent / "static").glob("*.js"))


def _schemas() -> list[Path]:
    import notebook

    folders = [SHARE / "lab" / "schemas", Path(notebook.__file__).parent / "schemas"]
    return sorted(path for folder in folders for path in folder.rglob("*.json"))


def _walk(value, path: str, found: set[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _walk(item, f"{path}/{key}", found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict):
                _walk(item, f"{path}[{index}]", found)
    elif isinstance(value, str) and value.strip():
        for pattern, context in _SCHEMA.items():
            if pattern.fullmatch(path):
                found.add(f"{context}\x04{value}")
                break


@cache
def source_strings() -> frozenset[str]:
    """Los msgid del dominio ``jupyterlab``; con contexto, ``contexto\\x04msgid``."""
    found = set()
    for path in _bundles():
        code = path.read_text(encoding="utf-8", errors="replace")
        found |= {_text(m[1]) for m in _CALLS["__"].finditer(code)}
        found |= {_text(m[1]) + "\x04" + _text(m[2]) for m in _CALLS["_p"].finditer(code)}
        found |= {_text(m[1]) for m in _CALLS["_n"].finditer(code)}
    for path in _schemas():
        _walk(json.loads(path.read_text()), "", found)
    return frozenset(found)


@cache
def nbgrader_strings() -> frozenset[str]:
    """Los textos de la extensión de nbgrader (no usa el traductor de JupyterLab)."""
    folder = SHARE / "labextensions" / "@jupyter" / "nbgrader" / "static"
    found = set()
    for path in folder.glob("*.js"):
        for literal in re.findall(_LITERAL, path.read_text()):
            found.add(_text(literal))
    return frozenset(found)


@cache
def formgrader_strings() -> frozenset[str]:
    """Los textos de Formgrader: sus plantillas y su JavaScript (no usan traductor)."""
    import nbgrader

    folder = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader"
    found = set()
    for path in [*folder.rglob("*.js"), *folder.rglob("*.tpl"), *folder.rglob("*.j2")]:
        if "node_modules" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        found |= {_text(literal) for literal in re.findall(_LITERAL, text)}
        found |= set(re.findall(r">([^<>{}]+)<", text))
    return frozenset(found)


# Palabras inglesas que la interfaz muestra sin que estén en esos textos: nombres de
# idioma, valores que llegan del servidor (None) y las tablas de DataTables.
EXTRA_WORDS = frozenset(
    "english spanish spain none search matching records found entries showing data table"
    " available response provide did".split()
)


def words(text: str) -> set[str]:
    return {word.lower() for word in re.findall(r"[A-Za-zÀ-ÿ]{2,}", text)}


@cache
def english_words() -> frozenset[str]:
    """Palabras de los textos en inglés de la interfaz."""
    found = set()
    for text in source_strings() | nbgrader_strings() | formgrader_strings():
        found |= words(text.split("\x04")[-1])
    return frozenset(found | EXTRA_WORDS)
