"""Laboratorio 5 (issue 23): los errores que el issue cita, nombrados por su idea.

Las máscaras de DecoderLayer cambiadas fallan en PyTorch con un RuntimeError (T_q ≠ T_k):
la prueba visible lo convierte en un AssertionError que las nombra. El dropout que no se
pasa a las subcapas se nombra en la prueba oculta sin culpar a ``self.dropout``. Los
errores de estructura que solo nombra un ``raise`` de la prueba oculta llegan a la
devolución (``course.grading.diagnosis``) con la frase del catálogo.
"""

import pytest

from course import mistakes
from course.grading import diagnosis
from course.mistakes import layers

LAB = "05_capas"


def _failure(solution, grade_id):
    try:
        solution.test(grade_id)
    except Exception as error:  # noqa: BLE001 (cualquier fallo de la celda cuenta)
        return error
    return None


def _mistake(mutant) -> mistakes.Mistake:
    (found,) = [m for m in mistakes.catalogue(LAB) if m.mutant is mutant]
    return found


@pytest.mark.slow  # ejecuta el cuaderno de solución
@pytest.mark.parametrize(
    "mutant",
    [
        layers.DecoderLayerMasksSwapped,
        layers.DecoderLayerTgtMaskInBoth,
        layers.DecoderLayerMemoryMaskInBoth,
        layers.DecoderLayerQueriesFromMemory,
        layers.DecoderLayerValuesFromX,
    ],
    ids=lambda mutant: mutant.__name__,
)
def test_a_shape_error_of_the_decoder_layer_is_named_by_the_visible_test(solutions, mutant):
    mistake = _mistake(mutant)
    solution = solutions(LAB)
    with solution.substituted(mistake.replaces, mistake.mutant):
        visible = _failure(solution, f"{mistake.exercise}_prueba")
    assert isinstance(visible, AssertionError), f"se rompe sin nombrar el error: {visible!r}"
    assert mistake.message in str(visible) and "T_k = 5" in str(visible)


@pytest.mark.slow
@pytest.mark.parametrize(
    "mutant",
    [
        layers.EncoderLayerAttentionWithoutDropout,
        layers.EncoderLayerFeedForwardWithoutDropout,
        layers.DecoderLayerCrossAttentionWithoutDropout,
    ],
    ids=lambda mutant: mutant.__name__,
)
def test_sublayer_dropout_is_named_without_blaming_self_dropout(solutions, mutant):
    mistake = _mistake(mutant)
    solution = solutions(LAB)
    with solution.substituted(mistake.replaces, mistake.mutant):
        hidden = _failure(solution, f"{mistake.exercise}_oculta")
    assert isinstance(hidden, AssertionError) and layers.SUBLAYER_DROPOUT in str(hidden)
    assert layers.SELF_DROPOUT not in str(hidden), "culpa a self.dropout, que está bien"
    assert layers.SUBLAYER_DROPOUT in diagnosis.sentences(hidden)


@pytest.mark.slow
@pytest.mark.parametrize(
    "mutant",
    [
        layers.FeedForwardUnknownIsGelu,
        layers.EncoderPlainList,
        layers.EncoderNeverNorm,
        layers.DecoderAlwaysNorm,
        layers.DecoderWithoutValueError,
    ],
    ids=lambda mutant: mutant.__name__,
)
def test_a_mistake_raised_by_the_hidden_test_reaches_the_feedback(solutions, mutant):
    mistake = _mistake(mutant)
    solution = solutions(LAB)
    with solution.substituted(mistake.replaces, mistake.mutant):
        hidden = _failure(solution, f"{mistake.exercise}_oculta")
    assert hidden is not None, "las pruebas ocultas no lo detectan"
    assert mistake.message in diagnosis.sentences(hidden)


def test_every_idea_has_several_forms():
    """Cada mensaje del catálogo lo comparten al menos dos mutantes, del mismo ejercicio o de
    otro (salvo las ideas de una sola forma, que se listan): la mitad apartada mide la idea,
    no el mutante."""
    single = {
        layers.KEYS_UNNORMALIZED,
        layers.MEMORY_NORMALIZED,
        layers.DECODER_MASKS,
        layers.DECODER_LAYER_OUTPUT,  # las dos de la pareja devuelta las nombra un raise
        layers.DECODER_OUTPUT,
        # Nombradas por una sonda de la prueba visible, no por la huella de otra forma.
        layers.RESIDUAL_SOURCE,
        layers.CROSS_RESIDUAL_SOURCE,
    }
    rows = mistakes.catalogue(LAB)
    for message in {m.message for m in rows} - single:
        forms = [m.id for m in rows if m.message == message]
        assert len(forms) >= 2, f"«{message}» tiene una sola forma: {forms}"
