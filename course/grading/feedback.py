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
  puntos los muestra la página;
- de las demás celdas de código, lo que pase de ``max_text_bytes`` bytes de texto
  (salidas de texto, errores, HTML…) o de ``max_image_bytes`` bytes de imágenes (tal como
  van incrustadas en la página), con una nota en español donde se cortó.
"""

import json
import re

from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer, List

BEGIN, END = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"  # los delimitadores de nbgrader
HIDDEN_SUFFIX = "_oculta"  # grade id de las celdas de pruebas ocultas del curso
REMOVED = "# Pruebas ocultas: su código y su salida no se muestran; sus puntos, sí."
TRUNCATED = "\n[… salida recortada en la devolución …]"
PARTIAL_ANSI = re.compile(r"\x1b\[[0-9;]*$")  # una secuencia de color cortada a medias


def is_hidden_test(cell: NotebookNode) -> bool:
    """Una celda de pruebas ocultas: su grade id acaba en ``_oculta`` o su código lleva los
    marcadores (en el cuaderno calificado, nbgrader ha repuesto el código del libro de
    notas en cada celda de prueba, marcadores incluidos)."""
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
    return grade_id.endswith(HIDDEN_SUFFIX) or BEGIN in cell.source or END in cell.source


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


def _size(value) -> int:
    text = value if isinstance(value, str) else json.dumps(value)
    return len(text.encode("utf-8"))


def _cut(text: str, limit: int) -> str:
    """Los primeros ``limit`` bytes de ``text`` (sin partir un carácter ni un color)."""
    head = text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")
    return PARTIAL_ANSI.sub("", head)


class SafeFeedback(NbGraderPreprocessor):
    """Quita de la devolución las pruebas ocultas y recorta las salidas grandes."""

    # Como en GetGrades: HTMLExporter fija ``NbConvertBase.display_data_priority`` y, si
    # aquí no fuera configurable, traitlets avisaría en cada devolución.
    display_data_priority = List(
        NbGraderPreprocessor.class_traits()["display_data_priority"].default()
    ).tag(config=True)
    max_text_bytes = Integer(
        20_000, min=0, help="Bytes de texto de las salidas que se muestran por celda."
    ).tag(config=True)
    max_image_bytes = Integer(
        2_000_000, min=0, help="Bytes de imágenes (tal como van en la página) por celda."
    ).tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        hidden = is_hidden_test(cell)  # antes de quitar los marcadores
        if BEGIN in cell.source or END in cell.source:
            cell.source = strip_hidden_source(cell.source)
        if cell.cell_type == "code":
            cell.outputs = [] if hidden else self._capped(cell.outputs)
        return cell, resources

    def _capped(self, outputs: list) -> list:
        budget = {"text": self.max_text_bytes, "image": self.max_image_bytes}
        kept, cut = [], False

        def take(text: str) -> str:
            nonlocal cut
            size = _size(text)
            if size <= budget["text"]:
                budget["text"] -= size
                return text
            cut, head = True, _cut(text, budget["text"])
            budget["text"] = 0
            return head + TRUNCATED if head else ""

        for output in outputs:
            if output.output_type == "stream":
                output.text = take(output.text)
                if output.text:
                    kept.append(output)
            elif output.output_type == "error":
                text = "\n".join(output.traceback)  # la página muestra la traza, no evalue
                shown = take(text)
                if shown != text:
                    output.traceback = [shown]
                kept.append(output)
            elif "data" in output:
                data = {}
                for mime, value in output.data.items():
                    kind = "image" if mime.startswith("image/") else "text"
                    if mime == "text/plain":
                        value = take(value)
                    elif _size(value) <= budget[kind]:
                        budget[kind] -= _size(value)
                    else:
                        cut, value = True, None
                    if value:
                        data[mime] = value
                if data:
                    output.data = data
                    kept.append(output)
            else:
                kept.append(output)
        if cut:
            limits = (self.max_text_bytes, self.max_image_bytes)
            text, images = (f"{n:,}".replace(",", " ") for n in limits)
            note = (
                f"[Devolución: salidas de esta celda recortadas; se muestran como máximo {text}"
                f" bytes de texto y {images} bytes de imágenes por celda.]\n"
            )
            kept.append(new_output("stream", name="stdout", text=note))
        return kept
