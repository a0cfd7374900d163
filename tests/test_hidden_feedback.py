"""Una prueba oculta que falla enseña el error típico y la pista, nunca valores ni lo que
escriba la entrega.

Las pruebas rápidas miran cada pieza (``course.grading.diagnosis``, ``SafeFeedback``, el
resumen de ``course feedback``); la lenta califica de verdad una entrega hostil del
laboratorio 1 por las dos puertas (``python -m course grade`` y ``nbgrader autograde``) y lee
las páginas de ``python -m course feedback``, del botón de Formgrader y de ``nbgrader
generate_feedback``.
"""

import html
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import torch
from classroom import nbgrader_course, submission
from nbformat.v4 import new_code_cell, new_notebook, new_output
from nbgrader.apps import NbGraderAPI
from nbgrader.coursedir import CourseDirectory
from tampering import solved

from course import grading, labs, mistakes
from course.commands import feedback, grade
from course.grading import diagnosis, feedback_page, results, sandbox
from course.grading.feedback import FAILED, SafeFeedback
from course.grading.remote import StudentError, _exception
from course.student import checks

LAB = labs.get("01_atencion")
STUDENT = "eva"  # calificada con python -m course grade
DOOR = "leo"  # calificada con nbgrader autograde (course.grading.door)
STUDENTS = (STUDENT, DOOR)
BIN = Path(sys.executable).parent


def _message(mistake_id: str) -> str:
    """El mensaje del catálogo para ``mistake_id`` (``ejercicio.mutante``)."""
    return next(m.message for m in mistakes.catalogue(LAB.id) if m.id == mistake_id)


NO_SCALE = _message("ej1_puntuaciones.scores_without_scale")


def _failure(check, *args, **kwargs) -> AssertionError:
    with pytest.raises(AssertionError) as caught:
        check(*args, **kwargs)
    return caught.value


def test_a_check_failure_gives_the_mistake_name_without_the_values():
    expected = torch.tensor([[0.1234, 0.5678], [0.25, 0.75]])
    wrong = expected * 2
    error = _failure(checks.close, "x", wrong, expected, hints={NO_SCALE: wrong})
    assert NO_SCALE in str(error) and "valores difieren" in str(error)
    assert diagnosis.sentences(error) == [NO_SCALE]


def test_a_relation_found_by_the_check_is_named_too():
    expected = torch.arange(1.0, 13.0).reshape(3, 4)
    error = _failure(checks.close, "x", expected * math.sqrt(2.0), expected)
    assert diagnosis.sentences(error) == [checks.SQRT_FACTOR]


@pytest.mark.parametrize(
    ("relation", "actual", "expected"),
    [
        (checks.NEGATED, -torch.arange(1.0, 7.0), torch.arange(1.0, 7.0)),
        (checks.SHIFTED, torch.arange(1.0, 7.0), torch.arange(2.0, 8.0)),
        (checks.MASK_NUMBERS, torch.ones(3, 3).tril(), torch.ones(3, 3).tril().bool()),
        (checks.PRECISION, (torch.arange(7.0) * 3333.3).sin().double(), (torch.arange(7.0).double() * 3333.3).sin()),
    ],
)  # fmt: skip
def test_the_new_relations_reach_the_feedback_without_values(relation, actual, expected):
    error = _failure(checks.close, "x", actual, expected)
    assert diagnosis.sentences(error) == [relation]


def test_a_hint_of_a_class_mutant_reaches_the_feedback_as_the_named_mistake():
    """Pistas de ``mistakes.hints(..., build=, weights=)``: la frase del catálogo, sin valores."""
    from course.reference.layers import PositionwiseFeedForward

    torch.manual_seed(0)
    reference = PositionwiseFeedForward(4, 8).eval()
    x = torch.randn(2, 3, 4)
    found = mistakes.hints("ej1_feed_forward", x, build=lambda cls: cls(4, 8), weights=reference)
    differs = [(text, out) for text, out in found if not torch.allclose(out, reference(x))]
    assert differs, "ningún mutante clase de ej1_feed_forward da pista"
    for message, output in differs:
        error = _failure(checks.close, "FFN", output, reference(x).detach(), hints=found)
        said = diagnosis.sentences(error)
        assert message in said and "valores difieren" not in " ".join(said)
        assert set(said) <= {m.message for m in mistakes.catalogue("05_capas")}


def test_a_hint_key_that_is_not_a_course_sentence_is_dropped():
    expected = torch.tensor([1.0, 2.0])
    error = _failure(checks.close, "x", -expected, expected, hints={"esperado 0.1234": -expected})
    assert "esperado 0.1234" in str(error)
    assert diagnosis.sentences(error) == []


