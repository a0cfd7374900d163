"""Errores que pasaban las pruebas de los laboratorios 3, 5 y 7 (issue 23): cada uno es un
mutante que sustituye la función o la clase del cuaderno de solución, y la prueba visible
debe fallar con un mensaje en español que nombre el error; la oculta también debe fallar.

Una sola: ``nice -n 19 python -m pytest -q tests/test_labs_357.py -k 03_posicional --todas``
(cada laboratorio ejecuta su cuaderno de solución una vez en este proceso).
"""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pad_sequence

from course import mistakes
from course.reference import layers, positional, translation
from course.reference.model import greedy_decode
from course.reference.multihead import MultiHeadAttention
from course.translation.data import BOS_IDX, EOS_IDX, PAD_IDX

pytestmark = pytest.mark.slow  # ejecutan los cuadernos de solución


# --- laboratorio 3 -------------------------------------------------------------------


def angle_in_float32(max_len, d_model):
    """La forma cerrada con el ángulo en float32: pierde precisión con miles de posiciones."""
    position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
    dims = torch.arange(d_model)
    angle = position / 10000.0 ** ((dims // 2 * 2).float() / d_model)
    return torch.where(dims % 2 == 0, angle.sin(), angle.cos())


def exp_in_float32(max_len, d_model):
    """La forma exp/log como en muchos tutoriales: todo en float32."""
    position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
    frequency = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2).float() / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(position * frequency)
    pe[:, 1::2] = torch.cos(position * frequency)
    return pe


class RefusesMaxLen(positional.PositionalEncoding):
    """``T >= max_len`` en lugar de ``T > max_len``: rechaza una frase que cabe justo."""

    def forward(self, x):
        if x.size(1) >= self.pe.size(0):
            raise ValueError("demasiado larga")
        return super().forward(x)


# --- laboratorio 5 -------------------------------------------------------------------


class EncoderAttentionWithoutDropout(layers.EncoderLayer):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.self_attn = MultiHeadAttention(d_model, num_heads)


class EncoderFeedForwardWithoutDropout(layers.EncoderLayer):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.feed_forward = layers.PositionwiseFeedForward(d_model, d_ff)


class DecoderAttentionWithoutDropout(layers.DecoderLayer):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.cross_attn = MultiHeadAttention(d_model, num_heads)


class DecoderFeedForwardWithoutDropout(layers.DecoderLayer):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.feed_forward = layers.PositionwiseFeedForward(d_model, d_ff)


# --- laboratorio 7 -------------------------------------------------------------------


def _loss(model, batch, pad_idx, smoothing):
    src, tgt_in, tgt_out = batch
    logits = model(src, tgt_in, *translation.batch_masks(src, tgt_in, pad_idx))
    return F.cross_entropy(
        logits.flatten(0, 1), tgt_out.flatten(), ignore_index=pad_idx, label_smoothing=smoothing
    )


def step_without_zero_grad(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    loss = _loss(model, batch, pad_idx, smoothing)
    loss.backward()
    if clip_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
    optimizer.step()
    if scheduler is not None:
        scheduler.step()
    return loss.item()


def step_clipping_too_late(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    loss = _loss(model, batch, pad_idx, smoothing)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if clip_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
    if scheduler is not None:
        scheduler.step()
    return loss.item()


def evaluate_with_gradients(model, batches, pad_idx):
    """``evaluate`` sin ``torch.no_grad()``: mismos valores, pero construye el grafo."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for src, tgt_in, tgt_out in batches:
        logits = model(src, tgt_in, *translation.batch_masks(src, tgt_in, pad_idx))
        total += F.cross_entropy(
            logits.flatten(0, 1), tgt_out.flatten(), ignore_index=pad_idx, reduction="sum"
        ).item()
        count += int((tgt_out != pad_idx).sum())
    model.train(was_training)
    return total / count, math.exp(total / count)


def translate_in_training_mode(model, tokenizer, sentences, max_len, device):
    """``greedy_translate`` sin ``model.eval()``: con dropout, cada ejecución traduce distinto."""
    ids = [torch.tensor(s) for s in tokenizer.encode_batch(list(sentences))]
    src = pad_sequence(ids, batch_first=True, padding_value=PAD_IDX).to(device)
    src_mask, _ = translation.batch_masks(src, src, PAD_IDX)
    with torch.no_grad():
        out = greedy_decode(model, src, src_mask, max_len, BOS_IDX, EOS_IDX, PAD_IDX)
    return [tokenizer.decode(row) for row in out[:, 1:].tolist()]


CASES = [
    ("03_posicional", "ej2_senoidal", "sinusoidal_encoding", angle_in_float32, "float32"),
    ("03_posicional", "ej3_senoidal_exp", "sinusoidal_encoding_exp", exp_in_float32, "float32"),
    ("03_posicional", "ej4_posicional", "PositionalEncoding", RefusesMaxLen, "T = max_len"),
    (
        "05_capas",
        "ej2_encoder_layer",
        "EncoderLayer",
        EncoderAttentionWithoutDropout,
        "MultiHeadAttention",
    ),
    (
        "05_capas",
        "ej2_encoder_layer",
        "EncoderLayer",
        EncoderFeedForwardWithoutDropout,
        "PositionwiseFeedForward",
    ),
    (
        "05_capas",
        "ej3_decoder_layer",
        "DecoderLayer",
        DecoderAttentionWithoutDropout,
        "MultiHeadAttention",
    ),
    (
        "05_capas",
        "ej3_decoder_layer",
        "DecoderLayer",
        DecoderFeedForwardWithoutDropout,
        "PositionwiseFeedForward",
    ),
    ("07_multi30k", "ej3_paso", "train_step", step_without_zero_grad, "zero_grad"),
    ("07_multi30k", "ej3_paso", "train_step", step_clipping_too_late, "antes de optimizer.step"),
    ("07_multi30k", "ej4_evaluacion", "evaluate", evaluate_with_gradients, "torch.no_grad"),
    (
        "07_multi30k",
        "ej5_traduccion",
        "greedy_translate",
        translate_in_training_mode,
        "model.eval()",
    ),
]


@pytest.fixture(scope="module")
def solutions():
    cache: dict[str, mistakes.Solution] = {}

    def get(lab_id: str) -> mistakes.Solution:
        if lab_id not in cache:
            cache[lab_id] = mistakes.Solution(lab_id)
        return cache[lab_id]

    return get


def _failure(solution, grade_id):
    try:
        solution.test(grade_id)
    except Exception as error:  # noqa: BLE001 (cualquier fallo de la celda cuenta)
        return error
    return None


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
