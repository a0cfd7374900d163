"""Errores que el catálogo no tiene, escritos aparte, de los laboratorios 1 y 2: la prueba
visible y la oculta los nombran por su idea (el mensaje del catálogo para esa idea).

Cada caso es otra forma de una idea del catálogo (otra API, otro sitio, otro eje). Si
deja de nombrarse, la prueba visible o la oculta ha dejado de reconocer la idea y solo
reconoce las formas catalogadas. Una sola: ``python -m pytest -q tests/test_mistakes_by_idea.py``.
"""

import math

import pytest
import torch

from course.mistakes import attention as att
from course.mistakes import normalization as norm
from course.reference import attention as ra
from course.reference import normalization as rn


def _attention(scores=ra.attention_scores, fill=float("-inf"), dim=-1, rezero=True):
    """La atención de referencia con una pieza cambiada."""

    def attention(query, key, value, mask=None):
        weights = scores(query, key)
        if mask is not None:
            weights = weights.masked_fill(~mask, fill)
        weights = torch.softmax(weights, dim=dim)
        if mask is not None and rezero:
            weights = weights.masked_fill(~mask, 0.0)
        return weights @ value, weights

    return attention


def _module(base, forward):
    return type(f"{base.__name__}Distinto", (base,), {"forward": forward})


def _mean_var(x, dim=-1, keepdim=True):
    return x.mean(dim, keepdim=keepdim), x.var(dim, unbiased=False, keepdim=True)


def _layer_norm(s, x, dim=-1, keepdim=True):
    mean, var = _mean_var(x, dim, keepdim)
    return s.weight * (x - mean) / (var + s.eps).sqrt() + s.bias


def _dropout(s, x, scale):
    if not s.training or s.p == 0:
        return x
    return x * (torch.rand(x.shape) > s.p) * scale(s.p)


SCORES = ("ej1_puntuaciones", "attention_scores")
SOFTMAX = ("ej2_softmax", "softmax")
PADDING = ("ej3_relleno", "padding_mask")
CAUSAL = ("ej4_causal", "causal_mask")
ATTENTION = ("ej5_atencion", "scaled_dot_product_attention")
LAYER = ("ej1_layernorm", "LayerNorm")
ANNOTATED = ("ej2_annotated", "AnnotatedLayerNorm")
RMS = ("ej3_rmsnorm", "RMSNorm")
DROPOUT = ("ej4_dropout", "Dropout")
RESIDUAL = ("ej5_residual", "ResidualConnection")
SQRT_D = math.sqrt

