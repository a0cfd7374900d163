"""El intercambio de nbgrader del aula, con permisos que separan a los estudiantes.

nbgrader 0.9.6 pide una raíz en la que todos escriben y crea lo demás al publicar. Aquí
se crea antes, así (``profe``: el profesor):

=======================================  ======  ======  =================================
carpeta                                  dueño   modo    por qué
=======================================  ======  ======  =================================
``intercambio/``                         root    1777    nbgrader la quiere 777; con el bit
                                                         pegajoso nadie renombra la del curso
``intercambio/transformer-es/``          profe   0755
``…/outbound/``                          profe   0755    lo publicado: lo leen todos
``…/inbound/``                           profe   3733    se escribe sin listar; pegajoso:
                                                         solo el dueño borra o renombra su
                                                         carpeta; setgid: el grupo es profe
``…/feedback/``                          profe   0711    sin listar; cada devolución tiene un
                                                         nombre que solo su estudiante calcula
=======================================  ======  ======  =================================

Cada entrega la deja ``course.student.submit.PrivateSubmit`` (configurada en el entorno
de los estudiantes) en 0750 y sus archivos en 0640: la lee el profesor (por el grupo) y
nadie más; nbgrader la dejaría en 0777 con archivos 0644. Una carpeta falsa con el nombre
de otro estudiante no tapa la de verdad: ``SafeCollect`` solo recoge las carpetas cuyo
dueño es quien dicen ser (``course/grading/collect.py``).
"""

import os
import pwd
from pathlib import Path

from course.aula.state import COURSE_ID, Aula


def layout(aula: Aula, instructor: str) -> dict[Path, tuple[str, int]]:
    """Carpeta -> (dueño, modo), de fuera adentro."""
    course = aula.exchange / COURSE_ID
    return {
        aula.exchange: ("root", 0o1777),
        course: (instructor, 0o755),
        course / "outbound": (instructor, 0o755),
        course / "inbound": (instructor, 0o3733),
        course / "feedback": (instructor, 0o711),
    }


def create(aula: Aula, instructor: str) -> None:
    """Crea (o corrige) las carpetas del intercambio; no toca lo que haya dentro."""
    os.chmod(aula.root, 0o755)
    for folder, (owner, mode) in layout(aula, instructor).items():
        folder.mkdir(exist_ok=True)
        account = pwd.getpwnam(owner)
        os.chown(folder, account.pw_uid, account.pw_gid)
        os.chmod(folder, mode)
