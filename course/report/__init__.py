"""Informe de la clase: qué ejercicio y qué idea falló la clase, a partir de lo guardado.

Nada aquí califica ni vuelve a ejecutar una entrega: se lee lo que dejó la calificación
(``gradebook.db`` y cada ``autograded/<estudiante>/<lab>/calificacion.json``).

- ``stored``: lee el libro de notas y los resultados en :class:`stored.Classroom`;
- ``analysis``: las cifras por ejercicio (dificultad, discriminación, errores con nombre);
- ``figures``: las figuras de plotly (solo datos, sin nombres de estudiantes);
- ``pages``: las páginas HTML (todo lo que viene de una entrega, escapado);
- ``tables``: las mismas tablas en CSV;
- ``progress``: lo que guarda ``check`` para ``python -m course progreso``.
"""
