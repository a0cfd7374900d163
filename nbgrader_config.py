"""Configuración de nbgrader para el curso. La raíz del repositorio es el directorio del curso."""

import os

from nbgrader.converters import GenerateFeedback
from nbgrader.coursedir import CourseDirectory

from course.grading.feedback import FeedbackExporter, SafeFeedback
from course.grading.results import RESULT_NAME
from course.grading.sanitize import SanitizeStudentHTML

c = get_config()  # noqa: F821 (nbgrader define get_config al cargar este archivo)

ROOT = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.course_id = "transformer-es"
c.CourseDirectory.root = ROOT
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(ROOT, "gradebook.db")

# Lo que ve el estudiante en lugar de la solución.
c.ClearSolutions.code_stub = {"python": "# TU CÓDIGO AQUÍ\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "TU RESPUESTA AQUÍ"

# --- Calificación sellada por cualquier puerta (nbgrader autograde, Formgrader) ---------
# Las pruebas no se ejecutan en el núcleo del estudiante: SealedAutograde califica cada
# entrega como «python -m course grade» (núcleo aislado con bubblewrap, pruebas en el
# calificador, metadatos restaurados, topes) y nbgrader guarda esas notas por celda. Sin
# aislamiento, la puerta se niega y nombra la orden segura (course/grading/door.py).
# RestoreCells pone antes los metadatos del cuaderno publicado, como hace grade.
# Otros pasos pueden añadirse a estas listas (runner los aplica igual por cualquier puerta).
from nbgrader.converters import Autograde  # noqa: E402
from nbgrader.preprocessors import Execute, SaveAutoGrades  # noqa: E402

from course.grading.door import KeepManualGrades, RestoreCells, SealedAutograde  # noqa: E402

c.Autograde.sanitize_preprocessors = [
    RestoreCells,
    *Autograde.class_traits()["sanitize_preprocessors"].default(),
]
# KeepManualGrades: volver a calificar no deshace lo que calificó una persona (como grade).
DOOR_STEPS = {Execute: SealedAutograde, SaveAutoGrades: KeepManualGrades}
c.Autograde.autograde_preprocessors = [
    DOOR_STEPS.get(step, step)
    for step in Autograde.class_traits()["autograde_preprocessors"].default()
]
# Un clon recién hecho no tiene gradebook.db: el laboratorio se define en él antes de
# calificar. Como root, lo escrito pasa al dueño de la carpeta del curso, que puede volver
# a calificar (course/grading/door_hooks.py).
c.Autograde.pre_convert_hook = "course.grading.door_hooks.before_autograde"
c.Autograde.post_convert_hook = "course.grading.door_hooks.after_convert"
c.GenerateFeedback.post_convert_hook = "course.grading.door_hooks.after_convert"
# --- fin de la calificación sellada ---------------------------------------------------

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

# Devolución (`nbgrader generate_feedback`, el botón Generate Feedback de Formgrader y
# `python -m course feedback`): sin el código ni las salidas de las pruebas ocultas y con
# las salidas recortadas por bytes (course/grading/feedback.py).
c.GenerateFeedback.preprocessors = [
    SafeFeedback,
    *GenerateFeedback.class_traits()["preprocessors"].default(),
]
c.SafeFeedback.max_text_bytes = 20_000
c.SafeFeedback.max_image_bytes = 2_000_000
# nbgrader copia a feedback/ los demás archivos de autograded/<estudiante>/<lab>/; el
# calificacion.json de `python -m course grade` lleva los mensajes de las pruebas ocultas.
c.CourseDirectory.ignore = [*CourseDirectory.class_traits()["ignore"].default(), RESULT_NAME]

# --- HTML del estudiante (course/grading/sanitize.py) ---------------------------------
# Nada de lo que escribe un estudiante se ejecuta en el navegador del profesor. Se limpia
# al calificar (último paso de la cadena: el cuaderno de autograded/ queda limpio), al
# dibujar una entrega en Formgrader (su HTMLExporter) y en la devolución, que además sale
# sin ningún guion: fórmulas en MathML y una Content-Security-Policy en <meta>.
c.Autograde.autograde_preprocessors.append(SanitizeStudentHTML)
c.HTMLExporter.preprocessors = [SanitizeStudentHTML]
c.GenerateFeedback.exporter_class = FeedbackExporter
# --- fin del bloque del HTML del estudiante -------------------------------------------

# --- Archivos de las entregas (issue 32, punto 2) ------------------------------------
# autograde y generate_feedback copian los demás archivos de la carpeta de la entrega; la
# copia de nbgrader sigue enlaces y lee FIFOs y dispositivos (un enlace al cuaderno fuente
# llegaba a feedback/). Solo pasan archivos normales, con un aviso por cada omisión que
# nombra al estudiante (course/grading/nbgrader_files.py).
from course.grading import nbgrader_files  # noqa: E402

nbgrader_files.install()
# --- fin de los archivos de las entregas ----------------------------------------------

# --- nbgrader collect (issue 20, punto 3) ---------------------------------------------
# Lo que entra en submitted/ desde el intercambio: sin seguir enlaces simbólicos, sin
# enlaces duros ni archivos especiales, y sin creer el nombre de la carpeta si su dueño es
# otro estudiante (course/grading/collect.py). Si todos los estudiantes comparten usuario
# del sistema, añade c.ExchangeCollect.check_owner = False.
c.ExchangeFactory.collect = "course.grading.collect.SafeCollect"
# --- fin de nbgrader collect ----------------------------------------------------------
