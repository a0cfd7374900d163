"""Referencia del laboratorio 5 frente a ``nn.TransformerEncoderLayer`` y ``DecoderLayer``.

Las capas de PyTorch se crean con ``batch_first=True``, ReLU y ``dropout=0``, en modo
``eval``, con sesgos y normas aleatorios; sus pesos se copian en las nuestras.
"""

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch_weights import copy_layer, copy_stack, randomize_vectors

from course.reference.attention import causal_mask, padding_mask
from course.reference.layers import (
    Decoder,
    DecoderLayer,
    Encoder,
    EncoderLayer,
    PositionwiseFeedForward,
)
from course.student import checks, examples

D_MODEL, NUM_HEADS, D_FF = 8, 2, 16
NORM_FIRST = [False, True]


def _torch_layer(kind: type, norm_first: bool, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    layer = kind(
        D_MODEL, NUM_HEADS, D_FF, dropout=0.0, batch_first=True, norm_first=norm_first
    ).eval()
    randomize_vectors(layer, seed)
    return layer


def _inputs(seq: int, seed: int) -> torch.Tensor:
    return examples.randn(2, seq, D_MODEL, seed=seed)


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_feed_forward_matches_the_formula(activation):
    torch.manual_seed(0)
    ffn = PositionwiseFeedForward(4, 8, activation=activation).eval()
    x = examples.randn(2, 3, 4, seed=1)
    act = F.relu if activation == "relu" else F.gelu
    expected = ffn.linear2(act(x @ ffn.linear1.weight.T + ffn.linear1.bias))
    checks.close("salida", ffn(x), expected)


def test_feed_forward_rejects_unknown_activation():
    with pytest.raises(ValueError, match="activación"):
        PositionwiseFeedForward(4, 8, activation="tanh")


@pytest.mark.parametrize("norm_first", NORM_FIRST)
def test_encoder_layer_matches_torch(norm_first):
    reference = _torch_layer(nn.TransformerEncoderLayer, norm_first, seed=0)
    ours = EncoderLayer(D_MODEL, NUM_HEADS, D_FF, norm_first=norm_first).eval()
    copy_layer(reference, ours)
    x = _inputs(3, seed=1)
    mask = padding_mask(examples.tokens(), examples.PAD_IDX)  # (B, 1, T)
    checks.close("sin máscara", ours(x), reference(x))
    expected = reference(x, src_key_padding_mask=~mask.squeeze(1))
    checks.close("con máscara de relleno", ours(x, mask), expected)


@pytest.mark.parametrize("norm_first", NORM_FIRST)
def test_decoder_layer_matches_torch(norm_first):
    reference = _torch_layer(nn.TransformerDecoderLayer, norm_first, seed=2)
    ours = DecoderLayer(D_MODEL, NUM_HEADS, D_FF, norm_first=norm_first).eval()
    copy_layer(reference, ours)
    x, memory = _inputs(4, seed=3), _inputs(3, seed=4)
    memory_mask = padding_mask(examples.tokens(), examples.PAD_IDX)  # (B, 1, T_k)
    out, cross_weights = ours(x, memory, causal_mask(4), memory_mask)
    expected = reference(
        x, memory, tgt_mask=~causal_mask(4), memory_key_padding_mask=~memory_mask.squeeze(1)
    )
    checks.close("salida", out, expected)
    checks.shape("pesos cruzados", cross_weights, (2, NUM_HEADS, 4, 3), "(B, H, T_q, T_k)")
    checks.rows_sum_to_one("pesos cruzados", cross_weights)
    assert (cross_weights[1, :, :, -1] == 0).all(), "la memoria de relleno no recibe peso"


@pytest.mark.parametrize("norm_first", NORM_FIRST)
def test_encoder_stack_matches_torch(norm_first):
    layer = _torch_layer(nn.TransformerEncoderLayer, norm_first, seed=5)
    final_norm = nn.LayerNorm(D_MODEL) if norm_first else None
    reference = nn.TransformerEncoder(layer, 3, norm=final_norm, enable_nested_tensor=False)
    randomize_vectors(reference, seed=1)
    reference.eval()
    ours = Encoder(EncoderLayer(D_MODEL, NUM_HEADS, D_FF, norm_first=norm_first), 3).eval()
    copy_stack(reference, ours)
    x = _inputs(5, seed=6)
    checks.close("salida", ours(x, causal_mask(5)), reference(x, mask=~causal_mask(5)))


@pytest.mark.parametrize("norm_first", NORM_FIRST)
def test_decoder_stack_matches_torch(norm_first):
    layer = _torch_layer(nn.TransformerDecoderLayer, norm_first, seed=7)
    final_norm = nn.LayerNorm(D_MODEL) if norm_first else None
    reference = nn.TransformerDecoder(layer, 2, norm=final_norm)
    randomize_vectors(reference, seed=1)
    reference.eval()
    ours = Decoder(DecoderLayer(D_MODEL, NUM_HEADS, D_FF, norm_first=norm_first), 2).eval()
    copy_stack(reference, ours)
    captured = {}  # entradas de la atención cruzada de la última capa de PyTorch
    last_cross = reference.layers[-1].multihead_attn
    last_cross.register_forward_pre_hook(lambda m, args: captured.update(args=args))
    x, memory = _inputs(4, seed=8), _inputs(3, seed=9)
    out, cross_weights = ours(x, memory, causal_mask(4))
    checks.close("salida", out, reference(x, memory, tgt_mask=~causal_mask(4)))
    query, key, value = captured["args"][:3]
    _, expected = last_cross(query, key, value, need_weights=True, average_attn_weights=False)
    checks.close("pesos cruzados de la última capa", cross_weights, expected)


def test_decoder_rejects_zero_layers():
    with pytest.raises(ValueError, match="al menos una capa"):
        Decoder(DecoderLayer(D_MODEL, NUM_HEADS, D_FF), 0)


def test_stacks_have_final_norm_only_in_pre_norm():
    post = Encoder(EncoderLayer(D_MODEL, NUM_HEADS, D_FF, norm_first=False), 2)
    pre = Encoder(EncoderLayer(D_MODEL, NUM_HEADS, D_FF, norm_first=True), 2)
    assert not any(k.startswith("norm.") for k in post.state_dict())
    assert {"norm.weight", "norm.bias"} <= set(pre.state_dict())


def test_stack_layers_are_independent_copies():
    encoder = Encoder(EncoderLayer(D_MODEL, NUM_HEADS, D_FF), 2)
    first, second = encoder.layers
    assert first.self_attn.w_q.weight.data_ptr() != second.self_attn.w_q.weight.data_ptr()


def test_decoder_layer_names_match_torch_submodules():
    ours = {name for name, _ in DecoderLayer(D_MODEL, NUM_HEADS, D_FF).named_children()}
    assert {"self_attn", "cross_attn", "feed_forward", "norm1", "norm2", "norm3"} <= ours


@pytest.mark.parametrize("norm_first", NORM_FIRST)
def test_decoder_outputs_do_not_depend_on_future_tokens(norm_first):
    torch.manual_seed(10)
    decoder = Decoder(DecoderLayer(D_MODEL, NUM_HEADS, D_FF, norm_first=norm_first), 2).eval()
    randomize_vectors(decoder, seed=2)
    x = _inputs(5, seed=11).requires_grad_()
    memory = _inputs(3, seed=12)
    out, _ = decoder(x, memory, causal_mask(5))
    out[:, 2].sum().backward()  # la posición 2 solo puede depender de 0, 1 y 2
    assert (x.grad[:, 3:] == 0).all()
    assert (x.grad[:, :3] != 0).any()
    edited = x.detach().clone()
    edited[:, 3:] += 10.0
    out_edited, _ = decoder(edited, memory, causal_mask(5))
    checks.close("salidas pasadas", out_edited[:, :3], out[:, :3].detach())


@pytest.mark.parametrize("norm_first", NORM_FIRST)
def test_layers_apply_dropout_only_in_training(norm_first):
    torch.manual_seed(13)
    encoder = EncoderLayer(D_MODEL, NUM_HEADS, D_FF, dropout=0.5, norm_first=norm_first)
    decoder = DecoderLayer(D_MODEL, NUM_HEADS, D_FF, dropout=0.5, norm_first=norm_first)
    x, memory = _inputs(4, seed=14), _inputs(3, seed=15)
    for run in (lambda: encoder(x), lambda: decoder(x, memory)[0]):
        encoder.eval(), decoder.eval()
        checks.close("eval es determinista", run(), run())
        expected = run()
        encoder.train(), decoder.train()
        torch.manual_seed(0)
        assert not torch.allclose(run(), expected)
