"""Formgrader seguro de abrir: Content-Security-Policy, HTML limpio y MathJax local.

Formgrader muestra cada entrega como HTML en el mismo origen que su API de notas: un
guion del estudiante que llegara a ejecutarse podría cambiar las notas de toda la clase.
El HTML del estudiante ya sale limpio del calificador (``course/grading/sanitize.py``);
esta extensión del servidor de Jupyter añade otra barrera en las páginas de Formgrader:

- Cada respuesta bajo ``<base>/formgrader`` lleva una ``Content-Security-Policy`` que
  solo deja ejecutar los guiones con el *nonce* de esa respuesta. Las plantillas de
  nbgrader (las de Formgrader y las de la página de calificación que dibuja nbconvert) se
  leen con la marca :data:`MARKER` en cada ``<script``, que se cambia por un nonce nuevo
  en cada respuesta; el HTML del cuaderno no pasa por esas plantillas y no la lleva. Los
  guiones que cargan esos (MathJax) valen por ``'strict-dynamic'``; los tres manejadores
  ``onclick`` de las plantillas, por su huella (``'unsafe-hashes'``).
- Al leer esas plantillas, cada valor que escriben (el estudiante, el laboratorio, los
  nombres) se escapa según dónde va: JSON dentro de un guion, HTML fuera
  (``course.jupyter.escaping``); así un identificador no puede salir de su cadena y correr
  con el nonce de la página.
- Los archivos de la entrega que Formgrader sirve tal cual (``submissions/<id>/<ruta>``)
  llevan además ``sandbox``: un ``.html`` del estudiante se abre en un origen opaco.
- La página de calificación pasa el cuaderno por ``SanitizeStudentHTML`` al dibujarlo
  (también si ``nbgrader_config.py`` no lo pidiera) y carga MathJax del propio servidor
  (``jupyter-server-mathjax``), no de un CDN: las fórmulas y el botón de ayuda funcionan
  sin conexión.

La activa ``python -m course jupyter-es`` junto a la traducción de Formgrader.
"""

import base64
import hashlib
import re
import secrets

from jinja2 import BaseLoader, Environment
from jupyter_server.utils import url_path_join
from tornado.web import OutputTransform

from course.grading.sanitize import SanitizeStudentHTML
from course.jupyter.escaping import escape_values

MARKER = secrets.token_urlsafe(16)  # el mismo largo que cada nonce: Content-Length vale
CDN_MATHJAX = re.compile(r"https://cdnjs\.cloudflare\.com/ajax/libs/mathjax/[^\"']+")
MATHJAX_CONFIG = "?config=TeX-AMS-MML_HTMLorMML-full,Safe"
# jupyter-server-mathjax trae solo las fuentes STIX-Web (como usaba el Notebook clásico).
MATHJAX_FONTS = 'MathJax.Hub.Config({"HTML-CSS": {availableFonts: [], webFont: "STIX-Web"}});\n'
HANDLER = re.compile(r"\son[a-z]+=\"([^\"{}]*)\"", re.IGNORECASE)
# Plantillas de nbconvert que dibujan la página de calificación y no llevan nada del
# cuaderno dentro de un <script> (la base «classic», que sí, queda fuera).
TRUSTED_NBCONVERT = ("formgrade/index.html.j2", "formgrade_macros.html.j2", "mathjax.html.j2")
# Guiones servidos por el curso que otra extensión añade a la página ya dibujada.
TRUSTED_SOURCES = ("curso-es/formgrader_es.js",)
HASHES = "course_csp_hashes"  # las huellas de los manejadores, en los ajustes de Tornado


class NonceLoader(BaseLoader):
    """Lee con otro cargador y marca los ``<script`` de las plantillas de confianza."""

    def __init__(self, loader: BaseLoader, trusted, mathjax_url: str | None, hashes: set):
        self.loader, self.trusted = loader, trusted
        self.mathjax_url, self.hashes = mathjax_url, hashes

    def get_source(self, environment: Environment, template: str):
        source, filename, uptodate = self.loader.get_source(environment, template)
        if not self.trusted(filename or template):
            return source, filename, uptodate
        if self.mathjax_url and CDN_MATHJAX.search(source):
            source = CDN_MATHJAX.sub(self.mathjax_url + MATHJAX_CONFIG, source)
            source = source.replace(
                "init_mathjax = function", MATHJAX_FONTS + "init_mathjax = function"
            )
        source = escape_values(source)  # ningún valor como código (course.jupyter.escaping)
        self.hashes.update(_digest(code) for code in HANDLER.findall(source))
        source = re.sub(r"<script\b(?![^>]*\snonce=)", f'<script nonce="{MARKER}"', source)
        return source, filename, uptodate


