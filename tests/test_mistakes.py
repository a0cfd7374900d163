"""El catálogo de errores típicos: cada mutante lo detecta la prueba visible, que lo nombra,
y también las ocultas; las huellas están al día.

Cada laboratorio ejecuta su cuaderno de solución una sola vez en este proceso; para cada
error se sustituye el nombre del cuaderno por el mutante y se ejecutan sus celdas de
prueba. Una sola: ``nice -n 19 python -m pytest -q tests/test_mistakes.py -k 01_atencion``.
"""

import json
import math
from collections import Counter

import nbformat
import pytest
import torch

from course import grading, labs, mistakes
from course.grading import sandbox
from course.student import checks, examples, hints

CATALOGUED = [lab_id for lab_id in labs.LABS if mistakes.catalogue(lab_id)]
CASES = [
    pytest.param(lab_id, mistake, id=f"{lab_id}-{mistake.exercise}-{mistake.mutant.__name__}")
    for lab_id in CATALOGUED
    for mistake in mistakes.catalogue(lab_id)
]
RESULTS: dict[str, Counter] = {}


@pytest.fixture(scope="module")
def solutions(solutions, request):
    """Los cuadernos de solución de la sesión (``solutions`` de conftest.py).

    Al terminar escribe en la terminal (también sin ``-s``) cuántos errores detectan y
    nombran las pruebas visibles y las ocultas de cada laboratorio.
    """
    yield solutions
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled():
        for lab_id, counts in sorted(RESULTS.items()):
            print(f"\n{lab_id}: {_summary(counts)}")
        if RESULTS:
            print(f"\n{_totals(sum(RESULTS.values(), Counter()), len(RESULTS))}")


def _summary(counts: Counter) -> str:
    def share(key: str, total: str = "total") -> str:
        return f"{counts[key]} ({100 * counts[key] / max(counts[total], 1):.0f} %)"

    return (
        f"{counts['total']} errores · visibles: detectan {share('visible')}, nombran"
        f" {share('named')} · ocultas: detectan {share('hidden')}, nombran {share('hidden named')}"
        f"\n  mitad de ajuste: {counts['tuning']} · visibles nombran"
        f" {share('tuning named', 'tuning')} · ocultas nombran"
        f" {share('tuning hidden named', 'tuning')}"
        f"\n  mitad apartada (sin sus huellas ni sus mutantes): {counts['held out']} · visibles"
        f" detectan {share('held out visible', 'held out')}, nombran"
        f" {share('held out named', 'held out')} (con las relaciones de checks:"
        f" {share('held out related', 'held out')}) · ocultas detectan"
        f" {share('held out hidden', 'held out')}, nombran"
        f" {share('held out hidden named', 'held out')} (con las relaciones:"
        f" {share('held out hidden related', 'held out')})"
    )


def _totals(counts: Counter, labs_run: int) -> str:
    """Una línea con la suma de los laboratorios ejecutados, para quien integra."""

    def share(key: str, total: str) -> str:
        return f"{counts[key]}/{counts[total]} ({100 * counts[key] / max(counts[total], 1):.0f} %)"

    return (
        f"TOTAL ({labs_run} laboratorio{'s' * (labs_run != 1)}, {counts['total']} errores):"
        " visibles detectan"
        f" {share('visible', 'total')}, nombran {share('named', 'total')} · ocultas detectan"
        f" {share('hidden', 'total')}, nombran {share('hidden named', 'total')} · apartada:"
        f" visibles nombran {share('held out named', 'held out')} (con relaciones"
        f" {share('held out related', 'held out')}), ocultas nombran"
        f" {share('held out hidden named', 'held out')} (con relaciones"
        f" {share('held out hidden related', 'held out')})"
    )


def _failure(solution: mistakes.Solution, grade_id: str) -> BaseException | None:
    try:
        solution.test(grade_id)
    except Exception as error:  # noqa: BLE001 (cualquier fallo de la celda cuenta)
        return error
    return None


@pytest.mark.parametrize("lab_id", CATALOGUED)
def test_the_solution_passes_every_test_cell(solutions, lab_id):
    solution = solutions(lab_id)
    exercises = {m.exercise for m in mistakes.catalogue(lab_id)}
    for exercise in sorted(exercises):
        for kind in ("prueba", "oculta"):
            assert _failure(solution, f"{exercise}_{kind}") is None, f"{exercise}_{kind}"


