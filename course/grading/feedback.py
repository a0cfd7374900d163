"""Lo que el estudiante ve de su cuaderno calificado: un solo filtro para toda devolución.

Las tres formas de escribir ``feedback/<estudiante>/<lab>/<lab>.html`` pasan el cuaderno
calificado por :class:`SafeFeedback` antes de convertirlo en HTML: ``nbgrader
generate_feedback`` y el botón *Generate Feedback* de Formgrader (los dos usan el
convertidor ``GenerateFeedback`` con ``nbgrader_config.py``, que lo añade a sus
``preprocessors``) y ``python -m course feedback`` (que lo crea con la misma
configuración).

Qué quita:

- en cada celda, las líneas entre ``### BEGIN HIDDEN TESTS`` y ``### END HIDDEN TESTS``
  (marcadores incluidos), sustituidas por :data:`REMOVED`;
- todas las salidas de las celdas de pruebas ocultas (ver :func:`is_hidden_test`): ni la
  salida estándar ni el mensaje de error, que puede citar valores de la referencia. Sus
  puntos los muestra la página; si la prueba falló, una nota en español lo dice con lo
  único que el calificador dejó para mostrar (:mod:`course.grading.diagnosis`): el nombre
  del error típico y la pista, sin valores;
- de las demás celdas de código, lo que pase de ``max_text_bytes`` bytes de texto
  (salidas de texto, errores, HTML…) o de ``max_image_bytes`` bytes de imágenes (tal como
  van incrustadas en la página), con una nota en español donde se cortó;
- el HTML activo que hubiera escrito el estudiante (:mod:`course.grading.sanitize`).

La página que sale de :class:`FeedbackExporter` no lleva ningún guion: las fórmulas se
convierten a MathML al exportar (el navegador las dibuja sin conexión, sin MathJax) y una
``Content-Security-Policy`` en ``<meta>`` no deja cargar nada de fuera ni ejecutar nada.
"""

import copy
import json
import re
from pathlib import Path

import lxml.html
from latex2mathml.converter import convert as latex_to_mathml
from nbconvert.exporters import HTMLExporter
from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer, List

from course import notebooks
from course.grading.diagnosis import KEY
from course.grading.outputs import MAX_IMAGE_BYTES, MAX_OUTPUT_BYTES, cap
from course.grading.sanitize import SanitizeStudentHTML

BEGIN, END = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"  # los delimitadores de nbgrader
REMOVED = "# Pruebas ocultas: su código y su salida no se muestran; sus puntos, sí."
TRUNCATED = "\n[… salida recortada en la devolución …]"
# En ``resources``: lo que la página de devolución (``course.grading.feedback_page``) necesita
# saber del cuaderno antes de que SafeFeedback quite marcadores y diagnósticos.
FACTS = "course_feedback"
FAILED = (
    "Prueba oculta no superada. Su mensaje no se muestra (puede citar valores de la referencia)"
)


def is_hidden_test(cell: NotebookNode) -> bool:
    """Una celda de pruebas ocultas: su grade id acaba en ``_oculta`` o su código lleva los
    marcadores (en el cuaderno calificado, nbgrader ha repuesto el código del libro de
    notas en cada celda de prueba, marcadores incluidos)."""
    hidden = notebooks.is_hidden_test(notebooks.grade_id(cell) or "")
    return hidden or BEGIN in cell.source or END in cell.source


def strip_hidden_source(source: str) -> str:
    """``source`` con cada región de pruebas ocultas (hasta el final si no se cierra)
    sustituida por :data:`REMOVED`; una línea con ``END`` suelto también se quita."""
    lines, inside = [], False
    for line in source.splitlines():
        if BEGIN in line:
            if not inside:
                lines.append(REMOVED)
            inside = True
        elif END in line:
            inside = False
        elif not inside:
            lines.append(line)
    return "\n".join(lines)