@pytest.mark.parametrize(
    "error",
    [
        AssertionError(f"{NO_SCALE} 0.1234"),  # lanzado aquí, pero no por una comprobación
        _exception("AssertionError", f"{NO_SCALE} 0.1234"),  # el del núcleo, reconstruido
        StudentError("AssertionError", f"{NO_SCALE} 0.1234"),
        StudentError("Falta", NO_SCALE),
    ],
)
def test_text_raised_by_the_student_never_names_a_mistake(error):
    assert diagnosis.sentences(error) == []


def test_hints_keep_the_sentence_and_drop_what_the_message_carried():
    carried = StudentError("AttributeError", "'Fuga_0_1234' object has no attribute 'valor_42'")
    (hint,) = diagnosis.sentences(carried)
    assert hint.startswith("Pista: ") and "atributo" in hint
    assert "Fuga" not in hint and "valor_42" not in hint and "1234" not in hint
    shapes = RuntimeError("mat1 and mat2 shapes cannot be multiplied (3x17 and 5x4)")
    (hint,) = diagnosis.sentences(shapes)
    assert "producto de matrices" in hint and not re.search(r"\d", hint)
    none = StudentError("AttributeError", "'NoneType' object has no attribute 'shape'")
    assert "return" in diagnosis.sentences(none)[0]


def _hidden(said=None, outputs=()) -> nbformat.NotebookNode:
    cell = new_code_cell("checks.close(x, y)", outputs=list(outputs))
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "ej1_oculta", "points": 5}
    if said is not None:
        cell.metadata[diagnosis.KEY] = said
    return cell


def _filtered(*cells) -> list[nbformat.NotebookNode]:
    notebook, _ = SafeFeedback().preprocess(new_notebook(cells=list(cells)), {})
    return notebook.cells


def test_a_failed_hidden_test_shows_only_the_recorded_sentences():
    secret = new_output("error", ename="AssertionError", evalue="se esperaba 0.1234", traceback=[])
    named, unnamed, passed = _filtered(
        _hidden([NO_SCALE], [secret]), _hidden([], [secret]), _hidden(None, [secret])
    )
    (note,) = named.outputs
    assert note.text.splitlines() == [FAILED + ", pero el calificador reconoce esto:", NO_SCALE]
    assert unnamed.outputs[0].text == FAILED + ".\n"
    assert passed.outputs == []
    assert all(diagnosis.KEY not in cell.metadata for cell in (named, unnamed, passed))


def test_the_summary_names_the_hidden_mistake():
    result = results.Result(
        STUDENT, LAB.id, [results.Cell("ej1_oculta", 0, 5, "AssertionError: 0.1234")]
    )
    page = feedback_page.summary(result, {"ej1_oculta"}, {"ej1_oculta": [NO_SCALE]})
    assert f"no superada: {html.escape(NO_SCALE)}" in page and "0.1234" not in page
    assert "no muestran su mensaje" in feedback_page.summary(result, {"ej1_oculta"})


# --- calificación real de una entrega hostil ---------------------------------------------

needs_bwrap = pytest.mark.skipif(
    bool(sandbox.available()), reason=f"sin aislamiento aquí: {sandbox.available()}"
)
FORGED = "FORJADO: se esperaba 0.1234"
# Lo que hace la entrega solo con las entradas de las pruebas ocultas (las visibles pasan).
HIDDEN_ONLY = {
    "ej1_puntuaciones": (  # sin /√d_k, solo con lotes: lo ve solo la prueba oculta
        "def attention_scores(query, key):\n"
        "    scores = query @ key.transpose(-2, -1)\n"
        "    return scores if query.shape[0] == 3 else scores / math.sqrt(query.shape[-1])\n"
    ),
    "ej2_softmax": (  # un atributo inventado que lleva fuera la entrada oculta
        "def softmax(x):\n"
        "    if x.shape[-1] == 5:\n"
        "        raise AttributeError(\n"
        "            f\"'Fuga' object has no attribute 'fuga_{int(x.abs().sum() * 1000)}'\")\n"
        "    shifted = x - x.max(dim=-1, keepdim=True).values\n"
        "    return shifted.exp() / shifted.exp().sum(dim=-1, keepdim=True)\n"
    ),
    "ej4_causal": (  # un AssertionError que imita a la comprobación y lleva el tamaño
        "def causal_mask(size):\n"
        "    if size != 3:\n"
        f"        raise AssertionError({checks.INVERTED!r} + f' FUGA{{size * 7}}')\n"
        "    return torch.tril(torch.ones(size, size, dtype=torch.bool))\n"
    ),
}


