"""La puerta de nbgrader: ``nbgrader autograde`` y el botón Autograde de Formgrader.

Sin esto, nbgrader ejecuta las pruebas en el núcleo del propio estudiante, sin aislar:
un cuaderno en blanco con un truco de ``sys.displayhook`` sacaba 75/100 y otro cambiaba
con SQL la nota de un compañero en ``gradebook.db``. ``nbgrader_config.py`` pone estos
pasos en lugar de los de nbgrader, y la calificación es la misma que la de
``python -m course grade`` (``course.grading.batch.grade_one``):

- :class:`RestoreCells` (al sanear la entrega): metadatos y celdas de nbgrader del cuaderno
  publicado, como hace ``grade``; así nbgrader no se detiene con celdas copiadas o borradas;
- :class:`SealedAutograde` (en lugar de ``Execute``): califica el cuaderno entregado en un
  proceso aparte, con núcleo aislado, pruebas en el calificador, restauración de metadatos
  y topes, y devuelve a nbgrader el cuaderno calificado, del que ``SaveAutoGrades`` saca
  las mismas notas por celda. Deja además el ``calificacion.json`` de ``grade``.
- :class:`KeepManualGrades` (en lugar de ``SaveAutoGrades``): guarda esas notas sin
  deshacer lo que calificó una persona, con la misma regla que ``grade``
  (``course.grading.results``): volver a pulsar «Autocalificar» no pide otra vez la
  corrección manual ya hecha si la nota automática no cambió.

Si no se puede aislar (falta bubblewrap) o la calificación falla por el calificador, la
entrega no se califica: nbgrader anota el error con un mensaje en español que nombra la
orden segura, nunca ejecuta el cuaderno sin aislar ni pone un 0.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor, SaveAutoGrades

import course
from course import labs, names
from course.labs import CourseError

WORKER_MARGIN_S = 300  # arranque del proceso, nbgrader y el núcleo, además del cuaderno
SAFE = "python -m course grade"


class DoorRefused(CourseError):
    """Esta puerta no califica esta entrega (sin aislamiento, laboratorio desconocido…)."""


def _lab(resources: dict) -> labs.Lab:
    assignment = resources.get("nbgrader", {}).get("assignment", "")
    try:
        return labs.get(assignment)
    except CourseError as error:
        raise DoorRefused(
            f"«{assignment}» no es un laboratorio del curso; esta puerta solo califica los"
            f" laboratorios del curso ({error})"
        ) from None


class RestoreCells(NbGraderPreprocessor):
    """Metadatos y celdas de nbgrader del cuaderno publicado, antes de que nbgrader sanee."""

    def preprocess(self, nb, resources):
        from course import grading
        from course.grading.staging import restored

        lab = _lab(resources)
        release = grading.prepared_course(lab) / "release" / lab.id / f"{lab.id}.ipynb"
        return restored(nb, nbformat.read(release, 4)), resources


class SealedAutograde(NbGraderPreprocessor):
    """Califica la entrega como ``python -m course grade`` (proceso aparte, núcleo aislado)."""

    runs_notebook = True  # runner lo sustituye por ``TrustedExecute`` dentro de ``grade``

    def preprocess(self, nb, resources):
        from course.grading import results, sandbox

        info = resources.get("nbgrader", {})
        student, notebook = info.get("student", ""), info.get("notebook", "")
        lab = _lab(resources)
        bad_name = names.problem(student, "estudiante")
        if bad_name:  # nbgrader ya lo añadió a gradebook.db; Formgrader lo escapa
            raise DoorRefused(f"No se califica la carpeta de submitted/: {bad_name}.")
        reason = sandbox.available()
        if reason:
            raise DoorRefused(
                f"nbgrader autograde y el botón Autograde de Formgrader califican con el núcleo"
                f" aislado y aquí no se puede aislar: {reason}. No se ha calificado"
                f" {student} · {lab.id}. Instala bubblewrap y califica con «{SAFE}»"
                " (comprueba el entorno con «python -m course doctor»)."
            )
        # Se califica el archivo entregado, como grade; ``nb`` (la copia saneada por
        # nbgrader) se sustituye por el cuaderno calificado.
        coursedir = self._coursedir()
        folder = Path(coursedir.format_path(coursedir.submitted_directory, student, lab.id))
        graded, result = grade_elsewhere(folder / f"{notebook}.ipynb", lab, student)
        # El calificacion.json de grade junto al cuaderno calificado: grade --merge-only,
        # feedback y la tabla ven lo mismo por cualquier puerta.
        autograded = Path(coursedir.format_path(coursedir.autograded_directory, student, lab.id))
        results.write(autograded.parents[1], result)
        return graded, resources

    def _coursedir(self):
        """El ``CourseDirectory`` de quien ejecuta (la orden o Formgrader)."""
        from nbgrader.coursedir import CourseDirectory

        owner = self.parent
        while owner is not None:
            if isinstance(getattr(owner, "coursedir", None), CourseDirectory):
                return owner.coursedir
            owner = getattr(owner, "parent", None)
        return CourseDirectory(config=self.config)


class KeepManualGrades(SaveAutoGrades):
    """``SaveAutoGrades`` con la regla de ``grade`` para lo que calificó una persona.

    nbgrader marca para revisar (``needs_manual_grade``) toda celda con nota manual en cada
    calificación; aquí solo si su nota automática cambió (la nota manual se puso sobre otro
    resultado). La nota y el comentario manuales no se tocan nunca.
    """

    def _add_score(self, cell, resources) -> None:
        from nbgrader.utils import determine_grade

        from course.grading.results import update_grade

        grade = self.gradebook.find_grade(
            cell.metadata["nbgrader"]["grade_id"],
            self.notebook_id,
            self.assignment_id,
            self.student_id,
        )
        update_grade(grade, determine_grade(cell, self.log)[0])
        self.gradebook.db.commit()


def grade_elsewhere(path: Path, lab: labs.Lab, student: str) -> tuple:
    """Califica ``path`` en un proceso nuevo (su hilo principal y sus topes, como un proceso
    de ``grade``); devuelve el cuaderno calificado y el ``Result``.

    Un fallo del calificador (el núcleo no importa el curso, el proceso no termina) es
    :class:`DoorRefused` con el motivo: la entrega no se califica.
    """
    from course.grading import results

    with tempfile.TemporaryDirectory(prefix="course-puerta-") as tmp:
        out = Path(tmp)
        command = [sys.executable, "-m", "course.grading.door", str(path), lab.id, student, tmp]
        env = dict(os.environ, PYTHONPATH=_course_path())
        limit = _notebook_timeout() + WORKER_MARGIN_S
        worker = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, text=True,
        )  # fmt: skip
        try:
            _, errors = worker.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.communicate()
            raise DoorRefused(
                f"la calificación de {student} · {lab.id} no terminó en {limit} s"
            ) from None
        found = results.path_for(out / "autograded", student, lab.id)
        if not found.is_file():
            raise DoorRefused(f"el proceso de calificación falló:\n{errors[-2000:]}")
        result = results.Result(**json.loads(found.read_text()))
        if result.error:
            raise DoorRefused(f"{student} · {lab.id} sin calificar: {result.error}")
        graded = nbformat.read(found.with_name(f"{lab.id}.ipynb"), 4)
    return graded, result


def _course_path() -> str:
    """El proceso de calificación importa el mismo ``course`` que esta puerta."""
    here = str(Path(course.__file__).resolve().parents[1])
    return os.pathsep.join([here, *filter(None, [os.environ.get("PYTHONPATH")])])


def _notebook_timeout() -> int:
    from course.grading.execute import TrustedExecute

    return TrustedExecute.class_traits()["notebook_timeout"].default()


def main(argv: list[str]) -> int:
    """Proceso de calificación de la puerta: ``grade_one`` de ``python -m course grade``."""
    from course.grading import batch

    path, lab_id, student, out = argv
    batch.init_worker()
    task = batch.Task(student, lab_id, Path(path))
    batch.grade_one(task, Path(out) / "autograded")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