@pytest.mark.parametrize(("lab_id", "mistake"), CASES)
def test_the_visible_test_names_the_mistake_and_the_hidden_one_fails(solutions, lab_id, mistake):
    solution = solutions(lab_id)
    counts = RESULTS.setdefault(lab_id, Counter())
    counts["total"] += 1
    with solution.substituted(mistake.replaces, mistake.mutant):
        visible = _failure(solution, f"{mistake.exercise}_prueba")
        hidden = _failure(solution, f"{mistake.exercise}_oculta")
    counts["visible"] += visible is not None
    counts["named"] += isinstance(visible, AssertionError) and mistake.message in str(visible)
    counts["hidden"] += hidden is not None
    counts["hidden named"] += isinstance(hidden, AssertionError) and mistake.message in str(hidden)
    if mistake.held_out:
        unseen, unseen_hidden = _held_out_failures(solution, lab_id, mistake)
        counts["held out"] += 1
        counts["held out visible"] += unseen is not None
        counts["held out hidden"] += unseen_hidden is not None
        counts["held out named"] += _names(unseen, mistake)
        counts["held out related"] += _names(unseen, mistake) or _relates(unseen)
        counts["held out hidden named"] += _names(unseen_hidden, mistake)
        counts["held out hidden related"] += _names(unseen_hidden, mistake) or _relates(
            unseen_hidden
        )
    else:
        counts["tuning"] += 1
        counts["tuning named"] += _names(visible, mistake)
        counts["tuning hidden named"] += _names(hidden, mistake)
    assert visible is not None, "la prueba visible no detecta el error"
    assert isinstance(visible, AssertionError), f"la prueba visible se rompe: {visible!r}"
    assert mistake.message in str(visible), f"el mensaje no nombra el error: {visible}"
    assert hidden is not None, "las pruebas ocultas no detectan el error"
    # Una pista debe casar con la salida: ningún mensaje nombra la idea de otro error, ni con
    # todo el catálogo ni sin la mitad apartada (ahí el diagnóstico tira de relaciones).
    assert not _other_ideas(lab_id, mistake, visible), f"nombra otra causa: {visible}"
    if mistake.held_out:
        assert not _other_ideas(lab_id, mistake, unseen), f"sin su huella, otra causa: {unseen}"
    # Lo que no es un AssertionError de las comprobaciones lleva la línea de su tipo, o una más
    # concreta: la tabla de course.student.hints cubre lo que lanzan los mutantes.
    for failure in (visible, hidden):
        if not isinstance(failure, AssertionError):
            line = hints.hint(type(failure).__name__, str(failure))
            assert line not in (None, hints.PREFIX + hints.GENERIC), f"sin pista: {failure!r}"


def _held_out_failures(solution, lab_id: str, mistake) -> tuple:
    """Fallos visible y oculto de ``mistake`` sin las huellas ni los mutantes de la mitad
    apartada: como si fuera un error que el catálogo no conoce."""
    held_out = {m.id for m in mistakes.catalogue(lab_id) if m.held_out}
    with mistakes.excluding(held_out), solution.substituted(mistake.replaces, mistake.mutant):
        return (
            _failure(solution, f"{mistake.exercise}_prueba"),
            _failure(solution, f"{mistake.exercise}_oculta"),
        )


def _other_ideas(lab_id: str, mistake, failure: BaseException | None) -> list[str]:
    """Los mensajes del catálogo de ``lab_id`` que nombran otra idea y están en ``failure``.

    Otra idea es otro mensaje que no forma parte del de ``mistake`` (las formas de una idea
    comparten el suyo; un mensaje de la prueba visible puede añadir un prefijo al del catálogo).
    """
    text = str(failure) if failure is not None else ""
    messages = {m.message for m in mistakes.catalogue(lab_id)}
    return sorted(m for m in messages if m not in mistake.message and m in text)


def _names(failure: BaseException | None, mistake) -> bool:
    return isinstance(failure, AssertionError) and mistake.message in str(failure)


def _relates(failure: BaseException | None) -> bool:
    """El mensaje nombra una relación con lo esperado (``checks.RELATIONS``), no el error."""
    text = str(failure) if isinstance(failure, AssertionError) else ""
    return any(relation in text for relation in checks.RELATIONS)


