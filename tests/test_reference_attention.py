"""Referencia del laboratorio 1 frente a ``F.scaled_dot_product_attention`` y ``F.softmax``."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from course.reference.attention import (
    causal_mask,
    padding_mask,
    scaled_dot_product_attention,
    softmax,
)
from course.student import checks, examples

SHAPES = [(2, 3, 3, 4), (1, 5, 7, 2), (3, 4, 2, 8)]  # (B, T_q, T_k, d_k)


@pytest.mark.parametrize(("batch", "seq_q", "seq_k", "d_k"), SHAPES)
def test_attention_matches_torch_without_mask(batch, seq_q, seq_k, d_k):
    query, key, value = examples.qkv(batch, seq_q, seq_k, d_k, seed=batch + seq_k)
    out, weights = scaled_dot_product_attention(query, key, value)
    checks.close("salida", out, F.scaled_dot_product_attention(query, key, value))
    expected_weights = torch.softmax(query @ key.transpose(-2, -1) / d_k**0.5, dim=-1)
    checks.close("pesos", weights, expected_weights)
    checks.rows_sum_to_one("pesos", weights)


def test_attention_matches_torch_with_padding_mask():
    query, key, value = examples.qkv()
    mask = padding_mask(examples.tokens(), examples.PAD_IDX)  # (B, 1, T_k)
    out, weights = scaled_dot_product_attention(query, key, value, mask)
    expected = F.scaled_dot_product_attention(query, key, value, attn_mask=mask)
    checks.close("salida", out, expected)
    assert (weights[-1, :, -1] == 0).all(), "la posición de relleno debe recibir peso 0"
    checks.rows_sum_to_one("pesos", weights)


def test_attention_matches_torch_with_causal_mask_and_heads():
    query, key, value = examples.qkv(batch=2, seq_q=5, d_k=4, seed=3)
    query, key, value = (x.reshape(2, 5, 2, 2).transpose(1, 2) for x in (query, key, value))
    out, weights = scaled_dot_product_attention(query, key, value, causal_mask(5))
    checks.close("salida", out, F.scaled_dot_product_attention(query, key, value, is_causal=True))
    assert (weights.triu(diagonal=1) == 0).all(), "ningún peso por encima de la diagonal"


def test_padding_mask_and_causal_mask_values():
    tokens = torch.tensor([[5, 6, 7], [8, 9, 0]])
    expected_pad = torch.tensor([[[True, True, True]], [[True, True, False]]])
    checks.close("máscara de relleno", padding_mask(tokens, 0), expected_pad)
    expected_causal = torch.tensor([[True, False, False], [True, True, False], [True, True, True]])
    checks.close("máscara causal", causal_mask(3), expected_causal)


def test_fully_masked_row_gives_zeros_without_nan_in_forward_or_backward():
    query, key, value = (x.requires_grad_() for x in examples.qkv(batch=1, seq_q=3, d_k=4))
    mask = torch.tensor([[[True, False, True], [False, False, False], [True, True, True]]])
    out, weights = scaled_dot_product_attention(query, key, value, mask)
    checks.finite("salida", out)
    assert (out[0, 1] == 0).all() and (weights[0, 1] == 0).all()
    out.sum().backward()
    for name, tensor in (("query", query), ("key", key), ("value", value)):
        checks.finite(f"gradiente de {name}", tensor.grad)
    assert (query.grad[0, 1] == 0).all(), "una consulta sin claves no recibe gradiente"


@pytest.mark.parametrize("transform", [lambda x: x, lambda x: x + 100.0, lambda x: x * 1000.0])
def test_softmax_matches_torch_including_shifted_and_scaled_inputs(transform):
    x = transform(examples.randn(2, 3, 5, seed=7))
    result = softmax(x)
    checks.close("softmax", result, F.softmax(x, dim=-1))
    checks.rows_sum_to_one("softmax", result)


def test_softmax_is_invariant_to_a_shift_of_100():
    x = examples.randn(4, 6, seed=8)
    checks.close("softmax(x + 100)", softmax(x + 100.0), F.softmax(x, dim=-1))


def test_causal_attention_ignores_future_keys_and_values():
    query, key, value = (x.requires_grad_() for x in examples.qkv(batch=1, seq_q=4, d_k=2, seed=4))
    out, _ = scaled_dot_product_attention(query, key, value, causal_mask(4))
    out[0, 1].sum().backward()  # la salida en la posición 1 solo puede depender de 0 y 1
    assert (key.grad[0, 2:] == 0).all() and (value.grad[0, 2:] == 0).all()
    assert (key.grad[0, :2] != 0).any() and (value.grad[0, :2] != 0).all()


@pytest.mark.parametrize("seed", [0, 1])
def test_attention_without_mask_is_permutation_equivariant(seed):
    query, key, value = examples.qkv(batch=2, seq_q=5, d_k=4, seed=seed)
    perm = torch.randperm(5, generator=torch.Generator().manual_seed(seed))
    out, weights = scaled_dot_product_attention(query, key, value)
    out_p, weights_p = scaled_dot_product_attention(query[:, perm], key[:, perm], value[:, perm])
    checks.close("salida permutada", out_p, out[:, perm])
    checks.close("pesos permutados", weights_p, weights[:, perm][:, :, perm])


def test_dropout_acts_on_the_product_with_values_but_returned_weights_are_intact():
    query, key, value = examples.qkv(batch=2, seq_q=6, d_k=4, seed=9)
    torch.manual_seed(0)
    out, weights = scaled_dot_product_attention(query, key, value, dropout=nn.Dropout(0.5))
    checks.rows_sum_to_one("pesos devueltos", weights)
    torch.manual_seed(0)
    checks.close("salida", out, F.dropout(weights, 0.5) @ value)