def diagnosed(cell: NotebookNode) -> list[str] | None:
    """Las frases que el calificador dejó en una prueba que falló; ``None`` si no falló."""
    found = cell.metadata.get(KEY)
    if not isinstance(found, list):
        return None
    return [sentence for sentence in found if isinstance(sentence, str)]


def hidden_note(cell: NotebookNode) -> list:
    """La salida de una prueba oculta en la devolución: nada si pasó; si falló, la nota."""
    found = diagnosed(cell)
    if found is None:
        return []
    lines = [FAILED + (", pero el calificador reconoce esto:" if found else "."), *found]
    return [new_output("stream", name="stderr", text="\n".join(lines) + "\n")]


def hidden_ids(notebook: NotebookNode) -> set[str]:
    """Grade ids de las celdas que :class:`SafeFeedback` trata como pruebas ocultas."""
    found = {notebooks.grade_id(cell) for cell in notebook.cells if is_hidden_test(cell)}
    return found - {None}


def diagnoses(notebook: NotebookNode) -> dict[str, list[str]]:
    """Grade id -> frases que el calificador dejó para mostrar de cada prueba que falló."""
    found = {notebooks.grade_id(cell): diagnosed(cell) for cell in notebook.cells}
    return {grade_id: said for grade_id, said in found.items() if grade_id and said}


class SafeFeedback(NbGraderPreprocessor):
    """Quita de la devolución las pruebas ocultas, el HTML activo y recorta las salidas."""

    # Como en GetGrades: HTMLExporter fija ``NbConvertBase.display_data_priority`` y, si
    # aquí no fuera configurable, traitlets avisaría en cada devolución.
    display_data_priority = List(
        NbGraderPreprocessor.class_traits()["display_data_priority"].default()
    ).tag(config=True)
    max_text_bytes = Integer(
        MAX_OUTPUT_BYTES, min=0, help="Bytes de texto de las salidas que se muestran por celda."
    ).tag(config=True)
    max_image_bytes = Integer(
        MAX_IMAGE_BYTES, min=0, help="Bytes de imágenes (tal como van en la página) por celda."
    ).tag(config=True)

    def preprocess(self, nb, resources):
        resources[FACTS] = {"hidden": hidden_ids(nb), "named": diagnoses(nb)}  # antes de quitar
        nb, resources = SanitizeStudentHTML(parent=self).preprocess(nb, resources)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        hidden = is_hidden_test(cell)  # antes de quitar los marcadores
        if BEGIN in cell.source or END in cell.source:
            cell.source = strip_hidden_source(cell.source)
        if cell.cell_type == "code":
            cell.outputs = hidden_note(cell) if hidden else self._capped(cell.outputs)
        cell.metadata.pop(KEY, None)
        return cell, resources

    def _capped(self, outputs: list) -> list:
        limits = (self.max_text_bytes, self.max_image_bytes)
        kept, cut = cap(outputs, *limits, marker=TRUNCATED)
        if cut:
            text, images = (f"{n:,}".replace(",", " ") for n in limits)
            note = (
                f"[Devolución: salidas de esta celda recortadas; se muestran como máximo {text}"
                f" bytes de texto y {images} bytes de imágenes por celda.]\n"
            )
            kept.append(new_output("stream", name="stdout", text=note))
        return kept


CSP = (
    "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; font-src data:;"
    " base-uri 'none'; form-action 'none'"
)
MATH = re.compile(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]|\$(.+?)\$|\\\((.+?)\\\)", re.DOTALL)
NO_MATH = {"pre", "code", "script", "style", "textarea", "math"}


def _mathml(latex: str, display: bool) -> lxml.html.HtmlElement | None:
    """La fórmula en MathML, o ``None`` si latex2mathml no la entiende (queda el LaTeX)."""
    try:
        markup = latex_to_mathml(latex.strip(), display="block" if display else "inline")
        return lxml.html.fragment_fromstring(markup)
    except Exception:  # noqa: BLE001 (cualquier fallo del conversor deja el texto como estaba)
        return None


