"""Ningún valor llega como código a una página de Formgrader.

Las plantillas de Formgrader (nbgrader 0.9.6) escriben los valores tal cual, sin escapar
(su entorno de Jinja no tiene ``autoescape``), y varios van dentro de un ``<script>`` que
la Content-Security-Policy del curso (``course.jupyter.safety``) da por bueno:
``var student_id = "{{ student_id }}";``. Un identificador como ``x";fetch(…);"`` cerraría
la cadena y su código correría con el nonce de la página, con acceso a la API de notas.

:func:`escape_values` reescribe cada ``{{ nombre }}`` de una plantilla al leerla:

- dentro de ``<script>``, como JSON: ``{{ (nombre | string | tojson)[1:-1] }}`` si va entre
  comillas (el texto de la cadena, con ``"``, ``<`` y ``'`` escapados) y
  ``{{ nombre | tojson }}`` si no;
- en el HTML (texto y atributos), con ``| e``;
- dentro de ``<style>`` no se toca (el CSS de nbconvert, que no viene de fuera).

Solo los nombres simples (``student_id``, ``resources.first_name``): las llamadas a
macros (``{{ header(resources) }}``) y los filtros que producen HTML
(``{{ cell.source | markdown2html }}``) quedan como están. La regla de los nombres
(``course.names``) impide que entren identificadores así; esto protege también un
``gradebook.db`` de antes de la regla.
"""

import re

BLOCK = re.compile(r"(<(script|style)\b[^>]*>)(.*?)(</\2\s*>)", re.S | re.I)
VALUE = re.compile(r"\{\{(-?)\s*([A-Za-z_][\w.]*)\s*(-?)\}\}")


def escape_values(source: str) -> str:
    """La plantilla ``source`` con cada valor escapado según dónde va."""
    parts, last = [], 0
    for block in BLOCK.finditer(source):
        parts.append(_in_html(source[last : block.start()]))
        code = _in_script(block[3]) if block[2].lower() == "script" else block[3]
        parts.append(_in_html(block[1]) + code + block[4])
        last = block.end()
    parts.append(_in_html(source[last:]))
    return "".join(parts)


def _in_html(text: str) -> str:
    return VALUE.sub(lambda m: f"{{{{{m[1]} {m[2]} | e {m[3]}}}}}", text)


def _in_script(code: str) -> str:
    def escaped(match: re.Match) -> str:
        line = code[code.rfind("\n", 0, match.start()) + 1 : match.start()]
        value = f"({match[2]} | string | tojson)[1:-1]" if _quoted(line) else f"{match[2]} | tojson"
        return f"{{{{{match[1]} {value} {match[3]}}}}}"

    return VALUE.sub(escaped, code)


def _quoted(before: str) -> bool:
    """¿Queda abierta una cadena de JavaScript (``"`` o ``'``) al final de ``before``?"""
    quote, escaped = "", False
    for char in before:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif quote and char == quote:
            quote = ""
        elif not quote and char in "\"'":
            quote = char
    return bool(quote)
