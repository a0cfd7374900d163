"""Nada de lo que escribe un estudiante se ejecuta en el navegador del profesor.

Un cuaderno entregado es hostil: una salida ``text/html`` con ``<script>``, una respuesta
en Markdown con ``<img onerror=…>`` o un enlace ``javascript:`` se ejecutarían al abrir la
entrega en Formgrader (que la muestra como HTML, en el mismo origen que su API de notas)
o la devolución. :class:`SanitizeStudentHTML` deja en el cuaderno solo HTML inofensivo:

- salidas: solo los tipos MIME de :data:`ALLOWED_MIME` (texto, imágenes, HTML y
  Markdown limpiados); ``application/javascript``, los widgets y demás salidas activas se
  sustituyen por una nota; un SVG con guiones, manejadores o enlaces externos se quita;
- HTML (salidas y celdas ``raw`` HTML): lista blanca de etiquetas y atributos con
  `nh3 <https://nh3.readthedocs.io>`_ (sin guiones, estilos, formularios, marcos,
  ``<meta>``, ``<base>``, manejadores ``on…`` ni URL que no sean http, https, mailto o
  imágenes ``data:``);
- Markdown (celdas y salidas): se convierte a HTML como lo hace nbconvert; si la lista
  blanca cambia algo, la celda pasa a ser ese HTML limpio (se ve igual, sin lo activo);
  si no, el Markdown se queda tal cual (fórmulas incluidas);
- los metadatos ``widgets`` del cuaderno (nbconvert cargaría sus guiones).

Lo usan el calificador (el cuaderno guardado en ``autograded/`` ya está limpio),
Formgrader al dibujar una entrega y la devolución HTML (``nbgrader_config.py``).
"""

import html
import re

import nh3
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import List

ALLOWED_MIME = {
    "text/plain",
    "text/html",
    "text/markdown",
    "text/latex",
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/svg+xml",
    "application/json",
}
TAGS = (nh3.ALLOWED_TAGS | {"tfoot"}) - {"map", "area"}
ATTRIBUTES = {
    **{tag: set(names) for tag, names in nh3.ALLOWED_ATTRIBUTES.items()},
    "*": {"class", "id", "title", "lang", "dir"},
    "table": nh3.ALLOWED_ATTRIBUTES["table"] | {"border"},
}
IMAGE_DATA = re.compile(r"data:image/(png|jpeg|gif|webp);", re.IGNORECASE)
SVG_ACTIVE = re.compile(
    r"<\s*(script|foreignobject|iframe|object|embed|handler|listener)\b|\bon\w+\s*="
    r"|javascript:|<!entity|\b(href|src)\s*=\s*[\"']?(?![#\"']|data:image/(png|jpeg|gif);)",
    re.IGNORECASE,
)
LINK_REL = ' rel="noopener noreferrer nofollow"'
REMOVED = "[Salida retirada al calificar: {mime} podría ejecutar código en el navegador.]"


def _keep_url(tag: str, attribute: str, value: str) -> str | None:
    """Solo imágenes ``data:`` en ``<img src>``: un ``data:text/html`` abriría una página."""
    if value.strip().lower().startswith("data:"):
        return value if tag == "img" and attribute == "src" and IMAGE_DATA.match(value) else None
    return value


def clean_html(text: str) -> str:
    """``text`` con solo las etiquetas y atributos de la lista blanca (el contenido de
    ``<script>`` y ``<style>`` también se va)."""
    return nh3.clean(
        text,
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes={"http", "https", "mailto", "data"},
        attribute_filter=_keep_url,
        link_rel=LINK_REL.split('"')[1],
    )


def clean_markdown(source: str) -> str:
    """``source`` si su HTML ya es inofensivo; si no, su HTML limpio."""
    rendered = markdown2html_mistune(source)
    cleaned = clean_html(rendered)
    if not _changed(rendered, cleaned):
        return source
    return f"<div>\n{cleaned.strip()}\n</div>"


def svg_is_safe(svg: str) -> bool:
    """Un SVG sin guiones, manejadores, entidades ni enlaces fuera de sí mismo."""
    return SVG_ACTIVE.search(svg) is None


def _changed(original: str, cleaned: str) -> bool:
    return html.unescape(cleaned.replace(LINK_REL, "")) != html.unescape(original)


def clean_output(output):
    """La salida sin nada activo. Un HTML que pierde algo al limpiarlo (una figura
    interactiva de plotly, por ejemplo) cede el sitio a su imagen, si la salida trae una."""
    if "data" not in output:
        return output
    data, removed = {}, []
    has_image = any(mime.startswith("image/") for mime in output.data)
    for mime, value in output.data.items():
        text = value if isinstance(value, str) else "".join(value)
        if mime not in ALLOWED_MIME or (mime == "image/svg+xml" and not svg_is_safe(text)):
            removed.append(mime)
        elif mime == "text/html":
            cleaned = clean_html(text)
            if cleaned.strip() and not (has_image and _changed(text, cleaned)):
                data[mime] = cleaned
        elif mime == "text/markdown":
            data[mime] = clean_markdown(text)
        else:
            data[mime] = value
    if removed and "text/plain" not in data:
        data["text/plain"] = REMOVED.format(mime=", ".join(sorted(removed)))
    output.data = data
    output.get("metadata", {}).pop("text/html", None)  # sin iframes «isolated»
    return output


class SanitizeStudentHTML(NbGraderPreprocessor):
    """Quita del cuaderno todo HTML, Markdown o salida que pueda ejecutar código."""

    # Como en SafeFeedback: HTMLExporter fija ``display_data_priority`` en su configuración.
    display_data_priority = List(
        NbGraderPreprocessor.class_traits()["display_data_priority"].default()
    ).tag(config=True)

    def preprocess(self, nb, resources):
        nb.metadata.pop("widgets", None)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown":
            cell.source = clean_markdown(cell.source)
        elif cell.cell_type == "raw":
            cell.source = clean_html(cell.source)
        elif cell.cell_type == "code":
            cell.outputs = [clean_output(output) for output in cell.outputs]
        return cell, resources
