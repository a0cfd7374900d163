"""El catálogo del laboratorio 7 nombra ideas, no instancias (issue 23).

Cada idea tiene varias formas con un solo mensaje (una constante del catálogo): así una
forma que el catálogo no tiene se nombra por la huella de sus hermanas. Que cada forma la
detecte y la nombre la prueba visible lo comprueba ``tests/test_mistakes.py``; aquí, sin
ejecutar el cuaderno, la forma del catálogo y los errores que pide el issue.
"""

from collections import Counter

import pytest
import torch

from course import mistakes
from course.mistakes import translation as errors
from course.reference import translation as ref
from course.student import examples
from course.translation import data

CATALOGUE = mistakes.catalogue(errors.LAB)


def test_every_idea_has_at_least_two_forms_with_the_same_message():
    forms = Counter(m.message for m in CATALOGUE)
    single = sorted(message for message, count in forms.items() if count < 2)
    assert not single, f"ideas con una sola forma: {single}"


def test_every_message_is_a_constant_of_the_catalogue():
    constants = {
        value for name, value in vars(errors).items() if name.isupper() and type(value) is str
    }
    loose = sorted({m.message for m in CATALOGUE} - constants)
    assert not loose, f"mensajes escritos en una fila en lugar de una constante: {loose}"


@pytest.mark.parametrize(
    ("exercise", "message"),
    [
        ("ej3_paso", errors.NO_ZERO_GRAD),
        ("ej3_paso", errors.CLIP_LATE),
        ("ej4_evaluacion", errors.NO_GRAD),
        ("ej4_evaluacion", errors.EVAL_MODE),
        ("ej4_evaluacion", errors.PADDING_COUNTED),
        ("ej4_evaluacion", errors.PERPLEXITY_BASE),
        ("ej5_traduccion", errors.TRANSLATE_EVAL),
        ("ej6_bleu", errors.BLEU_SWAPPED),
        ("ej7_archivo", errors.BLEU_SWAPPED),
        ("ej7_archivo", errors.BLEU_GERMAN),
        ("ej7_archivo", errors.BLEU_TOKENS),
        ("ej7_archivo", errors.REFERENCES_WRITTEN),
    ],
)
def test_the_mistakes_of_issue_23_are_catalogued(exercise, message):
    assert any(m.exercise == exercise and m.message == message for m in CATALOGUE)


def test_the_same_idea_spans_exercises_with_one_message():
    """Relleno contado, objetivo tgt_in y tgt_in/tgt_out cambiados: el mismo texto en cada ejercicio."""
    for message in (errors.PADDING_COUNTED, errors.TARGET_TGT_IN, errors.SWAPPED_TARGETS):
        assert len({m.exercise for m in CATALOGUE if m.message == message}) >= 2, message


def test_swapped_bleu_arguments_change_the_score_when_lengths_differ():
    """El caso de la prueba visible: traducciones más cortas que sus referencias."""
    references = ["A dog runs in the park.", "Two children play on the beach."]
    shorter = ["A dog runs in the snow.", "Two children play."]
    right = ref.corpus_bleu(shorter, references)
    for mutant in (errors.bleu_arguments_swapped, errors.bleu_metric_arguments_swapped):
        assert abs(mutant(shorter, references) - right) > 1.0


def _same(first: tuple, second: tuple) -> bool:
    return all(a.shape == b.shape and torch.equal(a, b) for a, b in zip(first, second, strict=True))


@pytest.mark.parametrize(
    ("exercise", "inputs", "reference"),
    [
        (
            "ej2_mascaras",
            (examples.tokens(batch=3, seq=5, seed=4), examples.tokens(batch=3, seq=4, seed=5), 2),
            ref.batch_masks,
        ),
        (
            "ej1_lote",
            (
                [
                    (torch.tensor([1, 5, 6, 2]), torch.tensor([1, 7, 2])),
                    (torch.tensor([1, 5, 2]), torch.tensor([1, 7, 8, 9, 2])),
                ],
                3,
            ),
            ref.collate,
        ),
    ],
)
def test_the_forms_of_an_idea_give_the_same_wrong_output(exercise, inputs, reference):
    """Con otras entradas que las de la prueba visible, cada forma tiene una hermana que da
    exactamente su salida: la huella de una nombra a la otra."""
    groups: dict[str, list[tuple]] = {}
    for mistake in CATALOGUE:
        if mistake.exercise == exercise:
            groups.setdefault(mistake.message, []).append(tuple(mistake.mutant(*inputs)))
    want = tuple(reference(*inputs))
    for message, outputs in groups.items():
        assert not any(_same(output, want) for output in outputs), message
        for i, output in enumerate(outputs):
            siblings = outputs[:i] + outputs[i + 1 :]
            assert any(_same(output, other) for other in siblings), f"{message} (forma {i + 1})"


def test_token_id_bleu_differs_from_the_text_bleu():
    tok = examples.toy_tokenizer()
    pairs = data.toy_pairs(4, seed=3)
    hypotheses = [en.replace("a ", "the ") for _, en in pairs]
    references = [en for _, en in pairs]
    as_ids = [" ".join(map(str, tok.encode(t))) for t in hypotheses]
    ids_ref = [" ".join(map(str, tok.encode(t))) for t in references]
    assert ref.corpus_bleu(as_ids, ids_ref) != pytest.approx(
        ref.corpus_bleu(hypotheses, references)
    )
