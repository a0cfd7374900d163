"""Qué líneas de los cuadernos fuente son secretas (criterio de leakscan.py), para las pruebas de fugas."""

import re
from collections.abc import Iterable

REGION = re.compile(r"### (BEGIN|END) (SOLUTION|HIDDEN TESTS)")


def secret_lines(sources: Iterable[str]) -> set[str]:
    """Líneas (≥ 16 caracteres, no comentarios) que solo aparecen dentro de regiones de
    solución o de pruebas ocultas de las celdas ``sources``."""
    inside, outside = set(), set()
    for source in sources:
        secret = False
        for raw in source.splitlines():
            line = raw.strip()
            if REGION.search(line):
                secret = "BEGIN" in line
                continue
            (inside if secret else outside).add(line)
    return {line for line in inside - outside if len(line) >= 16 and not line.startswith("#")}