def _digest(code: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(code.encode()).digest()).decode() + "'"


def policy(nonce: str, hashes: set, sandbox: bool) -> str:
    """La CSP de una respuesta de Formgrader."""
    handlers = " 'unsafe-hashes' " + " ".join(sorted(hashes)) if hashes else ""
    rules = [
        "default-src 'none'",
        # MathJax 2 evalúa su configuración (medido: sin 'unsafe-eval' no dibuja nada).
        f"script-src 'nonce-{nonce}' 'strict-dynamic' 'unsafe-eval'{handlers}",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "frame-ancestors 'self'",
        "base-uri 'none'",
        "form-action 'self'",
        "object-src 'none'",
    ]
    return "; ".join(rules + (["sandbox"] if sandbox else []))


def _transform(base_url: str, hashes: set) -> type:
    """La transformación de Tornado que pone la CSP y los nonces en Formgrader."""
    prefix = url_path_join(base_url, "formgrader")
    files = re.compile(
        re.escape(url_path_join(prefix, "submissions")) + r"/[^/]+/(?!(next|prev)/?$)[^/]"
    )
    trusted = [
        re.compile(rf'<script(?=[^>]*\ssrc="{re.escape(url_path_join(base_url, src))}")')
        for src in TRUSTED_SOURCES
    ]

    class ContentSecurityPolicy(OutputTransform):
        def __init__(self, request):
            super().__init__(request)
            self.path = request.path

        def transform_first_chunk(self, status_code, headers, chunk, finishing):
            if not self.path.startswith(prefix):
                return status_code, headers, chunk
            nonce = secrets.token_urlsafe(16)
            if "html" in headers.get("Content-Type", "") and b"<script" in chunk:
                text = chunk.decode("utf-8", "replace").replace(MARKER, nonce)
                for pattern in trusted:
                    text = pattern.sub(f'<script nonce="{nonce}"', text)
                chunk = text.encode("utf-8")
                if "Content-Length" in headers:
                    headers["Content-Length"] = str(len(chunk))
            sandbox = bool(files.match(self.path))
            headers["Content-Security-Policy"] = policy(nonce, hashes, sandbox)
            headers["X-Content-Type-Options"] = "nosniff"
            # Cada respuesta lleva su nonce: una página guardada por el navegador (un 304
            # por su ETag) no casaría con la CSP nueva y ninguno de sus guiones correría.
            headers["Cache-Control"] = "no-store"
            headers.pop("Etag", None)
            return status_code, headers, chunk

    return ContentSecurityPolicy


def _is_trusted_nbconvert(filename: str) -> bool:
    return filename.replace("\\", "/").endswith(TRUSTED_NBCONVERT)


def _protect(settings: dict, hashes: set) -> None:
    """Marca las plantillas de Formgrader y limpia el cuaderno en su exportador."""
    mathjax_url = settings.get("mathjax_url") or None
    environment = settings.get("nbgrader_jinja2_env")
    if environment is not None and not isinstance(environment.loader, NonceLoader):
        environment.loader = NonceLoader(environment.loader, lambda _: True, None, hashes)
        environment.cache.clear()
    exporter = settings.get("nbgrader_exporter")
    if exporter is None:
        return
    environment = exporter.environment
    if not isinstance(environment.loader, NonceLoader):
        environment.loader = NonceLoader(
            environment.loader, _is_trusted_nbconvert, mathjax_url, hashes
        )
        if environment.cache is not None:
            environment.cache.clear()
    if not any(isinstance(step, SanitizeStudentHTML) for step in exporter._preprocessors):
        exporter.register_preprocessor(SanitizeStudentHTML, enabled=True)


def _jupyter_server_extension_points():
    return [{"module": "course.jupyter.safety"}]


def _load_jupyter_server_extension(serverapp) -> None:
    web_app = serverapp.web_app
    hashes: set = set()
    web_app.settings[HASHES] = hashes
    web_app.transforms.insert(0, _transform(web_app.settings["base_url"], hashes))


async def _start_jupyter_server_extension(serverapp) -> None:
    """Formgrader crea su exportador y sus plantillas al cargar su extensión, que va
    después de esta: se protegen al arrancar el servidor, con todas ya cargadas.

    No con ``io_loop.add_callback`` al cargar: la extensión de JupyterHub
    (``jupyterhub-singleuser``) hace correr el bucle en su ``initialize``, antes de que
    cargue Formgrader, y la página quedaba sin nonces (ningún guion corría)."""
    settings = serverapp.web_app.settings
    _protect(settings, settings[HASHES])
