"""``python -m course empezar LAB``: tu copia de trabajo de un laboratorio.

Copia ``release/LAB/`` a ``trabajo/LAB/``. Se trabaja en la copia: ``release/`` es lo que
genera ``python -m course build`` y no se toca (JupyterLab guarda solo y lo cambiaría).
Una copia que ya existe no se sobrescribe nunca: ahí están tus respuestas.
"""

import os
import shutil
from pathlib import Path

from course import labs
from course.labs import CourseError

WORK = "trabajo"
HELP = "copia un laboratorio a trabajo/ para hacerlo ahí"


def add_arguments(parser) -> None:
    parser.add_argument("lab", help="el laboratorio (p. ej. 01_atencion)")


def main(args) -> int:
    return run(args.lab)


def run(lab_id: str, root: Path = labs.REPO) -> int:
    lab = labs.get(lab_id)
    if not lab.release.exists():
        raise CourseError(
            f"No existe release/{lab.id}: genera antes la versión de estudiante con"
            f" «python -m course build {lab.id}»."
        )
    target = root / WORK / lab.id
    notebook = _shown(target / lab.release.name)
    if target.exists():
        raise CourseError(
            f"Ya tienes una copia de trabajo de {lab.id}: {notebook}. Sigue con ella"
            f" («jupyter lab {notebook}»); no la sobrescribo. Para empezar de cero, cámbiale"
            " el nombre o bórrala y vuelve a ejecutar esta orden."
        )
    shutil.copytree(lab.release.parent, target, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    print(f"Tu copia de trabajo: {notebook}")
    print(f"Ábrela con:          jupyter lab {notebook}")
    print(f"Compruébala con:     python -m course check {notebook}")
    return 0


def _shown(path: Path) -> str:
    """``path`` relativa a la carpeta actual si está dentro; si no, completa."""
    relative = os.path.relpath(path)
    return path.as_posix() if relative.startswith("..") else Path(relative).as_posix()
