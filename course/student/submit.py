"""``nbgrader submit`` que deja la entrega legible solo por su dueño y el profesor.

nbgrader 0.9.6 deja cada carpeta de ``inbound/`` en 0777 y sus archivos en 0644 («para que
el profesor pueda borrarla»): quien conozca su nombre la lee, la vacía o cambia sus
archivos. :class:`PrivateSubmit` (configurada por ``python -m course aula`` en el entorno
de los estudiantes) la deja en 0750 y los archivos en 0640. El grupo es el del profesor,
porque ``inbound/`` tiene setgid: él la recoge; los demás estudiantes no entran.
"""

import os
from pathlib import Path

from nbgrader.exchange.default.submit import ExchangeSubmit

FOLDER_MODE = 0o750
FILE_MODE = 0o640


class PrivateSubmit(ExchangeSubmit):
    def copy_files(self):
        super().copy_files()
        private(Path(self.inbound_path) / self.assignment_filename)


def private(folder: Path) -> None:
    """Deja ``folder`` y lo que contiene para su dueño y su grupo (sin escritura)."""
    for path in sorted(folder.rglob("*"), reverse=True):
        if not path.is_symlink():
            os.chmod(path, FOLDER_MODE if path.is_dir() else FILE_MODE)
    os.chmod(folder, FOLDER_MODE)
