"""Ida y vuelta por nbgrader real para cada laboratorio presente en ``source/``.

La solución saca todos los puntos automáticos; la versión de estudiante sin tocar, cero;
un cuaderno hecho a medias, exactamente los puntos de los ejercicios hechos. Además,
``release/`` está al día, no contiene soluciones ni pruebas ocultas, y ``source/`` se
guarda sin salidas.
"""

import json

import nbformat
import pytest
from leaks import REGION, secret_lines

from course import grading, labs, notebooks

LABS = labs.available()
IDS = [lab.id for lab in LABS]


def _nbgrader(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _solution_cells(notebook) -> dict[str, nbformat.NotebookNode]:
    return {
        _nbgrader(c)["grade_id"]: c
        for c in notebook.cells
        if _nbgrader(c).get("solution") and not _nbgrader(c).get("grade")
    }


@pytest.fixture(params=LABS, ids=IDS)
def lab(request) -> labs.Lab:
    return request.param


def test_there_is_at_least_one_lab():
    assert "01_atencion" in IDS


def test_source_notebooks_have_no_outputs(lab):
    notebook = nbformat.read(lab.source, 4)
    dirty = [
        i
        for i, c in enumerate(notebook.cells)
        if c.cell_type == "code" and (c.outputs or c.execution_count)
    ]
    assert not dirty, (
        f"{lab.id}: las celdas {dirty} de source/ tienen salidas; límpialas antes de confirmar."
    )


def test_lab_is_worth_100_points_with_manual_questions(lab):
    cells = [_nbgrader(c) for c in nbformat.read(lab.source, 4).cells if _nbgrader(c).get("grade")]
    total = sum(c["points"] for c in cells)
    manual = sum(c["points"] for c in cells if c["grade_id"].startswith("pregunta"))
    assert total == 100
    assert 10 <= manual <= 20
    assert sum(c["grade_id"].startswith("pregunta") for c in cells) >= 2


def test_every_exercise_has_a_visible_and_a_hidden_test(lab):
    notebook = nbformat.read(lab.source, 4)
    ids = grading.grade_ids(notebook)
    exercises = _solution_cells(notebook)
    assert len(exercises) >= 4
    for exercise in exercises:
        assert f"{exercise}_prueba" in ids, f"falta la prueba visible de {exercise}"
        assert f"{exercise}_oculta" in ids, f"falta la prueba oculta de {exercise}"
    hidden = [c for c in notebook.cells if _nbgrader(c).get("grade_id", "").endswith("_oculta")]
    assert all("### BEGIN HIDDEN TESTS" in c.source for c in hidden)


def test_release_is_up_to_date(lab):
    # La versión que genera nbgrader ahora, la misma que usa la calificación: su caché lleva
    # la huella del cuaderno fuente, de nbgrader_config.py y de nbgrader (prepared_course).
    rebuilt = grading.prepared_course(lab) / "release" / lab.id / f"{lab.id}.ipynb"
    assert json.loads(rebuilt.read_text()) == json.loads(lab.release.read_text()), (
        f"release/{lab.id} no corresponde a source/{lab.id}: ejecuta `python -m course build {lab.id}`."
    )


def test_release_has_no_solution_and_no_hidden_test(lab):
    secrets = secret_lines(c.source for c in nbformat.read(lab.source, 4).cells)
    assert secrets, "el cuaderno fuente debería tener regiones de solución"
    released = nbformat.read(lab.release, 4)
    text = "\n".join(c.source for c in released.cells)
    leaked = secrets & {line.strip() for line in text.splitlines()}
    assert not leaked
    assert not REGION.search(text)


@pytest.mark.slow
def test_solution_gets_full_automatic_marks(lab):
    result = grading.grade_notebook(lab.source, lab)
    failed = [
        (c.grade_id, c.message)
        for c in result.cells
        if c.points is not None and c.points < c.max_points
    ]
    assert not failed
    assert result.auto_points == result.auto_max > 0
    pending = {c.grade_id for c in result.cells if c.points is None}
    assert pending == {c.grade_id for c in result.cells if c.grade_id.startswith("pregunta")}


@pytest.mark.slow
def test_untouched_release_gets_zero(lab):
    result = grading.grade_notebook(lab.release, lab)
    assert [c.points for c in result.cells] == [0] * len(result.cells)


@pytest.mark.slow
@pytest.mark.esencial  # la calificación de principio a fin de cada laboratorio en el nivel rápido
def test_half_done_notebook_gets_exactly_the_points_of_the_exercises_done(lab, tmp_path):
    solutions = _solution_cells(nbformat.read(lab.source, 4))
    done = list(solutions)[: len(solutions) // 2]
    notebook = nbformat.read(lab.release, 4)
    for cell in notebook.cells:
        if _nbgrader(cell).get("grade_id") in done:
            cell.source = solutions[_nbgrader(cell)["grade_id"]].source
    path = tmp_path / "a_medias.ipynb"
    nbformat.write(notebook, path)

    result = grading.grade_notebook(path, lab)

    expected = {c.grade_id: (c.max_points if c.exercise in done else 0) for c in result.cells}
    assert {c.grade_id: c.points for c in result.cells} == expected


def _graded_cell(**meta) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell("x = 1")
    cell.metadata["nbgrader"] = meta
    return cell


def test_grade_id_kinds_follow_the_course_convention():
    assert notebooks.is_visible_test("ej1_puntuaciones_prueba")
    assert not notebooks.is_visible_test("ej1_puntuaciones_oculta")
    assert notebooks.is_hidden_test("ej2_softmax_oculta")
    assert not notebooks.is_hidden_test("ej2_softmax")
    assert notebooks.is_written("pregunta_2") and not notebooks.is_written("ej3_relleno")
    assert notebooks.is_setup("preparacion") and not notebooks.is_setup(None)
    assert notebooks.is_exercise("ej4_causal_prueba") and not notebooks.is_exercise("md_03")
    assert notebooks.exercise("ej1_puntuaciones_oculta") == "ej1_puntuaciones"
    assert notebooks.exercise("ej1_puntuaciones_prueba") == "ej1_puntuaciones"
    assert notebooks.exercise("pregunta_2") == "pregunta_2"
    assert notebooks.visible_test("ej5_atencion") == "ej5_atencion_prueba"


def test_nbgrader_metadata_accessors():
    test = _graded_cell(grade=True, solution=False, grade_id="ej1_prueba", points=3)
    answer = _graded_cell(grade=False, solution=True, grade_id="ej1", locked=False)
    setup = _graded_cell(grade=False, solution=False, grade_id="preparacion", locked=True)
    plain = nbformat.v4.new_markdown_cell("texto")
    assert notebooks.grade_id(test) == "ej1_prueba" and notebooks.grade_id(plain) is None
    assert notebooks.points(test) == 3 and notebooks.points(answer) == 0
    assert [notebooks.is_test(c) for c in (test, answer, setup, plain)] == [1, 0, 0, 0]
    assert [notebooks.is_solution(c) for c in (test, answer, setup, plain)] == [0, 1, 0, 0]
    assert [notebooks.is_locked(c) for c in (test, answer, setup, plain)] == [0, 0, 1, 0]
    notebook = nbformat.v4.new_notebook(cells=[test, answer, setup, plain])
    assert notebooks.grade_ids(notebook) == {"ej1_prueba", "ej1", "preparacion"}


def test_forget_and_copy_nbgrader_metadata():
    original = _graded_cell(grade=True, solution=False, grade_id="ej1_prueba", points=3)
    cell = _graded_cell(grade=True, solution=True, grade_id="ej1_prueba", points=100)
    notebooks.copy_nbgrader(original, cell)
    assert cell.metadata["nbgrader"]["points"] == 3 and not cell.metadata["nbgrader"]["solution"]
    cell.metadata["nbgrader"]["points"] = 50
    assert original.metadata["nbgrader"]["points"] == 3  # una copia, no el mismo diccionario
    notebooks.forget(cell)
    assert "nbgrader" not in cell.metadata and notebooks.grade_id(cell) is None
    notebooks.forget(nbformat.v4.new_code_cell("y = 2"))  # sin metadatos: nada que quitar
