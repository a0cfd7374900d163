"""Carpetas del curso fuera del repositorio (sin dependencias pesadas: se importa rápido)."""

import os
from pathlib import Path


def cache_root() -> Path:
    """Carpeta de caché del curso, fuera del repositorio (respeta ``XDG_CACHE_HOME``)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "transformer-es"
