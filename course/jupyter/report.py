"""«Informe de la clase» en Formgrader: las páginas de ``python -m course informe``.

Sirve, con sesión iniciada, ``<base>/formgrader/informe/`` (el índice) y
``<base>/formgrader/informe/<lab>.html``, calculadas en cada petición con lo que guardó la
calificación del curso de Formgrader. Están bajo ``<base>/formgrader``, así que llevan la
Content-Security-Policy de ``course.jupyter.safety``: sus dos guiones (plotly.js y el que
dibuja las figuras) van marcados con :data:`course.jupyter.safety.MARKER`, que esa
extensión cambia por el *nonce* de cada respuesta; los datos de las figuras son JSON que no
se ejecuta. Añade además la pestaña «Informe de la clase» al menú de Formgrader.

La activa ``python -m course jupyter-es`` (solo donde está el calificador).
"""

import re
from pathlib import Path

from jinja2 import BaseLoader, Environment
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from tornado import web

from course.jupyter.safety import MARKER

ROUTE = "formgrader/informe"
TAB = (
    '<li role="presentation"><a href="{{ base_url }}/formgrader/informe/">'
    "Informe de la clase</a></li>"
)
# La última pestaña del menú de Formgrader (en inglés o ya traducida): la nueva va detrás.
LAST_TAB = re.compile(r'(<a href="\{\{ base_url \}\}/formgrader/manage_students">[^<]*</a></li>)')


class TabLoader(BaseLoader):
    """Lee con otro cargador y añade la pestaña del informe al menú de ``base.tpl``."""

    def __init__(self, loader: BaseLoader):
        self.loader = loader

    def get_source(self, environment: Environment, template: str):
        source, filename, uptodate = self.loader.get_source(environment, template)
        return LAST_TAB.sub(lambda m: m[1] + "\n" + TAB, source, count=1), filename, uptodate


class ReportHandler(JupyterHandler):
    """El índice o la página de un laboratorio, con lo guardado en el curso de Formgrader."""

    @web.authenticated
    def get(self, lab: str | None = None):
        from course.report import build, pages

        formgrader = self.settings.get("nbgrader_formgrader")
        if formgrader is None:
            raise web.HTTPError(404)
        root = Path(formgrader.coursedir.root)
        room, found = build.reports(root, [lab] if lab else None)
        if lab:
            if not found:
                raise web.HTTPError(404)
            page = pages.lab_page(found[0], room.names, MARKER, self._notebook(root))
        else:
            page = pages.index_page(found, room.names, MARKER, build.lab_file)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(page)  # de una vez: la CSP cambia el nonce en el primer trozo

    def _notebook(self, root: Path):
        """El cuaderno publicado de un laboratorio en JupyterLab, si el curso está dentro
        de la carpeta del servidor; si no, sin enlace."""
        server_root = Path(self.settings.get("server_root_dir", "")).resolve()
        try:
            inside = root.resolve().relative_to(server_root)
        except ValueError:
            return lambda lab: None
        tree = url_path_join(self.base_url, "lab", "tree", *inside.parts, "release")
        return lambda lab: url_path_join(tree, lab, f"{lab}.ipynb")


def _add_tab(settings: dict) -> None:
    environment = settings.get("nbgrader_jinja2_env")
    if environment is not None and not _wrapped(environment.loader):
        environment.loader = TabLoader(environment.loader)
        environment.cache.clear()


def _wrapped(loader) -> bool:
    while loader is not None:
        if isinstance(loader, TabLoader):
            return True
        loader = getattr(loader, "loader", None)
    return False


def _jupyter_server_extension_points():
    return [{"module": "course.jupyter.report"}]


def _load_jupyter_server_extension(serverapp) -> None:
    web_app = serverapp.web_app
    route = url_path_join(web_app.settings["base_url"], ROUTE)
    web_app.add_handlers(
        ".*$",
        [
            (route, web.RedirectHandler, {"url": route + "/"}),
            (route + "/(?:index\\.html)?", ReportHandler),
            (route + "/([0-9]{2}_[a-z0-9]+)\\.html", ReportHandler),
        ],
    )


async def _start_jupyter_server_extension(serverapp) -> None:
    """nbgrader crea sus plantillas al cargar su extensión: la pestaña se añade al arrancar."""
    _add_tab(serverapp.web_app.settings)
