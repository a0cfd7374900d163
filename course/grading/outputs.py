"""Topes de salida por celda: uno solo para el cuaderno calificado y para la devolución.

Un ``print`` en bucle o una figura interactiva enorme no pueden llenar la memoria del
calificador, ``autograded/`` ni la página que recibe el estudiante. Las dos veces que se
recortan las salidas de una celda pasan por :func:`cap`:

- al calificar (``course.grading.execute``), con :data:`MAX_OUTPUT_BYTES` y
  :data:`MAX_IMAGE_BYTES`;
- en la devolución (``course.grading.feedback.SafeFeedback``), con los topes de
  ``nbgrader_config.py`` (por defecto, los mismos) y una marca donde se cortó cada texto.

Texto e imágenes tienen topes distintos: una figura no es una inundación. Se cuentan
bytes UTF-8 (tal como van en la página), y un texto se corta sin partir un carácter ni
una secuencia de color.
"""

import json
import re
from dataclasses import dataclass

MAX_OUTPUT_BYTES = 20_000  # texto guardado por celda; el resto se corta con una nota
MAX_IMAGE_BYTES = 2_000_000  # imágenes (image/*) por celda: las figuras de la devolución
ERROR_VALUE_BYTES = 500  # del mensaje de un error recortado: el que guarda calificacion.json
PARTIAL_ANSI = re.compile(r"\x1b\[[0-9;]*$")  # una secuencia de color cortada a medias


def size(value) -> int:
    """Bytes de un valor de salida: el texto en UTF-8; lo demás, como JSON."""
    text = value if isinstance(value, str) else json.dumps(value)
    return len(text.encode("utf-8"))


def sizes(output) -> tuple[int, int]:
    """Bytes de texto y de imágenes de una salida (o del contenido de un mensaje
    ``display_data``, ``stream`` o ``error`` del núcleo, que tiene la misma forma)."""
    data = output.get("data", {})
    images = sum(size(value) for mime, value in data.items() if mime.startswith("image/"))
    text = (
        size(output.get("text", ""))
        + sum(size(value) for mime, value in data.items() if not mime.startswith("image/"))
        + sum(size(line) for line in output.get("traceback", []))
    )
    return text, images


def head(text: str, limit: int) -> str:
    """Los primeros ``limit`` bytes de ``text`` (sin partir un carácter ni un color)."""
    kept = str(text).encode("utf-8")[:limit].decode("utf-8", errors="ignore")
    return PARTIAL_ANSI.sub("", kept)


@dataclass
class _Budget:
    """Lo que queda de los topes de una celda mientras se recorren sus salidas."""

    text: int
    image: int
    marker: str  # lo que sigue a un texto cortado
    cut: bool = False

    def take_text(self, text: str) -> str:
        """``text`` entero si cabe; si no, lo que cabe y la marca (nada si no cabe nada)."""
        if size(text) <= self.text:
            self.text -= size(text)
            return text
        self.cut, shown = True, head(text, self.text)
        self.text = 0
        return shown + self.marker if shown else ""

    def take(self, mime: str, value):
        """El valor de un formato de ``display_data``: entero, cortado (``text/plain``) o
        ``None`` si no cabe."""
        if mime == "text/plain":
            return self.take_text(value)
        kind = "image" if mime.startswith("image/") else "text"
        if size(value) > getattr(self, kind):
            self.cut = True
            return None
        setattr(self, kind, getattr(self, kind) - size(value))
        return value


def cap(outputs: list, text_bytes: int, image_bytes: int, marker: str = "") -> tuple[list, bool]:
    """Las salidas de una celda dentro de los topes y si se cortó algo.

    Un texto (``stream``, la traza de un error, ``text/plain``) que no cabe se corta y
    lleva ``marker``; de una salida con varios formatos (una figura interactiva con su PNG)
    se quedan los que caben. Un error se queda siempre, aunque sin traza.
    """
    budget = _Budget(text_bytes, image_bytes, marker)
    kept = []
    for output in outputs:
        if output.output_type == "stream":
            output.text = budget.take_text(output.text)
            if output.text:
                kept.append(output)
        elif output.output_type == "error":
            text = "\n".join(output.traceback)  # la página muestra la traza, no evalue
            shown = budget.take_text(text)
            if shown != text:
                output.traceback = [shown]
                output.evalue = head(output.evalue, ERROR_VALUE_BYTES)
            kept.append(output)
        elif "data" in output:
            items = output.data.items()
            data = {mime: shown for mime, value in items if (shown := budget.take(mime, value))}
            if data:
                output.data = data
                kept.append(output)
        else:
            kept.append(output)
    return kept, budget.cut
