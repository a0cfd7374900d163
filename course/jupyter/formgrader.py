"""Formgrader en español: su navegación, los títulos y las cabeceras de sus vistas.

Formgrader (nbgrader 0.9.6) se dibuja en el servidor con plantillas Jinja en inglés y no
tiene traducciones. Esta extensión del servidor de Jupyter envuelve el cargador de esas
plantillas: al leer una, cambia cada texto de ``formgrader_es.json`` que aparece como
contenido entero de un elemento (``>Manage Students<``) o como título de la vista
(``{%- block title -%}``). No copia ni edita las plantillas de nbgrader: un texto que una
versión nueva cambie se queda en inglés, y ``tests/test_formgrader_es.py`` lo señala.
La activa ``python -m course jupyter-es``.
"""

import json
import re
from pathlib import Path

from jinja2 import BaseLoader, Environment

TEXTS = json.loads((Path(__file__).parent / "formgrader_es.json").read_text(encoding="utf-8"))
SETTING = "nbgrader_jinja2_env"


def translate(source: str) -> str:
    """El texto de una plantilla con los textos conocidos en español."""

    def element(match: re.Match) -> str:
        text = match[2].strip()
        return f"{match[1]}{TEXTS[text]}{match[3]}" if text in TEXTS else match[0]

    source = re.sub(r"(>\s*)([^<>{}]+?)(\s*<)", element, source)
    return re.sub(r"({%-? block title -?%}\s*)([^{}]+?)(\s*{%-? endblock -?%})", element, source)


class SpanishLoader(BaseLoader):
    """Un cargador de Jinja que traduce lo que lee otro."""

    def __init__(self, loader: BaseLoader):
        self.loader = loader

    def get_source(self, environment: Environment, template: str):
        source, filename, uptodate = self.loader.get_source(environment, template)
        return translate(source), filename, uptodate


def _translate_environment(settings: dict) -> None:
    environment = settings.get(SETTING)
    if environment is not None and not isinstance(environment.loader, SpanishLoader):
        environment.loader = SpanishLoader(environment.loader)
        environment.cache.clear()


def _jupyter_server_extension_points():
    return [{"module": "course.jupyter.formgrader"}]


def _load_jupyter_server_extension(serverapp) -> None:
    # nbgrader crea su entorno de plantillas al cargar su propia extensión, que puede ir
    # después de esta: se envuelve cuando el servidor ya ha arrancado.
    serverapp.io_loop.add_callback(_translate_environment, serverapp.web_app.settings)