@pytest.mark.parametrize("lab_id", CATALOGUED)
def test_fingerprints_are_fresh(solutions, lab_id):
    path = mistakes.FINGERPRINTS / f"{lab_id}.json"
    assert path.exists(), f"faltan las huellas: python -m course build {lab_id}"
    stored = json.loads(path.read_text(encoding="utf-8"))["fingerprints"]
    fresh = mistakes.fingerprints(lab_id, solutions(lab_id))  # el cuaderno de las otras pruebas
    stale = f"huellas desfasadas: python -m course build {lab_id}"
    assert [_without_values(e) for e in stored] == [_without_values(e) for e in fresh], stale
    for old, new in zip(stored, fresh, strict=True):
        assert all(map(_same, old["values"], new["values"])), stale


def test_fingerprints_hold_only_wrong_values():
    """Nada de referencias: cada huella es la salida de un mutante donde la prueba falla."""
    for path in sorted(mistakes.FINGERPRINTS.glob("*.json")):
        body = json.loads(path.read_text(encoding="utf-8"))
        assert body["lab"] == path.stem and body["lab"] in CATALOGUED
        messages = {m.message for m in mistakes.catalogue(body["lab"])}
        ids = {m.id for m in mistakes.catalogue(body["lab"])}
        for entry in body["fingerprints"]:
            assert set(entry) == {
                "exercise",
                "mistake",
                "message",
                "check",
                "shape",
                "dtype",
                "values",
                "atol",
                "rtol",
            }
            assert entry["message"] in messages
            assert entry["mistake"] in ids
            assert len(entry["values"]) == math.prod(entry["shape"])


def test_no_fingerprint_names_a_mistake_of_another_lab():
    """El diagnóstico no sabe en qué laboratorio está: una huella no debe coincidir con la
    de otro laboratorio bajo el mismo nombre de comprobación."""
    entries = [
        (path.stem, entry)
        for path in sorted(mistakes.FINGERPRINTS.glob("*.json"))
        for entry in json.loads(path.read_text(encoding="utf-8"))["fingerprints"]
    ]
    for lab_a, a in entries:
        for lab_b, b in entries:
            if lab_a < lab_b and a["check"] == b["check"]:
                clash = mistakes._matches(a, b) or mistakes._matches(b, a)
                assert not clash, f"«{a['check']}»: {lab_a} y {lab_b} dan la misma huella"


def _without_values(entry: dict) -> dict:
    return {key: value for key, value in entry.items() if key != "values"}


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def test_the_sandboxed_course_has_the_fingerprints_but_no_catalogue(tmp_path):
    copy = sandbox.course_copy(labs.get("01_atencion"), tmp_path)
    assert (copy / "mistakes" / "__init__.py").exists()
    shipped = sorted(p.name for p in (copy / "mistakes" / "fingerprints").iterdir())
    assert shipped == sorted(p.name for p in mistakes.FINGERPRINTS.glob("*.json")) != []
    assert sorted(p.name for p in (copy / "mistakes").glob("*.py")) == ["__init__.py"]


def test_hints_run_the_mutants_of_an_exercise_on_other_inputs():
    query, key = torch.randn(2, 5, 8), torch.randn(2, 6, 8)
    found = mistakes.hints("ej1_puntuaciones", query, key)
    unscaled = [out for text, out in found if text == "¿Falta dividir entre √d_k?"]
    assert any(torch.allclose(out, query @ key.transpose(-2, -1)) for out in unscaled)
    catalogued = [m for m in mistakes.catalogue("01_atencion") if m.exercise == "ej1_puntuaciones"]
    # Una pareja por forma: dos formas del mismo error comparten mensaje, no salida.
    assert {text for text, _ in found} == {m.message for m in catalogued}
    assert len(catalogued) >= len(found) > len({m.message for m in catalogued})
    value = torch.randn(2, 6, 3)
    weights = dict(mistakes.hints("ej5_atencion", query, key, value, pick=1))
    assert weights["¿Devuelves la pareja en el orden (salida, pesos)?"].shape == (2, 5, 3)
    with pytest.raises(KeyError, match="ej9_no_existe"):
        mistakes.hints("ej9_no_existe", query)


