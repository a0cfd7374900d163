"""Errores que pasaban las pruebas de los laboratorios 3, 5 y 7 (issue 23): cada uno es un
mutante que sustituye la función o la clase del cuaderno de solución, y la prueba visible
debe fallar con un mensaje en español que nombre el error; la oculta también debe fallar.

Una sola: ``nice -n 19 python -m pytest -q tests/test_labs_357.py -k 03_posicional --todas``
(cada laboratorio ejecuta su cuaderno de solución una vez en este proceso).
"""

import nbformat
import pytest

from course import labs
from course.mistakes import layers, positional, translation

# Los mutantes son los del catálogo (``course.mistakes``): el mismo error que nombran las
# huellas y las pistas de las pruebas ocultas, sin una copia aquí que pueda divergir.
CASES = [
    (
        "03_posicional",
        "ej2_senoidal",
        "sinusoidal_encoding",
        positional.sinusoidal_angle_float32,
        "float32",
    ),
    (
        "03_posicional",
        "ej3_senoidal_exp",
        "sinusoidal_encoding_exp",
        positional.exp_angle_float32,
        "float32",
    ),
    (
        "03_posicional",
        "ej4_posicional",
        "PositionalEncoding",
        positional.PositionalEncodingRefusesMaxLen,
        "T = max_len",
    ),
    (
        "05_capas",
        "ej2_encoder_layer",
        "EncoderLayer",
        layers.EncoderLayerAttentionWithoutDropout,
        "MultiHeadAttention",
    ),
    (
        "05_capas",
        "ej2_encoder_layer",
        "EncoderLayer",
        layers.EncoderLayerFeedForwardWithoutDropout,
        "PositionwiseFeedForward",
    ),
    (
        "05_capas",
        "ej3_decoder_layer",
        "DecoderLayer",
        layers.DecoderLayerAttentionsWithoutDropout,
        "MultiHeadAttention",
    ),
    (
        "05_capas",
        "ej3_decoder_layer",
        "DecoderLayer",
        layers.DecoderLayerFeedForwardWithoutDropout,
        "PositionwiseFeedForward",
    ),
    ("07_multi30k", "ej3_paso", "train_step", translation.step_without_zero_grad, "zero_grad"),
    (
        "07_multi30k",
        "ej3_paso",
        "train_step",
        translation.step_clipping_after_step,
        "antes de optimizer.step",
    ),
    (
        "07_multi30k",
        "ej4_evaluacion",
        "evaluate",
        translation.evaluate_with_gradients,
        "torch.no_grad",
    ),
    (
        "07_multi30k",
        "ej5_traduccion",
        "greedy_translate",
        translation.translate_in_training_mode,
        "model.eval()",
    ),
    (
        "07_multi30k",
        "ej7_archivo",
        "translate_test_set",
        translation.file_without_last_newline,
        "no termina en",
    ),
]


def _failure(solution, grade_id):
    try:
        solution.test(grade_id)
    except Exception as error:  # noqa: BLE001 (cualquier fallo de la celda cuenta)
        return error
    return None


@pytest.mark.slow  # ejecuta los cuadernos de solución
@pytest.mark.parametrize(
    ("lab_id", "exercise", "name", "mutant", "words"),
    CASES,
    ids=[f"{case[0]}-{case[3].__name__}" for case in CASES],
)
def test_the_visible_test_names_the_mistake(solutions, lab_id, exercise, name, mutant, words):
    solution = solutions(lab_id)
    for kind in ("prueba", "oculta"):
        assert _failure(solution, f"{exercise}_{kind}") is None, f"la solución no pasa {kind}"
    with solution.substituted(name, mutant):
        visible = _failure(solution, f"{exercise}_prueba")
        hidden = _failure(solution, f"{exercise}_oculta")
    assert isinstance(visible, AssertionError), f"la prueba visible no lo detecta: {visible!r}"
    assert words in str(visible), f"el mensaje no nombra el error: {visible}"
    assert hidden is not None, "las pruebas ocultas no lo detectan"
    assert isinstance(hidden, AssertionError) and words in str(hidden), hidden


# --- prosa y figuras (issue 23): lo que el texto decía mal no vuelve ----------------------


