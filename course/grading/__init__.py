"""Calificación: la frontera de confianza del curso.

El cuaderno entregado es código hostil. Lo que vive aquí decide las notas y nunca
ejecuta código del estudiante en su propio proceso:

- ``sandbox``: el núcleo del estudiante, encerrado con bubblewrap (sin red, sin el
  repositorio ni la caché, con límites de memoria, procesos, archivos y tiempo);
- ``remote`` y ``agent``: las pruebas se ejecutan en el proceso de calificación y piden
  al núcleo, por el protocolo de Jupyter, solo los resultados del estudiante;
- ``execute``: el paso de nbgrader que reparte cada celda entre núcleo y calificador;
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
from course.grading.runner import (
    STUDENT,
    generate,
    grade_ids,
    grade_notebook,
    identify,
    nbgrader_config,
    prepared_course,
    read_notebook,
    validate,
)

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
