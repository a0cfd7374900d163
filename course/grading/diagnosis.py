"""Lo que una prueba oculta que falla puede decir al estudiante: el error y la pista.

El mensaje de una prueba oculta no se enseña: cita valores calculados con la referencia
(formas, tensores esperados) y, si el error lo lanzó el código del estudiante, dice lo
que el estudiante quiso. De él solo sale, ya en el calificador (:func:`record`):

- el nombre del error típico, cuando lo puso una comprobación de ``course.student.checks``
  (el atributo ``diagnosis`` del ``AssertionError`` que lanza el calificador, nunca un
  texto que llegue del núcleo) y es una frase del curso: un mensaje del catálogo o de sus
  huellas, o una relación de :data:`course.student.checks.RELATIONS`;
- la «Pista:» de ``course.student.hints`` para la excepción, con cada trozo copiado del
  mensaje original (formas, nombres, números) cambiado por :data:`MASK`.

Se guarda como lista de frases en los metadatos de la celda (:data:`KEY`), que el
calificador borra de toda celda antes de ejecutarla: una entrega no puede traerlo escrito.
:class:`course.grading.feedback.SafeFeedback` lo muestra en lugar de la salida oculta.
"""

import functools
import re

from nbformat import NotebookNode

from course import labs
from course.student import hints

KEY = "course_diagnosis"  # metadatos de celda: frases que la devolución puede mostrar
MASK = "…"
# Valores de un grupo de las reglas de ``hints`` que son vocabulario fijo, no datos: el
# tipo de un valor decide qué frase toca (``None`` sin ``return``, una tupla…).
FIXED = frozenset({"NoneType", "tuple", "Tensor", "float", "int", "torch"})


def forget(cell: NotebookNode) -> None:
    """Quita el diagnóstico de ``cell``: solo vale el que escribe esta calificación."""
    cell.metadata.pop(KEY, None)


def record(cell: NotebookNode, error: BaseException) -> None:
    """Anota en ``cell`` (una prueba que falló por ``error``) las frases que se pueden mostrar.

    Nunca detiene la calificación: si algo falla al buscarlas, la celda queda sin frases.
    """
    try:
        cell.metadata[KEY] = sentences(error)
    except Exception:  # noqa: BLE001 (el diagnóstico nunca cambia la nota)
        cell.metadata[KEY] = []


def sentences(error: BaseException) -> list[str]:
    """El error típico nombrado por una comprobación del calificador y la pista, sin valores."""
    from course.grading.remote import StudentError  # PyTorch, solo en el calificador

    if isinstance(error, StudentError):
        ename, evalue, named = error.ename, error.evalue, []
    else:
        ename, evalue = type(error).__name__, str(error)
        diagnosis = getattr(error, "diagnosis", None) if type(error) is AssertionError else None
        named = course_sentences(diagnosis) if type(diagnosis) is str else []
    hint = masked_hint(ename, evalue)
    return named + ([hint] if hint else [])


@functools.cache
def known() -> frozenset[str]:
    """Las frases del curso que nombran un error: catálogos, huellas y relaciones."""
    from course import mistakes  # los catálogos: solo en el calificador
    from course.student import checks

    found = set(checks.RELATIONS)
    for lab_id in labs.LABS:
        found |= {mistake.message for mistake in mistakes.catalogue(lab_id)}
    for entries in mistakes._fingerprints().values():
        found |= {entry["message"] for entry in entries}
    return frozenset(found)


def course_sentences(text: str) -> list[str]:
    """Las frases de :func:`known` que hay en ``text``, en su orden; nada más de ``text``."""
    found = [sentence for sentence in known() if sentence and sentence in text]
    found = [s for s in found if not any(s != other and s in other for other in found)]
    return sorted(found, key=text.index)


class _Masked:
    """Un ``re.Match`` cuyos grupos valen :data:`MASK`, salvo el vocabulario :data:`FIXED`."""

    def __init__(self, match: re.Match):
        self._match = match

    def __getitem__(self, name: str) -> str | None:
        value = self._match[name]
        return value if value is None or value in FIXED else MASK


def masked_hint(ename: str, evalue: str) -> str | None:
    """La pista de :func:`course.student.hints.hint` sin nada copiado de ``evalue``.

    Sin regla que case, o si la frase necesita un número del mensaje para decirse, la línea
    general de un tipo conocido (:data:`course.student.hints.FALLBACK`), que no copia nada; el
    nombre de un tipo que no está ahí lo eligió el estudiante y no se usa.
    """
    for kind, pattern, text in hints.RULES:
        match = re.search(pattern, evalue.strip()) if kind == ename else None
        if match is None:
            continue
        if isinstance(text, str):
            return hints.PREFIX + text
        try:
            return hints.PREFIX + text(_Masked(match))
        except (ValueError, TypeError):
            break
    return hints.fallback(ename) if ename in hints.FALLBACK else None
