"""``mistakes.hints`` con mutantes clase: se construyen, reciben los pesos de la referencia
y se llaman en su modo; los que tienen otros parámetros o están apartados no dan pista.

Con un catálogo de prueba (no el del curso), para no depender de cómo crece.
"""

import pytest
import torch
from torch import nn

from course import mistakes
from course.student import checks

EXERCISE = "ej9_escala"


class Scale(nn.Module):
    """La «referencia» de prueba: una capa lineal."""

    def __init__(self, size: int):
        super().__init__()
        self.linear = nn.Linear(size, size)

    def forward(self, x):
        return self.linear(x)


class ScaleDoubled(Scale):
    def forward(self, x):
        return 2.0 * self.linear(x)


class ScaleWithExtraLayer(Scale):
    def __init__(self, size: int):
        super().__init__(size)
        self.extra = nn.Linear(size, size)

    def forward(self, x):
        return self.extra(self.linear(x))


class ScaleReportsMode(Scale):
    def forward(self, x):
        return torch.full_like(x, float(self.training))


class ScaleWithNoise(Scale):
    def forward(self, x):
        return self.linear(x) + torch.randn_like(x)


class ScaleBroken(Scale):
    def forward(self, x):
        raise RuntimeError("se rompe")


def scale_as_function(x):
    return -x


def scale_negated_after(x):
    """Otra forma de la misma idea (el signo), con otra salida."""
    return 1.0 - x


ROWS = [
    (ScaleDoubled, "¿Multiplicas por dos?"),
    (ScaleWithExtraLayer, "¿Una capa de más?"),
    (ScaleReportsMode, "modo"),
    (ScaleWithNoise, "¿Sumas ruido?"),
    (ScaleBroken, "¿Se rompe?"),
    (scale_as_function, "¿Cambias el signo?"),
    (scale_negated_after, "¿Cambias el signo?"),
]


@pytest.fixture
def catalogue(monkeypatch):
    fake = mistakes.for_exercise(EXERCISE, "Scale", *ROWS)
    monkeypatch.setattr(mistakes, "catalogue", lambda lab_id: fake)
    return fake


@pytest.fixture
def reference():
    torch.manual_seed(0)
    return Scale(4)


def test_a_class_mutant_gets_the_reference_weights_and_is_named(catalogue, reference):
    x = torch.randn(3, 4)
    pairs = mistakes.hints(EXERCISE, x, build=lambda cls: cls(4), weights=reference)
    found = dict(pairs)
    assert torch.allclose(found["¿Multiplicas por dos?"], 2.0 * reference(x))
    assert not found["¿Multiplicas por dos?"].requires_grad  # sin gradientes
    assert any(t == "¿Cambias el signo?" and torch.equal(out, -x) for t, out in pairs)  # funciones


def test_a_mutant_with_other_parameters_or_that_breaks_gives_no_hint(catalogue, reference):
    found = dict(
        mistakes.hints(EXERCISE, torch.randn(3, 4), build=lambda c: c(4), weights=reference)
    )
    assert "¿Una capa de más?" not in found
    assert "¿Se rompe?" not in found
    assert "¿Multiplicas por dos?" in found


def test_the_mutant_runs_in_the_mode_of_the_reference(catalogue, reference):
    x = torch.randn(3, 4)
    build = lambda cls: cls(4).train()  # noqa: E731 (la construcción deja el modo por defecto)
    assert torch.all(
        dict(mistakes.hints(EXERCISE, x, build=build, weights=reference.eval()))["modo"] == 0
    )
    assert torch.all(
        dict(mistakes.hints(EXERCISE, x, build=build, weights=reference.train()))["modo"] == 1
    )


def test_excluded_class_mutants_give_no_hint(catalogue, reference):
    doubled = {m.id for m in catalogue if m.mutant is ScaleDoubled}
    with mistakes.excluding(doubled):
        found = dict(
            mistakes.hints(EXERCISE, torch.randn(3, 4), build=lambda c: c(4), weights=reference)
        )
    assert "¿Multiplicas por dos?" not in found
    assert "¿Sumas ruido?" in found


