"""``nbgrader collect`` sin creer al intercambio: lo que entra en ``submitted/``.

Cada carpeta de ``inbound/`` la escribe un estudiante (``nbgrader submit``), nombre
incluido. ``nbgrader collect`` tal cual

- copia con ``shutil.copytree``, que copia el contenido al que apunta cada enlace: un
  ``01_atencion.ipynb`` que enlaza a un archivo que el estudiante no puede leer pero el
  instructor sí (``source/…ipynb``, la entrega de otro) llegaría a ``submitted/`` como
  un archivo normal;
- toma el estudiante del nombre de la carpeta (``ana+01_atencion+<hora>``) y, si el dueño
  de la carpeta es otro, solo avisa («cheating attempt?»): mallory reemplazaría la
  entrega de ana;
- se detiene para toda la clase si la hora del nombre no es una fecha.

:class:`SafeCollect` (configurada en ``nbgrader_config.py``) copia primero a una carpeta
propia solo los archivos normales de un nombre (``course.grading.files``), rechaza la
carpeta cuyo dueño no es quien dice ser (con ``ExchangeCollect.check_owner``, como nbgrader),
cuyo estudiante no cumple la regla de los nombres (``course.names``) o cuya hora no se
entiende, lo dice en español y deja que nbgrader copie esa carpeta propia
como siempre (``ignore``, tamaños, permisos de ``groupshared``). Una carpeta rechazada no
cuenta al elegir la entrega más nueva de cada estudiante: la que ana crea con el nombre de
beto y una hora posterior no tapa la última entrega de beto, ni la borra de ``submitted/``
con ``--update``.
"""

import datetime
import os
import pwd
import stat
import tempfile
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import parse_utc

from course import names
from course.grading import door_hooks, files
from course.text import printable

REFUSAL = "course_refusal"  # en el registro de una carpeta que no se recoge: el porqué


class SafeCollect(ExchangeCollect):
    """``ExchangeCollect`` que no sigue enlaces ni cree el nombre de la carpeta."""

    def _path_to_record(self, path):
        """El registro de una carpeta; el de una que no se recoge (:meth:`_refusal`) lleva
        su motivo y, como estudiante, su ruta: no compite con las carpetas del estudiante
        que dice ser (nbgrader toma la más nueva de cada uno)."""
        problem = self._refusal(Path(path))
        if problem:
            name = os.path.basename(path)
            return {"username": path, "filename": name, "timestamp": datetime.datetime.min,
                    REFUSAL: problem}  # fmt: skip
        return super()._path_to_record(path)

    def init_src(self):
        """Las carpetas a recoger: la más nueva *propia* de cada estudiante. Las rechazadas
        (la de otro con el nombre de un compañero y una hora posterior, una hora que no es
        fecha…) se nombran y se dejan donde están."""
        super().init_src()
        for record in self.src_records:
            if REFUSAL in record:
                self.log.error(
                    printable(f"Se rechaza la entrega «{record['filename']}»: {record[REFUSAL]}.")
                )
        self.src_records = [record for record in self.src_records if REFUSAL not in record]

    def do_copy(self, src, dest, log=None):
        source = Path(src)
        problem = self._refusal(source)
        if problem:
            self.log.error(printable(f"Se rechaza la entrega «{source.name}»: {problem}."))
            return
        limit = 1000 * self.coursedir.max_dir_size  # el tope de nbgrader, antes de copiar
        with tempfile.TemporaryDirectory(prefix="course-collect-") as staging:
            copy = Path(staging) / source.name
            notes = files.copy_regular_files(source, copy, limit, tuple(self.coursedir.ignore))
            for note in notes + _drop_bad_timestamp(copy):
                self.log.error(printable(f"Entrega «{source.name}»: {note}."))
            copy.mkdir(exist_ok=True)
            super().do_copy(str(copy), dest, log)
        # Recogida como root: submitted/ queda del dueño del curso (puede volver a recoger).
        root = Path(self.coursedir.root).absolute()
        door_hooks.give_to_course_owner(root, [Path(dest).absolute()])

    def _refusal(self, source: Path) -> str:
        """Por qué no se recoge la carpeta entera (vacío si se recoge)."""
        info = os.lstat(source)
        if not stat.S_ISDIR(info.st_mode):
            return files.refusal(info) or "no es una carpeta"
        try:
            record = ExchangeCollect._path_to_record(self, str(source))
        except (ValueError, OverflowError, TypeError):
            return "la hora del nombre no es una fecha"
        bad_name = names.problem(record["username"], "estudiante")
        if bad_name:
            return bad_name
        if self.check_owner:
            try:
                owner = pwd.getpwuid(info.st_uid).pw_name
            except KeyError:
                owner = f"el usuario {info.st_uid}"
            if owner != record["username"]:
                return (
                    f"dice ser de «{record['username']}» pero su dueño es «{owner}»; si todos"
                    " los estudiantes comparten usuario, ExchangeCollect.check_owner = False"
                )
        return ""


def _drop_bad_timestamp(copy: Path) -> list[str]:
    """Quita de la copia un ``timestamp.txt`` que no es una fecha; devuelve el aviso.

    nbgrader lo vuelve a leer en ``submitted/`` (``collect --update``) y, si no lo entiende,
    se detiene para toda la clase.
    """
    stamp = copy / "timestamp.txt"
    if not stamp.is_file():
        return []
    text = stamp.read_bytes()[:1024].decode("utf-8", "replace").strip()
    try:
        parse_utc(text)
        return []
    except (ValueError, OverflowError, TypeError):
        stamp.unlink()
        return ["se omite «timestamp.txt»: no es una fecha; se recoge sin hora de entrega"]
