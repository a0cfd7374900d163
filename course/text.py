"""Mensajes para personas: recortados por palabras, sin las rutas del servidor y con los
números escritos a la española."""

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


# Lo que un terminal interpreta en lugar de mostrar: controles C0 y C1 (ESC empieza las
# secuencias que borran la pantalla o pintan), DEL, los que invierten o esconden texto
# (bidi, anchura cero) y los sustitutos sueltos de un nombre de archivo que no es UTF-8.
UNPRINTABLE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\ud800-\udfff]"
)


def printable(text: object, multiline: bool = False) -> str:
    """``text`` para imprimirlo en un terminal sin que lo controle: ``\\x1b`` en lugar de ESC.

    Nombres de estudiantes, entradas de un zip y mensajes vienen de fuera (un zip o un
    cuaderno hostil); impresos tal cual, una secuencia de escape borra la pantalla o dibuja
    una línea falsa. Con ``multiline`` se conservan los saltos de línea (un informe).
    """

    def escape(match: re.Match) -> str:
        if multiline and match[0] == "\n":
            return "\n"
        return match[0].encode("unicode_escape", "backslashreplace").decode("ascii")

    return UNPRINTABLE.sub(escape, str(text))


def number(value: float, decimals: int = 0) -> str:
    """``value`` con la coma decimal y, desde cinco cifras, los miles separados por un
    espacio (la norma de la RAE): ``number(6713)`` → ``6713``, ``number(2152480)`` →
    ``2 152 480``, ``number(9.94, 1)`` → ``9,9``.

    Un solo formato para todo lo que el curso imprime o escribe para una persona; los
    archivos para máquinas (JSON, CSV) guardan el número tal cual.
    """
    value = round(value, decimals) + 0.0  # + 0.0: «-0,0» queda «0,0»
    grouped = f"{value:,.{decimals}f}"  # 2,152,480.50 (formato inglés)
    if len(grouped.lstrip("-").split(".")[0]) <= 5:  # «6,713»: cuatro cifras, sin espacio
        grouped = grouped.replace(",", "")
    return grouped.replace(",", " ").replace(".", ",")
