"""Formgrader en español: sus plantillas, y lo que su JavaScript escribe en la página.

Formgrader (nbgrader 0.9.6) se dibuja en el servidor con plantillas Jinja en inglés y no
tiene traducciones. Esta extensión del servidor de Jupyter hace dos cosas:

- Envuelve el cargador de esas plantillas: al leer una, cambia cada texto de
  ``formgrader_es.json`` que aparece como contenido entero de un elemento
  (``>Manage Students<``) o como título de la vista (``{%- block title -%}``).
- Añade a cada página de Formgrader (las de las plantillas y la de calificación manual,
  que nbconvert dibuja a partir del cuaderno) un script servido desde
  ``<base>/curso-es/formgrader_es.js`` (``static/formgrader_es.js``): traduce en el
  navegador las tablas, los diálogos, los avisos y los botones que el JavaScript de
  nbgrader escribe en inglés (``formgrader_pagina_es.json``). Es un archivo, no un script
  en línea, y no toca el cuaderno del estudiante.

No copia ni edita las plantillas ni el JavaScript de nbgrader: un texto que una versión
nueva cambie se queda en inglés, y ``tests/test_formgrader_es.py`` y la prueba del
navegador lo señalan. La activa ``python -m course jupyter-es``.
"""

import json
import re
from pathlib import Path

from jinja2 import BaseLoader, Environment
from jupyter_server.auth.decorator import allow_unauthenticated
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from markupsafe import Markup, escape

HERE = Path(__file__).parent
TEXTS = json.loads((HERE / "formgrader_es.json").read_text(encoding="utf-8"))
PAGE = json.loads((HERE / "formgrader_pagina_es.json").read_text(encoding="utf-8"))
SETTING = "nbgrader_jinja2_env"
SCRIPT_URL = "curso-es/formgrader_es.js"
TAG = '<script defer src="{base}/' + SCRIPT_URL + '"></script>\n'
# En las plantillas, la etiqueta la escribe una función al dibujar la página, no el texto
# de la plantilla: así la ve course.jupyter.safety como un guion del curso (le pone su
# nonce al responder) y no como uno de nbgrader (que marca al leer la plantilla).
TEMPLATE_TAG = "{{ curso_es_script(base_url) }}"


def translate(source: str) -> str:
    """El texto de una plantilla con los textos conocidos en español."""

    def element(match: re.Match) -> str:
        text = match[2].strip()
        return f"{match[1]}{TEXTS[text]}{match[3]}" if text in TEXTS else match[0]

    source = re.sub(r"(>\s*)([^<>{}]+?)(\s*<)", element, source)
    return re.sub(r"({%-? block title -?%}\s*)([^{}]+?)(\s*{%-? endblock -?%})", element, source)


def with_script(html: str, tag: str) -> str:
    """La página con ``tag`` al final de su ``<head>``."""
    return html.replace("</head>", str(tag) + "</head>", 1)


def script_tag(base: str) -> Markup:
    """La etiqueta ``<script>`` del traductor para una página bajo ``base``."""
    return Markup(TAG.format(base=escape(base)))


def script() -> str:
    """``static/formgrader_es.js`` con los textos de las plantillas y de las páginas."""
    data = {"texts": {**TEXTS, **PAGE["texts"]}, "patterns": PAGE["patterns"]}
    code = (HERE / "static" / "formgrader_es.js").read_text(encoding="utf-8")
    return code.replace("__DATA__", json.dumps(data, ensure_ascii=False))


class SpanishLoader(BaseLoader):
    """Un cargador de Jinja que traduce lo que lee otro y le añade el script."""

    def __init__(self, loader: BaseLoader):
        self.loader = loader

    def get_source(self, environment: Environment, template: str):
        source, filename, uptodate = self.loader.get_source(environment, template)
        return with_script(translate(source), TEMPLATE_TAG), filename, uptodate


class SpanishExporter:
    """El exportador de nbconvert de Formgrader, con el script en la página que dibuja."""

    def __init__(self, exporter):
        self.exporter = exporter

    def __getattr__(self, name):
        return getattr(self.exporter, name)

    def from_filename(self, filename, resources=None, **kwargs):
        html, resources = self.exporter.from_filename(filename, resources=resources, **kwargs)
        base = (resources or {}).get("base_url", "")
        return with_script(html, script_tag(base)), resources


class ScriptHandler(JupyterHandler):
    """Sirve el script de traducción: el mismo para todos y solo lleva textos de la
    interfaz, así que no pide sesión (una página abierta con ``?token=`` no tiene cookie)."""

    @allow_unauthenticated
    def get(self):
        self.set_header("Content-Type", "text/javascript; charset=utf-8")
        self.finish(script())


def _translate_environment(settings: dict) -> None:
    environment = settings.get(SETTING)
    if environment is not None and not isinstance(environment.loader, SpanishLoader):
        environment.globals["curso_es_script"] = script_tag
        environment.loader = SpanishLoader(environment.loader)
        environment.cache.clear()
    exporter = settings.get("nbgrader_exporter")
    if exporter is not None and not isinstance(exporter, SpanishExporter):
        settings["nbgrader_exporter"] = SpanishExporter(exporter)


def _jupyter_server_extension_points():
    return [{"module": "course.jupyter.formgrader"}]


def _load_jupyter_server_extension(serverapp) -> None:
    web_app = serverapp.web_app
    route = url_path_join(web_app.settings["base_url"], SCRIPT_URL)
    web_app.add_handlers(".*$", [(route, ScriptHandler)])


async def _start_jupyter_server_extension(serverapp) -> None:
    """nbgrader crea su entorno de plantillas al cargar su propia extensión, que va
    después de esta: se envuelve al arrancar el servidor, con todas ya cargadas (no con
    ``io_loop.add_callback``, que la extensión de JupyterHub ejecuta antes)."""
    _translate_environment(serverapp.web_app.settings)
