"""Curso práctico del Transformer: referencia, ejemplos, comprobaciones y herramientas."""

import sys

# jsonschema (por nbformat) carga rfc3987_syntax si está instalado: una gramática de IRI
# que tarda 1,5-4 s en importarse y que el esquema de los cuadernos no usa. ``None`` en
# ``sys.modules`` hace que su importación falle, y jsonschema sigue sin ese formato.
sys.modules.setdefault("rfc3987_syntax", None)
