"""Configuración de nbgrader para el curso. La raíz del repositorio es el directorio del curso."""

import os

c = get_config()  # noqa: F821 (nbgrader define get_config al cargar este archivo)

ROOT = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.course_id = "transformer-es"
c.CourseDirectory.root = ROOT
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(ROOT, "gradebook.db")

# Lo que ve el estudiante en lugar de la solución.
c.ClearSolutions.code_stub = {"python": "# TU CÓDIGO AQUÍ\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "TU RESPUESTA AQUÍ"

# Cada celda dispone de 60 s; al agotarse se interrumpe y se sigue con la siguiente,
# así un bucle infinito solo cuesta los puntos de su ejercicio.
c.Execute.timeout = 60
c.Execute.interrupt_on_timeout = True

# Las celdas de prueba borradas por el estudiante se restauran al calificar.
c.OverwriteCells.add_missing_cells = True
c.OverwriteCells.missing_cell_notification = (
    "Esta celda (id: {cell_id}) faltaba en la entrega; nbgrader la ha restaurado.\n\n"
)

# nbgrader da 0 puntos a una celda de prueba que escribe en stderr. Los avisos de Python
# (`UserWarning: ...`) y las barras de progreso de tqdm no son errores: se descartan.
c.IgnorePattern.pattern = r"\w+Warning: |\d+%\|"
