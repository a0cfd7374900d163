"""Calificación: la frontera de confianza del curso.

El cuaderno entregado es código hostil. Lo que vive aquí decide las notas y nunca
ejecuta código del estudiante en su propio proceso:

- ``sandbox``: el núcleo del estudiante, encerrado con bubblewrap (sin red, sin el
  repositorio ni la caché, con límites de memoria, procesos, archivos y tiempo);
- ``remote`` y ``agent``: las pruebas se ejecutan en el proceso de calificación y piden
  al núcleo, por el protocolo de Jupyter, solo los resultados del estudiante;
- ``execute``: el paso de nbgrader que reparte cada celda entre núcleo y calificador;
- ``staging`` y ``pool``: preparar una entrega y lanzar ya su núcleo (uno por entrega,
  destruido al terminarla), mientras se importa nbgrader o se califica la anterior;
- ``runner``: calificar un cuaderno sobre un curso temporal;
- ``results``: el resultado de una entrega (``Result``, ``Cell``) y su unión en
  ``gradebook.db``;
- ``outputs``: los topes de salida por celda, al calificar y en la devolución;
- ``files``: zips y carpetas entregadas, leídos con límites y sin enlaces;
- ``feedback``: la devolución sin pruebas ocultas, por cualquier camino que se genere;
- ``integrity``: el informe estático para el instructor (una red de seguridad, no la
  defensa).
"""

from course.grading.results import Cell, Result

_RUNNER = (
    "STUDENT", "generate", "grade_ids", "grade_notebook", "identify", "nbgrader_config",
    "prepared_course", "read_notebook", "validate",
)  # fmt: skip


def __getattr__(name: str):
    """Lo de ``runner`` (nbgrader, torch) se importa al pedirlo: así ``check`` lanza el
    núcleo (``staging``) antes de pagar esas importaciones."""
    if name in _RUNNER:
        from course.grading import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "STUDENT",
    "Cell",
    "Result",
    "generate",
    "grade_ids",
    "grade_notebook",
    "identify",
    "nbgrader_config",
    "prepared_course",
    "read_notebook",
    "validate",
]
