"""Referencia del laboratorio 4 frente a ``nn.MultiheadAttention`` (pesos copiados, ``eval``)."""

import pytest
import torch
from torch import nn

from course.reference.attention import causal_mask, padding_mask
from course.reference.multihead import MultiHeadAttention, merge_heads, split_heads
from course.student import checks, examples

GRID = [(4, 1), (4, 2), (8, 4), (6, 3)]  # (D, H)


def _pair(d_model: int, num_heads: int, seed: int = 0) -> tuple[MultiHeadAttention, nn.Module]:
    torch.manual_seed(seed)
    torch_mha = nn.MultiheadAttention(d_model, num_heads, batch_first=True).eval()
    with torch.no_grad():  # sesgos no nulos, para que una proyección sin sesgo se note
        torch_mha.in_proj_bias.normal_()
        torch_mha.out_proj.bias.normal_()
    ours = MultiHeadAttention(d_model, num_heads).eval()
    checks.copy_mha_weights(torch_mha, ours)
    return ours, torch_mha


def _torch(mha: nn.Module, query, key, value, **kwargs):
    return mha(query, key, value, need_weights=True, average_attn_weights=False, **kwargs)


def test_split_heads_and_merge_heads_by_hand():
    x = torch.arange(2 * 3 * 4.0).reshape(2, 3, 4)
    heads = split_heads(x, 2)
    checks.shape("cabezas", heads, (2, 2, 3, 2), "(B, H, T, d_k)")
    checks.close("cabeza 1 del lote 0", heads[0, 1], torch.tensor([[2.0, 3], [6, 7], [10, 11]]))
    checks.close("merge(split(x))", merge_heads(heads), x)


@pytest.mark.parametrize(("d_model", "num_heads"), GRID)
def test_mha_matches_torch_self_attention_without_mask(d_model, num_heads):
    ours, torch_mha = _pair(d_model, num_heads)
    x = examples.randn(2, 3, d_model, seed=d_model)
    out, weights = ours(x, x, x)
    expected_out, expected_weights = _torch(torch_mha, x, x, x)
    checks.shape("pesos", weights, (2, num_heads, 3, 3), "(B, H, T_q, T_k)")
    checks.close("salida", out, expected_out)
    checks.close("pesos", weights, expected_weights)


@pytest.mark.parametrize(("d_model", "num_heads"), GRID)
def test_mha_matches_torch_with_causal_mask(d_model, num_heads):
    ours, torch_mha = _pair(d_model, num_heads, seed=1)
    x = examples.randn(2, 5, d_model, seed=3)
    mask = causal_mask(5)
    out, weights = ours(x, x, x, mask)
    expected_out, expected_weights = _torch(torch_mha, x, x, x, attn_mask=~mask)
    checks.close("salida", out, expected_out)
    checks.close("pesos", weights, expected_weights)


def test_mha_matches_torch_with_padding_mask():
    ours, torch_mha = _pair(4, 2, seed=2)
    x = examples.randn(2, 3, 4, seed=4)
    mask = padding_mask(examples.tokens(), examples.PAD_IDX)  # (B, 1, T_k)
    out, weights = ours(x, x, x, mask)
    expected = _torch(torch_mha, x, x, x, key_padding_mask=~mask.squeeze(1))
    checks.close("salida", out, expected[0])
    checks.close("pesos", weights, expected[1])


def test_mha_matches_torch_cross_attention_with_combined_mask():
    ours, torch_mha = _pair(8, 2, seed=3)
    query, key, value = examples.qkv(batch=2, seq_q=4, seq_k=6, d_k=8, seed=5)
    mask = torch.ones(2, 4, 6, dtype=torch.bool)
    mask[0, :, 4:] = False  # relleno en las claves del lote 0
    mask[1, 1, :3] = False  # una consulta que no ve las tres primeras claves
    out, weights = ours(query, key, value, mask)
    torch_mask = (~mask).repeat_interleave(2, dim=0)  # (B·H, T_q, T_k), como pide PyTorch
    expected_out, expected_weights = _torch(torch_mha, query, key, value, attn_mask=torch_mask)
    checks.shape("salida", out, (2, 4, 8), "(B, T_q, D)")
    checks.close("salida", out, expected_out)
    checks.close("pesos", weights, expected_weights)


def test_mha_rejects_d_model_not_divisible_by_num_heads():
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(6, 4)


def test_mha_has_four_separate_projections():
    expected = {f"{name}.{p}" for name in ("w_q", "w_k", "w_v", "w_o") for p in ("weight", "bias")}
    assert set(MultiHeadAttention(4, 2).state_dict()) == expected


def test_mha_with_causal_mask_ignores_future_positions():
    ours, _ = _pair(4, 2, seed=4)
    x = examples.randn(1, 5, 4, seed=6).requires_grad_()
    out, _ = ours(x, x, x, causal_mask(5))
    out[0, 2].sum().backward()
    assert (x.grad[0, 3:] == 0).all() and (x.grad[0, :3] != 0).any()


def test_mha_self_attention_is_permutation_equivariant():
    ours, _ = _pair(8, 4, seed=5)
    x = examples.randn(2, 6, 8, seed=7)
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    out, _ = ours(x, x, x)
    checks.close("salida permutada", ours(x[:, perm], x[:, perm], x[:, perm])[0], out[:, perm])


def test_mha_dropout_acts_on_weights_only_in_training():
    torch.manual_seed(6)
    mha = MultiHeadAttention(8, 2, dropout=0.5)
    x = examples.randn(2, 6, 8, seed=8)
    eval_out, eval_weights = mha.eval()(x, x, x)
    torch.manual_seed(0)
    train_out, train_weights = mha.train()(x, x, x)
    checks.close("pesos devueltos", train_weights, eval_weights)
    assert not torch.allclose(train_out, eval_out), "en entrenamiento el dropout cambia la salida"