def test_a_mistake_is_fingerprinted_also_in_the_exercises_that_use_it():
    """Las puntuaciones sin √d_k nombradas dentro de la atención completa (ejercicio 5)."""
    path = mistakes.FINGERPRINTS / "01_atencion.json"
    entries = json.loads(path.read_text(encoding="utf-8"))["fingerprints"]
    propagated = {e["mistake"] for e in entries if e["exercise"] == "ej5_atencion"}
    assert "ej1_puntuaciones.scores_without_scale" in propagated
    assert "ej2_softmax.softmax_over_first_axis" in propagated


def test_excluding_hides_mistakes_from_diagnose_and_hints():
    query, key = torch.randn(2, 5, 8), torch.randn(2, 6, 8)
    unscaled = {m.id for m in mistakes.catalogue("01_atencion") if "without_scale" in m.id}
    assert len(unscaled) >= 2
    message = "¿Falta dividir entre √d_k?"
    assert message in dict(mistakes.hints("ej1_puntuaciones", query, key))
    toy_q, toy_k, _ = examples.toy_qkv()
    wrong = toy_q @ toy_k.transpose(-2, -1)
    assert mistakes.diagnose("puntuaciones[0]", wrong[0]) == message
    with mistakes.excluding(unscaled):
        assert message not in dict(mistakes.hints("ej1_puntuaciones", query, key))
        assert mistakes.diagnose("puntuaciones[0]", wrong[0]) is None
    assert mistakes.diagnose("puntuaciones[0]", wrong[0]) == message


def test_the_held_out_half_is_fixed_and_about_half():
    every = [m for lab_id in CATALOGUED for m in mistakes.catalogue(lab_id)]
    held_out = [m.id for m in every if m.held_out]
    assert held_out == [
        m.id for lab_id in CATALOGUED for m in mistakes.catalogue(lab_id) if m.held_out
    ]
    assert 0.35 < len(held_out) / len(every) < 0.65
    assert len({m.id for m in every}) == len(every), "dos errores con el mismo id"


@pytest.mark.slow
def test_grading_names_the_mistake_and_adds_spanish_hints(tmp_path):
    """Calificación real: la prueba visible nombra el error (proceso de calificación), el
    núcleo aislado tiene las huellas y la pista de PyTorch, y una celda de prueba que falla
    con un error conocido lleva su pista."""
    lab = labs.get("01_atencion")
    notebook = nbformat.read(lab.source, 4)
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in notebook.cells}
    cells[
        "ej1_puntuaciones"
    ].source = "def attention_scores(query, key):\n    return query @ key.transpose(-2, -1)"
    cells[
        "ej4_causal"
    ].source = (
        "def causal_mask(size):\n    return torch.ones(size, size) @ torch.ones(size + 1, size)"
    )
    in_kernel = nbformat.v4.new_code_cell(
        'q, k, _ = examples.toy_qkv()\nchecks.close("puntuaciones[0]", attention_scores(q, k)[0],'
        " torch.tensor([1.0, 1.0, 2.0, 1.0]) / math.sqrt(3))"
    )
    shapes = nbformat.v4.new_code_cell("torch.ones(3, 4) @ torch.ones(5, 6)")
    after = notebook.cells.index(cells["ej1_puntuaciones"]) + 1
    notebook.cells[after:after] = [in_kernel, shapes]
    path = tmp_path / f"{lab.id}.ipynb"
    nbformat.write(notebook, path)

    result = grading.grade_notebook(path, lab, keep=tmp_path / "calificado.ipynb")

    messages = {c.grade_id: c.message or "" for c in result.cells}
    assert "¿Falta dividir entre √d_k?" in messages["ej1_puntuaciones_prueba"]
    hinted = _outputs(tmp_path / "calificado.ipynb", "ej4_causal_prueba")
    assert "Pista: producto de matrices con formas 3x3 y 4x3" in hinted
    graded = nbformat.read(tmp_path / "calificado.ipynb", 4)
    kernel_text = [_text(c) for c in graded.cells if c.source in (in_kernel.source, shapes.source)]
    assert "¿Falta dividir entre √d_k?" in kernel_text[0]
    assert "mat1 and mat2 shapes cannot be multiplied" in kernel_text[1]
    assert "Pista: producto de matrices con formas 3x4 y 5x6" in kernel_text[1]


def _text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts += [output.get("text", ""), output.get("evalue", ""), *output.get("traceback", [])]
    return "\n".join(parts)


def _outputs(path, grade_id: str) -> str:
    notebook = nbformat.read(path, 4)
    return "\n".join(
        _text(c)
        for c in notebook.cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id
    )
