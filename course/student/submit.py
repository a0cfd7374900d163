"""``nbgrader submit`` que deja la entrega legible solo por su dueño y el profesor.

nbgrader 0.9.6 deja cada carpeta de ``inbound/`` en 0777 y sus archivos en 0644 («para que
el profesor pueda borrarla»): quien conozca su nombre la lee, la vacía o cambia sus
archivos. :class:`PrivateSubmit` (configurada por ``python -m course aula`` en el entorno
de los estudiantes) la deja en 0750 y los archivos en 0640. El grupo es el del profesor,
porque ``inbound/`` tiene setgid: él la recoge; los demás estudiantes no entran.

Para eso la carpeta de la entrega debe conservar el setgid hasta que nbgrader escribe en
ella ``timestamp.txt`` y ``submission_secret.txt``. La copia de nbgrader
(``shutil.copytree``) le pone el modo de la carpeta del estudiante y se lo quita: esos dos
archivos quedaban del grupo del estudiante, el profesor no podía leerlos, ``collect`` los
omitía y «Publicar devolución» se detenía sin ``timestamp.txt``.
"""

import os
import tempfile
from pathlib import Path

from nbgrader.exchange.default.submit import ExchangeSubmit

FOLDER_MODE = 0o750
FILE_MODE = 0o640


class PrivateSubmit(ExchangeSubmit):
    def do_copy(self, src, dest, log=None):
        """La copia de nbgrader, dentro de una carpeta creada aquí (con el grupo y el setgid
        de ``inbound/``) y sin cambiar el modo de esta."""
        if Path(dest).parent != Path(self.inbound_path):
            super().do_copy(src, dest, log)
            return
        os.mkdir(dest)
        holder = Path(tempfile.mkdtemp(prefix=".copiando-", dir=dest))
        super().do_copy(src, str(holder / "entrega"), log)
        for entry in (holder / "entrega").iterdir():
            entry.rename(Path(dest) / entry.name)
        (holder / "entrega").rmdir()
        holder.rmdir()

    def copy_files(self):
        super().copy_files()
        private(Path(self.inbound_path) / self.assignment_filename)


def private(folder: Path) -> None:
    """Deja ``folder`` y lo que contiene para su dueño y su grupo (sin escritura)."""
    for path in sorted(folder.rglob("*"), reverse=True):
        if not path.is_symlink():
            os.chmod(path, FOLDER_MODE if path.is_dir() else FILE_MODE)
    os.chmod(folder, FOLDER_MODE)