def _split_math(text: str) -> list:
    """``text`` en trozos: cadenas y elementos ``<math>``."""
    parts, start = [], 0
    for match in MATH.finditer(text):
        display = match[1] is not None or match[2] is not None
        latex = next(group for group in match.groups() if group is not None)
        element = _mathml(latex, display)
        if element is not None:
            parts += [text[start : match.start()], element]
            start = match.end()
    return [*parts, text[start:]]


def _has_math(text: str | None) -> bool:
    return bool(text) and ("$" in text or "\\" in text)


def _typeset(element) -> None:
    """Cambia las fórmulas del texto de ``element`` (y de sus hijos) por MathML."""
    if element.tag in NO_MATH:
        return
    for child in list(element):
        _typeset(child)
        if _has_math(child.tail):
            parts = _split_math(child.tail)
            child.tail = parts[0]
            _insert_after(child, parts[1:])
    if _has_math(element.text):
        parts = _split_math(element.text)
        element.text = parts[0]
        _insert_at(element, 0, parts[1:])


def _insert_after(anchor, parts: list) -> None:
    for index in range(0, len(parts), 2):
        parts[index].tail = parts[index + 1]
        anchor.addnext(parts[index])
        anchor = parts[index]


def _insert_at(parent, position: int, parts: list) -> None:
    for index in range(0, len(parts), 2):
        parts[index].tail = parts[index + 1]
        parent.insert(position + index // 2, parts[index])


def offline_page(page: str) -> str:
    """La página de devolución sin guiones ni manejadores, con su CSP y fórmulas MathML."""
    document = lxml.html.document_fromstring(page)
    for script in document.xpath("//script"):
        script.drop_tree()
    for element in document.iter():
        for name in [name for name in element.attrib if name.lower().startswith("on")]:
            del element.attrib[name]
    meta = lxml.html.Element("meta", {"http-equiv": "Content-Security-Policy", "content": CSP})
    document.head.insert(0, meta)
    _typeset(document.body)
    return "<!DOCTYPE html>\n" + lxml.html.tostring(document, encoding="unicode")


class FeedbackExporter(HTMLExporter):
    """El ``HTMLExporter`` de ``nbgrader generate_feedback`` (y de «Generar devolución» en
    Formgrader): la página de ``python -m course feedback``
    (``course.grading.feedback_page``), con los comentarios de quien calificó a mano.

    Necesita el ``calificacion.json`` que deja la calificación sellada junto al cuaderno
    calificado; sin él (un cuaderno calificado de otro modo), la página de nbgrader pasada
    por :func:`offline_page`."""

    def from_notebook_node(self, nb, resources=None, **kwargs):
        from course.grading import feedback_page
        from course.grading.results import RESULT_NAME, Result

        folder = (resources or {}).get("metadata", {}).get("path") or ""
        graded = Path(folder) / RESULT_NAME
        if not folder or not graded.is_file():
            page, resources = super().from_notebook_node(nb, resources, **kwargs)
            return offline_page(page), resources
        # Los pasos de GenerateFeedback (SafeFeedback, GetGrades…), como en nbconvert.
        nb, resources = self._preprocess(copy.deepcopy(nb), self._init_resources(resources))
        if FACTS not in resources:  # una configuración sin SafeFeedback: se pasa igual
            nb, resources = SafeFeedback(config=self.config).preprocess(nb, resources)
        result = Result(**json.loads(graded.read_text(encoding="utf-8")))
        info = resources.get("nbgrader", {})
        graders = feedback_page.from_gradebook(info.get("db_url"), result.student, result.lab)
        facts = resources[FACTS]
        page = feedback_page.render(
            feedback_page.with_graders(result, graders),
            nb, facts["hidden"], facts["named"], graders.comments,
        )  # fmt: skip
        resources["output_extension"] = self.file_extension
        return page, resources
