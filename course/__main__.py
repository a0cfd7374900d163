"""``python -m course``: la línea de órdenes del curso (``course.cli``)."""

import os
import sys
from pathlib import Path


def with_own_bin(path: str) -> str:
    """``path`` con la carpeta ``bin`` de este Python delante si no estaba.

    nbgrader llama a ``alembic`` y a ``jupyter`` por su nombre: con el Python del entorno
    sin activarlo (``.venv/bin/python -m course check …``) no los encontraría.
    """
    own = str(Path(sys.executable).parent)
    parts = path.split(os.pathsep) if path else []
    return path if own in parts else os.pathsep.join([own, *parts])


if __name__ == "__main__":
    os.environ["PATH"] = with_own_bin(os.environ.get("PATH", ""))
    from course.cli import main  # después de fijar el PATH que heredan sus procesos

    sys.exit(main())
