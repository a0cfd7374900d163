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
- ``zygote``: en ``grade`` como root, cada núcleo nace con ``fork`` de un proceso aislado
  que ya importó torch, con su propia caja (``zygote_main``);
- ``nbgrader_course``: la configuración y la API de nbgrader, generar y el curso preparado;
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

_LAZY = {  # nombre -> módulo de course.grading que lo define
    "STUDENT": "staging", "identify": "staging", "grade_ids": "staging",
    "grade_notebook": "runner", "read_notebook": "staging", "generate": "nbgrader_course",
    "nbgrader_config": "nbgrader_course", "prepared_course": "nbgrader_course",
    "validate": "nbgrader_course",
}  # fmt: skip


def __getattr__(name: str):
    """Lo que importa nbgrader o torch se importa al pedirlo: así ``check`` lanza el
    núcleo (``staging``) antes de pagar esas importaciones."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"course.grading.{_LAZY[name]}"), name)
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
