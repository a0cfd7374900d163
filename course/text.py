"""Mensajes para personas: recortados por palabras y sin las rutas del servidor."""

import re

# una ruta absoluta de dos o más partes (/tmp/curso/ana/01.ipynb), no «i/n» ni «(B, T)/2»
PATH = re.compile(r"(?<![\w.)\]/~])/(?:[^\s/'\"«»:;,()]+/)+([^\s/'\"«»:;,()]*)")


def shorten(text: str, limit: int = 300) -> str:
    """``text`` con ``limit`` caracteres como mucho, cortado entre palabras y con «…»."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:.") + "…"


def hide_paths(text: str) -> str:
    """Cada ruta absoluta queda en su último nombre: ``/tmp/x/ana/01.ipynb`` → ``01.ipynb``."""
    return PATH.sub(lambda match: match[1] or "…", text)


def student_message(text: str | None, limit: int = 300) -> str:
    """La primera línea con texto, sin rutas del servidor y recortada por palabras."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return shorten(hide_paths(lines[0]), limit) if lines else ""