CASES_01 = [
    (SCORES, lambda q, k: torch.matmul(q, k.transpose(-1, -2)), att.NO_SCALE),
    (SCORES, lambda q, k: q @ k.mT / k.size(-1), att.OVER_D_K),
    (SCORES, lambda q, k: q @ k.mT / q.shape[-2] ** 0.5, att.WRONG_D_K),
    (SCORES, lambda q, k: (q @ k.mT) * torch.tensor(q.size(-1)).sqrt(), att.TIMES_SQRT),
    (SCORES, lambda q, k: q @ k.permute(0, 2, 1) / SQRT_D(q.size(-1)), att.TRANSPOSE_AXES),
    (SOFTMAX, lambda x: x.exp().div(x.exp().sum(-1, keepdim=True)), att.NO_MAX),
    (SOFTMAX, lambda x: (x - x.amax(0)).exp() / (x - x.amax(0)).exp().sum(0), att.WRONG_AXIS),
    (SOFTMAX, lambda x: (x - x.amax(-1, True)).exp() / (x - x.amax(-1, True)).exp().sum(), att.OVER_EVERYTHING),
    (SOFTMAX, lambda x: (x - x.max(-1)[0]).exp() / (x - x.max(-1)[0]).exp().sum(-1, True), att.MAX_KEEPDIM),
    (PADDING, lambda tokens, pad_idx: torch.logical_not(tokens.ne(pad_idx)).unsqueeze(-2), att.MASK_INVERTED),
    (PADDING, lambda tokens, pad_idx: (tokens != pad_idx).int().unsqueeze(1), att.NOT_BOOL),
    (PADDING, lambda tokens, pad_idx: tokens != pad_idx, att.NO_QUERY_AXIS),
    (PADDING, lambda tokens, pad_idx: tokens.ne(pad_idx).unsqueeze(-1), att.AXIS_AT_END),
    (PADDING, lambda tokens, pad_idx: (tokens > 0)[:, None, :], att.FIXED_ZERO),
    (CAUSAL, lambda n: torch.ones(n, n).triu() == 1, att.MASK_TRANSPOSED),
    (CAUSAL, lambda n: torch.tril(torch.ones(n, n, dtype=torch.bool), diagonal=-1), att.NO_DIAGONAL),
    (CAUSAL, lambda n: torch.tril(torch.ones(n, n, dtype=torch.long)), att.NOT_BOOL),
    (CAUSAL, lambda n: torch.triu(torch.ones(n, n), 1) == 1, att.MASK_INVERTED),
    (ATTENTION, _attention(scores=lambda q, k: q @ k.mT), att.NO_SCALE),
    (ATTENTION, _attention(scores=lambda q, k: q @ k.mT / q.size(-1)), att.OVER_D_K),
    (ATTENTION, _attention(fill=0.0), att.FILL_ZERO),
    (ATTENTION, _attention(fill=-1e9, rezero=False), att.BLOCKED_ROW),
    (ATTENTION, _attention(rezero=False), att.NAN_ROWS),
    (ATTENTION, _attention(dim=-2), att.WRONG_AXIS),
    (ATTENTION, _attention(scores=lambda q, k: torch.einsum("bkd,bqd->bkq", k, q) / SQRT_D(q.size(-1))), att.QK_SWAPPED),
    (ATTENTION, lambda q, k, v, mask=None: _attention()(q, k, v, mask)[0], att.OUTPUT_ONLY),
    (ATTENTION, lambda q, k, v, mask=None: _attention()(q, k, v, mask)[::-1], att.PAIR_SWAPPED),
    (ATTENTION, lambda q, k, v, mask=None: _attention()(q, k, v, None if mask is None else ~mask), att.MASK_INVERTED),
]  # fmt: skip

