"""El error de una entrega nombra al estudiante y el laboratorio, no la copia temporal
en la que se calificó (``course.grading.batch``)."""

import pytest

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


def test_a_grading_cut_short_by_the_death_of_the_main_process_leaves_no_result(
    tmp_path, monkeypatch
):
    """nbgrader atrapa el ``SystemExit`` de SIGTERM y lo da como «nbgrader falló»: ese
    error falso no se guarda, y la orden que reanuda califica la entrega de nuevo."""
    import course.grading

    def swallowing(*_, **__):
        try:
            batch._main_died()  # lo que hace SIGTERM en el proceso de trabajo
        except BaseException:  # noqa: BLE001 (como nbgrader.utils.capture_log)
            pass
        raise batch.CourseError("nbgrader falló al calificar")

    monkeypatch.setattr(course.grading, "grade_notebook", swallowing)
    monkeypatch.setattr(batch, "_orphaned", False)
    notebook = tmp_path / "submitted" / "est05" / LAB.id / f"{LAB.id}.ipynb"
    notebook.parent.mkdir(parents=True)
    notebook.write_bytes(LAB.release.read_bytes())
    task = batch.Task("est05", LAB.id, notebook)
    with scratch.run_folder(), pytest.raises(SystemExit):
        batch.grade_one(task, tmp_path / "autograded", batch.Settings(sandboxed=False))
    assert not list((tmp_path / "autograded").rglob("*"))
