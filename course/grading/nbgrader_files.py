"""Las copias que hace nbgrader de los archivos de una entrega: solo archivos normales.

``nbgrader autograde`` (la orden y el botón de Formgrader) copia los demás archivos de
``submitted/<estudiante>/<lab>/`` a ``autograded/``, y ``nbgrader generate_feedback`` los
de ``autograded/`` a ``feedback/``, con ``shutil.copy``: sigue los enlaces simbólicos y
lee FIFOs y dispositivos. Un enlace al cuaderno fuente del instructor entre los archivos
de una entrega ponía la solución y las pruebas ocultas en la carpeta de devolución del
estudiante; uno a ``/dev/zero`` llenaba el disco.

:func:`install` (lo llama ``nbgrader_config.py``) hace que esos dos convertidores copien
con :func:`course.grading.files.copy_regular_files`: ni enlaces simbólicos ni duros, ni
FIFOs ni dispositivos, con tope de tamaño; cada cosa omitida es un aviso en el registro
de nbgrader que nombra al estudiante. Los convertidores que leen del instructor
(``generate_assignment``) copian como siempre.
"""

from pathlib import Path

from nbgrader.converters import Autograde, GenerateFeedback
from nbgrader.converters.base import BaseConverter

from course.grading.files import copy_regular_files
from course.text import printable

FROM_STUDENTS = (Autograde, GenerateFeedback)  # convertidores que leen lo que entregó alguien
_NBGRADER_COPY = BaseConverter.init_assignment


def init_assignment(self: BaseConverter, assignment_id: str, student_id: str) -> None:
    """Copia los archivos de la entrega que no son cuadernos, como nbgrader, pero solo los
    normales; cada omisión, un aviso con el estudiante y el laboratorio."""
    if not isinstance(self, FROM_STUDENTS):
        _NBGRADER_COPY(self, assignment_id, student_id)
        return
    source = Path(self._format_source(assignment_id, student_id))
    target = Path(self._format_dest(assignment_id, student_id))
    if not source.exists() and not source.is_symlink():
        return
    ignore = (*self.coursedir.ignore, "*.ipynb")
    for note in copy_regular_files(source, target, ignore=ignore):
        self.log.warning(printable(f"{student_id} · {assignment_id}: {note}"))


def install() -> None:
    """Desde ahora, :func:`init_assignment` en lugar de la copia de nbgrader."""
    BaseConverter.init_assignment = init_assignment
