"""El error de una entrega nombra al estudiante y el laboratorio, no la copia temporal
en la que se calificó (``course.grading.batch``)."""

from course import labs
from course.grading import batch, scratch

LAB = labs.get("01_atencion")


def test_a_broken_notebook_is_named_by_student_and_lab_not_by_its_temporary_copy(tmp_path):
    notebook = tmp_path / "submitted" / "est05" / LAB.id / f"{LAB.id}.ipynb"
    notebook.parent.mkdir(parents=True)
    notebook.write_text('{"cells": [')
    task = batch.Task("est05", LAB.id, notebook)
    with scratch.run_folder() as folder:
        settings = batch.Settings(sandboxed=False)
        result = batch.grade_one(task, tmp_path / "autograded", settings)
    assert result.error.startswith(f"«est05/{LAB.id}/{LAB.id}.ipynb» no es un cuaderno válido")
    assert folder.name not in result.error and "course-entrega" not in result.error
