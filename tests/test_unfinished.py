"""Un ejercicio sin hacer se ve como tal: su prueba visible deja ver el NotImplementedError.

``NotImplementedError`` es una subclase de ``RuntimeError``: una prueba que convierte un
``RuntimeError`` de formas en un mensaje con nombre («¿traspones solo los dos últimos
ejes?») tomaría por ese error un ejercicio que el estudiante aún no ha empezado.
"""

import pytest
from torch import nn

from course import labs, mistakes
from course.student import hints

EXERCISES = sorted(
    {(lab_id, m.exercise, m.replaces) for lab_id in labs.LABS for m in mistakes.catalogue(lab_id)}
)


def _unfinished(original: object) -> object:
    """Lo que deja la versión del estudiante sin tocar: ``raise NotImplementedError()``."""
    if isinstance(original, type) and issubclass(original, nn.Module):

        class Unfinished(original):
            def __init__(self, *args, **kwargs):
                raise NotImplementedError()

        return Unfinished

    def unfinished(*args, **kwargs):
        raise NotImplementedError()

    return unfinished


@pytest.mark.parametrize(("lab_id", "exercise", "name"), EXERCISES)
def test_the_visible_test_shows_an_unfinished_exercise_as_such(solutions, lab_id, exercise, name):
    solution = solutions(lab_id)
    with solution.substituted(name, _unfinished(solution.namespace[name])):
        with pytest.raises(NotImplementedError) as raised:
            solution.test(f"{exercise}_prueba")
    line = hints.hint(type(raised.value).__name__, str(raised.value))
    assert "borra `raise NotImplementedError()`" in line