def test_without_build_only_function_mutants_run(catalogue, reference):
    found = mistakes.hints(EXERCISE, torch.randn(3, 4))
    assert {text for text, _ in found} == {"¿Cambias el signo?"}
    found = mistakes.hints(EXERCISE, torch.randn(3, 4), build=lambda c: c(4))  # sin pesos
    assert {text for text, _ in found} == {"¿Cambias el signo?"}


def test_hints_leave_the_random_state_of_the_test_alone(catalogue, reference):
    x = torch.randn(3, 4)
    before = torch.get_rng_state()
    mistakes.hints(EXERCISE, x, build=lambda cls: cls(4), weights=reference)
    assert torch.equal(torch.get_rng_state(), before)


def test_each_form_of_an_idea_gives_its_pair_and_any_of_them_names_it(catalogue):
    x = torch.randn(3, 4)
    found = mistakes.hints(EXERCISE, x)
    outputs = [out for text, out in found if text == "¿Cambias el signo?"]
    assert len(outputs) == 2 and not torch.allclose(outputs[0], outputs[1])
    for student in (-x, 1.0 - x):  # la segunda forma no queda tapada por la primera
        with pytest.raises(AssertionError) as raised:
            checks.close("x", student, x, hints=found)
        assert str(raised.value).count("¿Cambias el signo?") == 1
        assert raised.value.diagnosis == "¿Cambias el signo?"


def test_hints_given_as_a_function_are_computed_only_when_the_values_differ():
    calls = []

    def hints():
        calls.append(1)
        return [("¿Cambias el signo?", -torch.ones(3))]

    checks.close("x", torch.ones(3), torch.ones(3), hints=hints)
    assert calls == []
    with pytest.raises(AssertionError, match="¿Cambias el signo?"):
        checks.close("x", -torch.ones(3), torch.ones(3), hints=hints)
    assert calls == [1]  # una sola vez, aunque el mensaje pase por el diagnóstico


def test_hints_that_break_leave_the_failure_as_it_was():
    def broken():
        raise RuntimeError("la pista se rompe")

    with pytest.raises(AssertionError, match="valores difieren") as raised:
        checks.close("x", -torch.ones(3), torch.ones(3), hints=broken)
    assert "se rompe" not in str(raised.value)


def test_seed_is_set_right_before_the_mutant_runs(catalogue, reference):
    x = torch.randn(3, 4)
    found = mistakes.hints(EXERCISE, x, build=lambda cls: cls(4), weights=reference, seed=7)
    torch.manual_seed(7)
    noise = torch.randn_like(x)
    with torch.no_grad():
        assert torch.allclose(dict(found)["¿Sumas ruido?"], reference(x) + noise)


def test_run_builds_what_each_mutant_needs(catalogue, reference):
    x = torch.randn(3, 4)

    def run(mutant):
        if not isinstance(mutant, type):
            return mutant(2.0 * x)
        module = mutant(4)
        module.load_state_dict(reference.state_dict())
        return module.linear.weight.sum() + module(x).sum()

    found = mistakes.hints(EXERCISE, run=run)
    texts = [text for text, _ in found]
    assert "¿Una capa de más?" not in texts and "¿Se rompe?" not in texts
    assert any(torch.allclose(out, -2.0 * x) for text, out in found if text == "¿Cambias el signo?")
    doubled = dict(found)["¿Multiplicas por dos?"]
    with torch.no_grad():
        assert torch.allclose(doubled, reference.linear.weight.sum() + 2.0 * reference(x).sum())


def test_active_leaves_out_the_held_out_mistakes(catalogue):
    negated = {m.id for m in catalogue if m.mutant is scale_as_function}
    assert mistakes.active(catalogue) == catalogue
    with mistakes.excluding(negated):
        kept = mistakes.active(catalogue)
        found = mistakes.hints(EXERCISE, torch.randn(3, 4))
    assert [m.id for m in kept] == [m.id for m in catalogue if m.id not in negated]
    assert len(found) == 1  # queda la otra forma de la idea
