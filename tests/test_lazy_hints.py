"""Una respuesta correcta no paga las pistas (issue 24): las pruebas ocultas dan
``hints=lambda: ...`` y ``checks.close`` solo la llama si la comparación falla, así que
con el cuaderno de solución ningún mutante del catálogo llega a ejecutarse.

Con un error, en cambio, la pista se calcula y lo nombra (``tests/test_mistakes.py`` lo
mide en todo el catálogo; aquí basta un caso para ver que la función sí se llama).
"""

import pytest

from course import labs, mistakes, notebooks


@pytest.fixture
def counted(monkeypatch):
    """Los ejercicios de cada llamada a ``mistakes.hints`` mientras dura la prueba."""
    calls: list[str] = []
    real = mistakes.hints

    def counting(exercise, *inputs, **kwargs):
        calls.append(exercise)
        return real(exercise, *inputs, **kwargs)

    monkeypatch.setattr(mistakes, "hints", counting)
    return calls


@pytest.mark.slow  # ejecuta los cuadernos de solución
@pytest.mark.parametrize("lab_id", [lab.id for lab in labs.available()])
def test_a_correct_notebook_runs_no_mutant(solutions, counted, lab_id):
    solution = solutions(lab_id)
    hidden = [grade_id for grade_id in solution.tests if notebooks.is_hidden_test(grade_id)]
    assert hidden
    for grade_id in hidden:
        solution.test(grade_id)
    assert counted == [], f"pistas calculadas con la respuesta correcta: {sorted(set(counted))}"


@pytest.mark.slow  # ejecuta el cuaderno de solución del laboratorio 1
def test_a_wrong_answer_computes_the_hints_that_name_it(solutions, counted):
    solution = solutions("01_atencion")
    unscaled = next(
        m for m in mistakes.catalogue("01_atencion") if m.id.endswith("scores_without_scale")
    )
    with solution.substituted(unscaled.replaces, unscaled.mutant):
        with pytest.raises(AssertionError, match="√d_k") as raised:
            solution.test("ej1_puntuaciones_oculta")
    assert counted == ["ej1_puntuaciones"]
    assert unscaled.message in str(raised.value)
