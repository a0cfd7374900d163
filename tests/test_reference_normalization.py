"""Referencia del laboratorio 2 frente a ``nn.LayerNorm``, ``F.layer_norm`` y ``nn.RMSNorm``."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from course.reference.normalization import (
    AnnotatedLayerNorm,
    Dropout,
    LayerNorm,
    ResidualConnection,
    RMSNorm,
)
from course.student import checks, examples

D_MODELS = [2, 4, 16]


def _randomize(module: nn.Module, seed: int) -> nn.Module:
    """Pesos aleatorios (no 1 y 0) para que un peso o sesgo mal aplicado se note."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=generator))
    return module


@pytest.mark.parametrize("d_model", D_MODELS)
def test_layer_norm_matches_torch_layer_norm(d_model):
    x = examples.randn(2, 3, d_model, seed=d_model) * 3 + 1
    expected = _randomize(nn.LayerNorm(d_model), seed=1).eval()
    actual = LayerNorm(d_model).eval()
    checks.load_reference("LayerNorm", actual, expected)
    checks.close("salida", actual(x), expected(x))
    checks.close("salida", actual(x), F.layer_norm(x, (d_model,), expected.weight, expected.bias))


def test_layer_norm_default_eps_is_torch_default():
    x = torch.tensor([[0.0, 2e-3]])  # varianza 1e-6, comparable con eps
    checks.close("salida", LayerNorm(2)(x), F.layer_norm(x, (2,)))


@pytest.mark.parametrize("d_model", D_MODELS)
def test_layer_norm_output_has_mean_zero_and_variance_one(d_model):
    x = examples.randn(3, 5, d_model, seed=2) * 10 - 4
    y = LayerNorm(d_model)(x)
    var_x = x.var(dim=-1, unbiased=False)
    checks.close("media", y.mean(dim=-1), torch.zeros(3, 5))
    # var(y) = var(x) / (var(x) + eps): 1 salvo por el efecto de eps
    checks.close("varianza", y.var(dim=-1, unbiased=False), var_x / (var_x + 1e-5))
    assert (y.var(dim=-1, unbiased=False) > 0.99).all()


@pytest.mark.parametrize("d_model", [2, 4, 16])
def test_annotated_layer_norm_is_torch_layer_norm_times_unbiased_factor(d_model):
    x = examples.randn(2, 3, d_model, seed=5)
    expected = F.layer_norm(x, (d_model,), eps=0.0) * math.sqrt((d_model - 1) / d_model)
    checks.close("salida", AnnotatedLayerNorm(d_model, eps=0.0)(x), expected)


def test_annotated_layer_norm_adds_eps_to_the_standard_deviation():
    x = examples.randn(2, 3, 4, seed=7)
    expected = (x - x.mean(dim=-1, keepdim=True)) / (x.std(dim=-1, keepdim=True) + 0.5)
    checks.close("salida", AnnotatedLayerNorm(4, eps=0.5)(x), expected)


def test_annotated_layer_norm_differs_from_torch_layer_norm():
    x = examples.randn(2, 3, 4, seed=6)
    diff = (AnnotatedLayerNorm(4)(x) - nn.LayerNorm(4)(x)).abs().max()
    assert diff > 0.1, "con D = 4 la variante insesgada debe diferir claramente"


def test_annotated_layer_norm_has_layer_norm_parameter_names():
    assert set(AnnotatedLayerNorm(4).state_dict()) == set(nn.LayerNorm(4).state_dict())


@pytest.mark.parametrize(("d_model", "eps"), [(2, 1e-5), (4, 1e-6), (16, 1e-5)])
def test_rms_norm_matches_torch_rms_norm(d_model, eps):
    x = examples.randn(2, 3, d_model, seed=d_model + 1) * 2 + 1
    expected = _randomize(nn.RMSNorm(d_model, eps=eps), seed=2).eval()
    actual = RMSNorm(d_model, eps=eps).eval()
    checks.load_reference("RMSNorm", actual, expected)
    checks.close("salida", actual(x), expected(x))


def test_rms_norm_puts_eps_inside_the_root():
    x = examples.randn(2, 3, 4, seed=8) * 1e-3  # mean(x²) ~ 1e-6, comparable con eps
    checks.close("salida", RMSNorm(4, eps=1e-6)(x), nn.RMSNorm(4, eps=1e-6)(x))
    checks.close("eps por defecto", RMSNorm(4)(x), nn.RMSNorm(4, eps=1e-5)(x))


def test_dropout_rejects_invalid_probabilities():
    for p in (-0.1, 1.0, 1.5):
        with pytest.raises(ValueError, match="dropout"):
            Dropout(p)


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_dropout_keep_rate_and_scale(p):
    torch.manual_seed(0)
    x = torch.ones(200_000)
    y = Dropout(p).train()(x)
    kept = y != 0
    n = x.numel()
    bound = 5 * math.sqrt(n * p * (1 - p))  # cinco desviaciones típicas de la binomial
    assert abs(kept.sum().item() - n * (1 - p)) < bound
    checks.close("elementos conservados", y[kept], torch.full_like(y[kept], 1 / (1 - p)))
    assert abs(y.mean().item() - 1.0) < 5 * math.sqrt(p / ((1 - p) * n))


def test_dropout_is_controlled_by_the_global_seed():
    x = examples.randn(4, 8, seed=3)
    torch.manual_seed(123)
    first = Dropout(0.5)(x)
    torch.manual_seed(123)
    checks.close("mismo resultado con la misma semilla", Dropout(0.5)(x), first)


def test_dropout_is_identity_in_eval_mode_and_with_p_zero():
    x = examples.randn(4, 8, seed=4)
    checks.close("eval", Dropout(0.5).eval()(x), x)
    checks.close("p = 0", Dropout(0.0).train()(x), x)


def _sublayer(d_model: int) -> nn.Linear:
    torch.manual_seed(5)
    return nn.Linear(d_model, d_model)


def _residual(norm_first: bool, seed: int):
    """``(x, conexión residual con pesos al azar, LayerNorm con sus pesos, subcapa)``."""
    x = examples.randn(2, 3, 4, seed=seed)
    residual = ResidualConnection(4, dropout=0.0, norm_first=norm_first)
    _randomize(residual, seed=seed - 6)
    norm = nn.LayerNorm(4)
    norm.load_state_dict(residual.norm.state_dict())
    return x, residual, norm, _sublayer(4)


def test_residual_post_norm_is_norm_of_sum():
    x, residual, norm, sublayer = _residual(norm_first=False, seed=9)
    checks.close("post-norm", residual(x, sublayer), norm(x + sublayer(x)))


def test_residual_pre_norm_adds_sublayer_of_normalized_input():
    x, residual, norm, sublayer = _residual(norm_first=True, seed=10)
    checks.close("pre-norm", residual(x, sublayer), x + sublayer(norm(x)))


def test_residual_applies_dropout_only_in_training():
    x = examples.randn(2, 3, 4, seed=11)
    residual = ResidualConnection(4, dropout=0.5, norm_first=True)
    sublayer = _sublayer(4)
    checks.close("eval", residual.eval()(x, sublayer), x + sublayer(F.layer_norm(x, (4,))))
    torch.manual_seed(0)
    dropped = residual.train()(x, sublayer) - x
    assert (dropped == 0).any(), "en entrenamiento el dropout debe anular algún valor"