CASES_02 = [
    (LAYER, _module(rn.LayerNorm, lambda s, x: s.weight * (x - x.mean(-1, True)) / (x.var(-1, correction=1, keepdim=True) + s.eps).sqrt() + s.bias), norm.UNBIASED),
    (LAYER, _module(rn.LayerNorm, lambda s, x: s.weight * (x - x.mean(-1, True)) / (torch.std(x, -1, unbiased=False, keepdim=True) + s.eps) + s.bias), norm.EPS_OUTSIDE),
    (LAYER, _module(rn.LayerNorm, lambda s, x: s.weight * (x - x.mean(-1, True)) / _mean_var(x)[1].sqrt() + s.bias), norm.EPS_IGNORED),
    (LAYER, _module(rn.LayerNorm, lambda s, x: _layer_norm(s, x) - s.bias), norm.NO_AFFINE),
    (LAYER, _module(rn.LayerNorm, lambda s, x: _layer_norm(s, x, dim=1)), norm.OVER_EVERYTHING),
    (LAYER, _module(rn.LayerNorm, lambda s, x: _layer_norm(s, x, keepdim=False)), norm.KEEPDIM),
    (LAYER, _module(rn.LayerNorm, lambda s, x: s.weight * x * torch.rsqrt(_mean_var(x)[1] + s.eps) + s.bias), norm.NOT_CENTRED),
    (LAYER, _module(rn.LayerNorm, lambda s, x: s.weight * (x - x.mean(-1, True)) / _mean_var(x)[1].add(s.eps) + s.bias), norm.OVER_VARIANCE),
    (ANNOTATED, _module(rn.AnnotatedLayerNorm, lambda s, x: s.weight * (x - x.mean(-1, True)) / (x.std(-1, keepdim=True, unbiased=False) + s.eps) + s.bias), norm.BIASED),
    (ANNOTATED, _module(rn.AnnotatedLayerNorm, lambda s, x: s.weight * (x - x.mean(-1, True)) / torch.sqrt(x.var(-1, keepdim=True) + s.eps) + s.bias), norm.EPS_INSIDE),
    (ANNOTATED, _module(rn.AnnotatedLayerNorm, lambda s, x: (x - x.mean(-1, True)) / (x.std(-1, keepdim=True) + s.eps)), norm.NO_AFFINE),
    (ANNOTATED, _module(rn.AnnotatedLayerNorm, lambda s, x: s.weight * (x - x.mean()) / (x.std() + s.eps) + s.bias), norm.OVER_EVERYTHING_STD),
    (RMS, _module(rn.RMSNorm, lambda s, x: s.weight * (x - x.mean(-1, True)) / ((x - x.mean(-1, True)).pow(2).mean(-1, True) + s.eps).sqrt()), norm.RMS_CENTRED),
    (RMS, _module(rn.RMSNorm, lambda s, x: s.weight * x / (x.pow(2).sum(-1, True) + s.eps).sqrt()), norm.RMS_SUM),
    (RMS, _module(rn.RMSNorm, lambda s, x: x / (x.pow(2).mean(-1, True) + s.eps).sqrt()), norm.RMS_NO_WEIGHT),
    (RMS, _module(rn.RMSNorm, lambda s, x: s.weight * x / (x.pow(2).mean(-1, True) + s.eps)), norm.RMS_NO_ROOT),
    (RMS, _module(rn.RMSNorm, lambda s, x: s.weight * x / (x.pow(2).mean(-1, True).sqrt() + s.eps)), norm.RMS_EPS_OUTSIDE),
    (DROPOUT, _module(rn.Dropout, lambda s, x: _dropout(s, x, lambda p: 1.0)), norm.NO_RESCALE),
    (DROPOUT, _module(rn.Dropout, lambda s, x: _dropout(s, x, lambda p: 1 / p)), norm.OVER_P),
    (DROPOUT, _module(rn.Dropout, lambda s, x: x if s.p == 0 else x * (torch.rand(x.shape) > s.p) / (1 - s.p)), norm.ALSO_IN_EVAL),
    (RESIDUAL, _module(rn.ResidualConnection, lambda s, x, f: s.norm(x + s.dropout(f(x))) if s.norm_first else x + s.dropout(f(s.norm(x)))), norm.SWAPPED),
    (RESIDUAL, _module(rn.ResidualConnection, lambda s, x, f: s.dropout(f(s.norm(x))) if s.norm_first else s.norm(s.dropout(f(x)))), norm.NO_RESIDUAL),
    (RESIDUAL, _module(rn.ResidualConnection, lambda s, x, f: x + f(s.norm(x)) if s.norm_first else s.norm(x + f(x))), norm.NO_DROPOUT),
    (RESIDUAL, _module(rn.ResidualConnection, lambda s, x, f: s.norm(x) + s.dropout(f(s.norm(x))) if s.norm_first else s.norm(x + s.dropout(f(x)))), norm.NORMALISED_RESIDUAL),
]  # fmt: skip

CASES = [
    pytest.param(lab_id, *case, id=f"{lab_id}-{case[0][0]}-{index}")
    for lab_id, cases in (("01_atencion", CASES_01), ("02_normalizacion", CASES_02))
    for index, case in enumerate(cases)
]


@pytest.mark.parametrize(("lab_id", "exercise", "mutant", "message"), CASES)
def test_a_form_outside_the_catalogue_is_named_by_its_idea(
    solutions, lab_id, exercise, mutant, message
):
    solution = solutions(lab_id)
    grade_id, replaces = exercise
    for kind in ("prueba", "oculta"):
        with solution.substituted(replaces, mutant):
            try:
                solution.test(f"{grade_id}_{kind}")
            except AssertionError as error:
                assert message in str(error), f"{kind}: {error}"
            else:
                pytest.fail(f"la prueba {kind} no detecta el error")
