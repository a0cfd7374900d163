"""``mistakes.hints`` con mutantes clase: se construyen, reciben los pesos de la referencia
y se llaman en su modo; los que tienen otros parámetros o están apartados no dan pista.

Con un catálogo de prueba (no el del curso), para no depender de cómo crece.
"""

import pytest
import torch
from torch import nn

from course import mistakes

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


ROWS = [
    (ScaleDoubled, "¿Multiplicas por dos?"),
    (ScaleWithExtraLayer, "¿Una capa de más?"),
    (ScaleReportsMode, "modo"),
    (ScaleWithNoise, "¿Sumas ruido?"),
    (ScaleBroken, "¿Se rompe?"),
    (scale_as_function, "¿Cambias el signo?"),
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
    found = mistakes.hints(EXERCISE, x, build=lambda cls: cls(4), weights=reference)
    assert torch.allclose(found["¿Multiplicas por dos?"], 2.0 * reference(x))
    assert not found["¿Multiplicas por dos?"].requires_grad  # sin gradientes
    assert torch.equal(found["¿Cambias el signo?"], -x)  # las funciones, como siempre


def test_a_mutant_with_other_parameters_or_that_breaks_gives_no_hint(catalogue, reference):
    found = mistakes.hints(EXERCISE, torch.randn(3, 4), build=lambda cls: cls(4), weights=reference)
    assert "¿Una capa de más?" not in found
    assert "¿Se rompe?" not in found
    assert "¿Multiplicas por dos?" in found


def test_the_mutant_runs_in_the_mode_of_the_reference(catalogue, reference):
    x = torch.randn(3, 4)
    build = lambda cls: cls(4).train()  # noqa: E731 (la construcción deja el modo por defecto)
    assert torch.all(
        mistakes.hints(EXERCISE, x, build=build, weights=reference.eval())["modo"] == 0
    )
    assert torch.all(
        mistakes.hints(EXERCISE, x, build=build, weights=reference.train())["modo"] == 1
    )


def test_excluded_class_mutants_give_no_hint(catalogue, reference):
    doubled = {m.id for m in catalogue if m.mutant is ScaleDoubled}
    with mistakes.excluding(doubled):
        found = mistakes.hints(EXERCISE, torch.randn(3, 4), build=lambda c: c(4), weights=reference)
    assert "¿Multiplicas por dos?" not in found
    assert "¿Sumas ruido?" in found


def test_without_build_only_function_mutants_run(catalogue, reference):
    found = mistakes.hints(EXERCISE, torch.randn(3, 4))
    assert list(found) == ["¿Cambias el signo?"]
    found = mistakes.hints(EXERCISE, torch.randn(3, 4), build=lambda c: c(4))  # sin pesos
    assert list(found) == ["¿Cambias el signo?"]


def test_hints_leave_the_random_state_of_the_test_alone(catalogue, reference):
    x = torch.randn(3, 4)
    before = torch.get_rng_state()
    mistakes.hints(EXERCISE, x, build=lambda cls: cls(4), weights=reference)
    assert torch.equal(torch.get_rng_state(), before)