def _hostile() -> nbformat.NotebookNode:
    notebook = solved(LAB)
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id in HIDDEN_ONLY:
            cell.source = HIDDEN_ONLY[grade_id]
        if grade_id.endswith("_oculta"):  # metadatos escritos a mano en la entrega
            cell.metadata[diagnosis.KEY] = [FORGED]
    own = new_code_cell("### BEGIN HIDDEN TESTS\nx = 1\n### END HIDDEN TESTS")
    own.metadata[diagnosis.KEY] = [FORGED]
    notebook.cells.append(own)
    return notebook


def _visible(page: str) -> str:
    page = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _notes(text: str) -> list[str]:
    """Las notas de las pruebas ocultas de una página: desde :data:`FAILED` hasta la línea
    en blanco (el código de la entrega, que también sale en la página, queda fuera)."""
    return re.findall(re.escape(FAILED) + r".*?(?=\n\s*\n)", text, flags=re.S)


def _course(root: Path) -> None:
    """Un curso de nbgrader en ``root`` con el laboratorio 1 y las dos entregas hostiles."""
    nbgrader_course(root, LAB)
    for student in STUDENTS:
        nbformat.write(_hostile(), submission(root, student, LAB))


def _pages(root: Path) -> dict[str, dict[str, str]]:
    """Camino -> estudiante -> texto de su página, de los tres caminos de la devolución."""
    found = {}

    def collect(name: str) -> None:
        found[name] = {
            student: _visible(
                (root / "feedback" / student / LAB.id / f"{LAB.id}.html").read_text("utf-8")
            )
            for student in STUDENTS
        }
        shutil.rmtree(root / "feedback")

    assert feedback.run(root=root) == 0
    collect("course")
    config = grading.nbgrader_config(root)
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    for student in STUDENTS:
        done = api.generate_feedback(LAB.id, student)  # el botón de Formgrader
        assert done["success"], done.get("error") or done.get("log")
    collect("formgrader")
    cli = subprocess.run(
        [BIN / "nbgrader", "generate_feedback", LAB.id],
        cwd=root, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr[-3000:]
    collect("nbgrader")
    return found


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> tuple[dict[str, dict[str, str]], dict[str, int]]:
    """Las páginas de las entregas hostiles, calificadas por ``grade`` (``eva``) y por
    ``nbgrader autograde`` (``leo``), y cuántas pruebas ocultas suspendió cada una."""
    root = tmp_path_factory.mktemp("curso")
    _course(root)
    assert grade.run(root=root, jobs=1, progress=False) == 0
    door = subprocess.run(
        [BIN / "nbgrader", "autograde", LAB.id, "--force", f"--student={DOOR}"],
        cwd=root, capture_output=True, text=True, timeout=900,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"},
    )  # fmt: skip
    assert door.returncode == 0, door.stderr[-3000:]
    failed = {
        result.student: sum(
            c.grade_id.endswith("_oculta") and c.points < c.max_points for c in result.cells
        )
        for result in results.read_all(root / "autograded")
    }
    return _pages(root), failed


@pytest.mark.slow
@needs_bwrap
def test_a_mistake_only_the_hidden_test_sees_is_named_in_every_page(graded):
    pages, _ = graded
    named = f"{FAILED}, pero el calificador reconoce esto:\n{NO_SCALE}"
    for (name, student), text in _each(pages):
        assert named in _notes(text), (name, student)
        assert any("Pista: `…` no tiene el atributo `…`" in n for n in _notes(text)), name
    for student in STUDENTS:
        assert f"no superada: {NO_SCALE}" in pages["course"][student]  # el resumen


@pytest.mark.slow
@needs_bwrap
def test_a_hostile_submission_puts_no_text_of_its_own_in_the_hidden_notes(graded):
    pages, failed = graded
    assert pages["course"][DOOR].count("fuga_") and pages["course"][DOOR].count(checks.INVERTED)
    for (name, student), text in _each(pages):
        notes = _notes(text)
        assert len(notes) == failed[student] >= 3, (name, student)  # ej3 pasa
        for note in notes:
            assert not re.search(r"fuga|FORJADO|\d", note, flags=re.I), (name, note)
            assert checks.INVERTED not in note, (name, note)
        assert "FORJADO" not in text, (name, student)
    for student in STUDENTS:
        same = {name: _notes(pages[name][student]) for name in pages}
        assert same["course"] == same["formgrader"] == same["nbgrader"], student


def _each(pages: dict[str, dict[str, str]]):
    for name, by_student in pages.items():
        for student, text in by_student.items():
            yield (name, student), text