def _text(lab_id: str, kind: str = "markdown") -> str:
    notebook = nbformat.read(labs.get(lab_id).source, as_version=4)
    return "\n".join(cell.source for cell in notebook.cells if cell.cell_type == kind)


@pytest.mark.parametrize(
    ("lab_id", "kind", "wrong", "right"),
    [
        # laboratorio 3: índices frente a posiciones; max_len frente a «más larga que las vistas»
        (
            "03_posicional",
            "code",
            "entrada de la frase 1",
            "entrada de la primera frase (fila 0 del lote)",
        ),
        (
            "03_posicional",
            "markdown",
            "no\n  extrapola más allá de `max_len`",
            "$PE_1$ es la fila de la\nposición 1",
        ),
        (
            "03_posicional",
            "markdown",
            "extrapola más allá de `max_len`.",
            "las de posiciones más\n  allá de las frases vistas en el entrenamiento",
        ),
        ("03_posicional", "code", "PE_i · PE_j (sinusoidal", r"$PE_i \cdot PE_j$"),
        # laboratorio 5: la figura dibuja el valor tras self.norm
        (
            "05_capas",
            "code",
            "viz.residual_norms(norms, title",
            "viz.residual_norms(norms, finals, title",
        ),
        # laboratorio 7: la promesa del BLEU, las líneas del archivo, last.pt, números
        (
            "07_multi30k",
            "markdown",
            "la misma prueba oculta informa del BLEU",
            "no `check` ni tu devolución",
        ),
        ("07_multi30k", "code", "{len(lines) - 1}", "lines = text.splitlines()"),
        ("07_multi30k", "markdown", "núcleo más rápido", "No hace falta entregar `last.pt`"),
        ("07_multi30k", "code", "['parameters']:,}", "number(metrics['parameters'])"),
        ("07_multi30k", "markdown", "| 1 000 |", "| `test_2016_flickr` | 1000 |"),
    ],
)
def test_the_prose_keeps_the_fixes(lab_id, kind, wrong, right):
    text = _text(lab_id, kind)
    assert wrong not in text, f"vuelve a decir «{wrong}»"
    assert right in _text(lab_id, "code") + _text(lab_id), f"falta «{right}»"


@pytest.mark.parametrize("lab_id", ["03_posicional", "05_capas", "07_multi30k"])
def test_printed_numbers_use_the_course_format(lab_id):
    """Ni ``{x:,}`` (comas de millar) ni ``{x:.1f}`` (punto decimal) en lo que imprimen las
    celdas sin nota; las pruebas de la solución usan ``course.text.number``."""
    notebook = nbformat.read(labs.get(lab_id).source, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type != "code" or cell.metadata.get("nbgrader", {}).get("grade"):
            continue
        for line in cell.source.splitlines():
            if "print(" in line or line.lstrip().startswith('f"'):
                assert ":," not in line and not any(f":.{d}f}}" in line for d in range(6)), line


REVISED = [  # ../shared/REVISION-es.md, «Pendiente (25-11-2026)»: del laboratorio 7
    "Llegó el momento",
    "investigar traducción con imágenes",
    "entrenar (y entrenar el tokenizador)",
    "comprueba su\nsuma SHA-256 y, si no están",
    "sensible a mayúsculas",
    "informar BLEU",
    "que informa la calificación",
    "en media sobre",
    "una pareja de tensores",
    "los orígenes rellenos",
    "dos `float`",
    "flujos de referencias",
    "y si no la CPU",
    "al que el coseno llega a cero",
    "valida mejor",
    "y\nsigue desde la última época",
    "(`NBGRADER_EXECUTION` definido)",
    "si no, ejecuta la receta",
    "prueba rápida",
    "versión\nde prueba",
    "BLEU con haz 5 (prueba)",
    "frases que son correctas",
    "verbos al final en alemán",
    "Un lote de traducción son",
    "núcleo más rápido",
]


@pytest.mark.parametrize("phrase", REVISED)
def test_the_spanish_revision_of_lab_7_stays_applied(phrase):
    assert phrase not in _text("07_multi30k") + _text("07_multi30k", "code"), phrase
