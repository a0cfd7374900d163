"""Errores típicos del laboratorio 3 (*embeddings* y codificación posicional).

Cada mutante es la referencia con un solo error. Nunca llega al estudiante.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from course.mistakes import for_exercise
from course.reference import positional as ref

LAB = "03_posicional"


# --- ejercicio 1: TokenEmbedding --------------------------------------------------------


class TokenEmbeddingUnscaled(ref.TokenEmbedding):
    def forward(self, tokens):
        return self.embedding(tokens)


class TokenEmbeddingTimesD(ref.TokenEmbedding):
    def forward(self, tokens):
        return self.embedding(tokens) * self.d_model


class TokenEmbeddingTimesLastAxis(ref.TokenEmbedding):
    def forward(self, tokens):
        out = self.embedding(tokens)
        return out * out.size(-1)


class TokenEmbeddingOverSqrtD(ref.TokenEmbedding):
    def forward(self, tokens):
        return self.embedding(tokens) / math.sqrt(self.d_model)


class TokenEmbeddingSqrtVocab(ref.TokenEmbedding):
    def __init__(self, vocab_size, d_model):
        super().__init__(vocab_size, d_model)
        self.vocab_size = vocab_size

    def forward(self, tokens):
        return self.embedding(tokens) * math.sqrt(self.vocab_size)


class TokenEmbeddingSwapped(ref.TokenEmbedding):
    def __init__(self, vocab_size, d_model):
        super().__init__(vocab_size, d_model)
        self.embedding = nn.Embedding(d_model, vocab_size)


class TokenEmbeddingPaddingIdx(ref.TokenEmbedding):
    def __init__(self, vocab_size, d_model):
        super().__init__(vocab_size, d_model)
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=0)


class TokenEmbeddingDetached(ref.TokenEmbedding):
    def forward(self, tokens):
        return self.embedding(tokens).detach() * math.sqrt(self.d_model)


class TokenEmbeddingUnderNoGrad(ref.TokenEmbedding):
    def forward(self, tokens):
        with torch.no_grad():
            return self.embedding(tokens) * math.sqrt(self.d_model)


class TokenEmbeddingFunctionalUnscaled(ref.TokenEmbedding):
    def forward(self, tokens):
        return F.embedding(tokens, self.embedding.weight)


class TokenEmbeddingScaledAtInit(ref.TokenEmbedding):
    """Escala la tabla al crearla: se pierde al cargar o entrenar los pesos."""

    def __init__(self, vocab_size, d_model):
        super().__init__(vocab_size, d_model)
        with torch.no_grad():
            self.embedding.weight.mul_(math.sqrt(d_model))

    def forward(self, tokens):
        return self.embedding(tokens)


class TokenEmbeddingTimesWidth(ref.TokenEmbedding):
    def forward(self, tokens):
        return self.embedding(tokens) * self.embedding.embedding_dim


class TokenEmbeddingPowerMinusHalf(ref.TokenEmbedding):
    def forward(self, tokens):
        return self.embedding(tokens) * self.d_model**-0.5


class TokenEmbeddingOverRoot(ref.TokenEmbedding):
    def forward(self, tokens):
        return self.embedding(tokens) / self.d_model**0.5


class TokenEmbeddingSqrtRows(ref.TokenEmbedding):
    def forward(self, tokens):
        return self.embedding(tokens) * math.sqrt(self.embedding.num_embeddings)


class TokenEmbeddingSwappedByKeyword(ref.TokenEmbedding):
    def __init__(self, vocab_size, d_model):
        super().__init__(vocab_size, d_model)
        self.embedding = nn.Embedding(num_embeddings=d_model, embedding_dim=vocab_size)


class TokenEmbeddingPaddingIdxByName(ref.TokenEmbedding):
    def __init__(self, vocab_size, d_model, pad_idx=0):
        super().__init__(vocab_size, d_model)
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_idx)


class TokenEmbeddingPaddingZeroed(ref.TokenEmbedding):
    def forward(self, tokens):
        out = self.embedding(tokens) * math.sqrt(self.d_model)
        return out * (tokens != 0).unsqueeze(-1)


class TokenEmbeddingPaddingMaskedFill(ref.TokenEmbedding):
    def forward(self, tokens):
        out = self.embedding(tokens) * math.sqrt(self.d_model)
        return out.masked_fill((tokens == 0).unsqueeze(-1), 0.0)


# --- ejercicio 2: codificación sinusoidal, forma cerrada --------------------------------


def _closed_form(
    max_len, d_model, exponent, swap=False, first=0, multiply=False, base=10000.0, dtype=None
):
    """La forma cerrada con el exponente de cada columna cambiado (y alguna otra variación)."""
    dtype = dtype or torch.float64
    position = torch.arange(first, first + max_len, dtype=dtype).unsqueeze(1)
    dims = torch.arange(d_model)
    scale = base ** (exponent(dims).to(dtype) / d_model)
    angle = position * scale if multiply else position / scale
    even, odd = (angle.cos(), angle.sin()) if swap else (angle.sin(), angle.cos())
    return torch.where(dims % 2 == 0, even, odd).float()


def _two_i(dims):
    return dims // 2 * 2


def sinusoidal_sin_cos_swapped(max_len, d_model):
    return _closed_form(max_len, d_model, _two_i, swap=True)


def sinusoidal_exponent_j(max_len, d_model):
    return _closed_form(max_len, d_model, lambda dims: dims)


def sinusoidal_exponent_2j(max_len, d_model):
    return _closed_form(max_len, d_model, lambda dims: 2 * dims)


def sinusoidal_exponent_even_steps(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    two_j = torch.arange(0, 2 * d_model, 2, dtype=torch.float64)
    angle = position / 10000.0 ** (two_j / d_model)
    return torch.where(torch.arange(d_model) % 2 == 0, angle.sin(), angle.cos()).float()


def sinusoidal_exponent_i(max_len, d_model):
    return _closed_form(max_len, d_model, lambda dims: dims // 2)


def sinusoidal_positions_from_one(max_len, d_model):
    return _closed_form(max_len, d_model, _two_i, first=1)


def sinusoidal_multiplied(max_len, d_model):
    return _closed_form(max_len, d_model, _two_i, multiply=True)


def sinusoidal_base_1000(max_len, d_model):
    return _closed_form(max_len, d_model, _two_i, base=1000.0)


def sinusoidal_base_e(max_len, d_model):
    return _closed_form(max_len, d_model, _two_i, base=math.e)


def sinusoidal_angle_float32(max_len, d_model):
    return _closed_form(max_len, d_model, _two_i, dtype=torch.float32)


def sinusoidal_float64(max_len, d_model):
    return ref.sinusoidal_encoding(max_len, d_model).double()


def sinusoidal_odd_columns_sine(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    dims = torch.arange(d_model)
    angle = position / 10000.0 ** ((dims // 2 * 2).double() / d_model)
    return torch.where(dims % 2 == 1, angle.sin(), angle.cos()).float()


def sinusoidal_cos_sin_interleaved(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    angle = position / 10000.0 ** (torch.arange(0, d_model, 2).double() / d_model)
    return torch.stack([angle.cos(), angle.sin()], dim=-1).flatten(1).float()


def sinusoidal_positions_plus_one(max_len, d_model):
    position = (torch.arange(max_len, dtype=torch.float64) + 1).unsqueeze(1)
    dims = torch.arange(d_model)
    angle = position / 10000.0 ** ((dims // 2 * 2).double() / d_model)
    return torch.where(dims % 2 == 0, angle.sin(), angle.cos()).float()


def sinusoidal_base_100000(max_len, d_model):
    return _closed_form(max_len, d_model, _two_i, base=100000.0)


def sinusoidal_times_power(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    dims = torch.arange(d_model)
    angle = position * torch.pow(10000.0, (dims - dims % 2).double() / d_model)
    return torch.where(dims % 2 == 0, angle.sin(), angle.cos()).float()


def sinusoidal_exponent_pair_index(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    i = torch.arange(d_model // 2, dtype=torch.float64).repeat_interleave(2)
    angle = position / 10000.0 ** (i / d_model)
    return torch.where(torch.arange(d_model) % 2 == 0, angle.sin(), angle.cos()).float()


def sinusoidal_exponent_column_pow(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    dims = torch.arange(d_model)
    angle = position / torch.pow(10000.0, dims.double() / d_model)
    return torch.where(dims % 2 == 0, angle.sin(), angle.cos()).float()


def sinusoidal_two_i_doubled(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    dims = torch.arange(d_model)
    two_i = (dims // 2 * 2).double()
    angle = position / 10000.0 ** (2 * two_i / d_model)
    return torch.where(dims % 2 == 0, angle.sin(), angle.cos()).float()


def sinusoidal_float32_throughout(max_len, d_model):
    position = torch.arange(max_len).unsqueeze(1).float()
    denominator = 10000 ** (torch.arange(0, d_model, 2).float() / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(position / denominator)
    pe[:, 1::2] = torch.cos(position / denominator)
    return pe


def sinusoidal_sines_then_cosines(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    angle = position / 10000.0 ** (torch.arange(0, d_model, 2).double() / d_model)
    return torch.cat([angle.sin(), angle.cos()], dim=-1).float()


def sinusoidal_stacked_blocks(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    angle = position / 10000.0 ** (torch.arange(0, d_model, 2).double() / d_model)
    return torch.stack([angle.sin(), angle.cos()], dim=1).flatten(1).float()


def sinusoidal_one_row_too_many(max_len, d_model):
    return ref.sinusoidal_encoding(max_len + 1, d_model)


def sinusoidal_linspace_positions(max_len, d_model):
    position = torch.linspace(0, max_len, max_len + 1, dtype=torch.float64).unsqueeze(1)
    dims = torch.arange(d_model)
    angle = position / 10000.0 ** ((dims // 2 * 2).double() / d_model)
    return torch.where(dims % 2 == 0, angle.sin(), angle.cos()).float()


# --- ejercicio 3: la misma codificación con exp y log ----------------------------------


def _exp_form(max_len, d_model, frequency, swap=False, first=0):
    """La forma exponencial con otra frecuencia por par de columnas (o seno y coseno cambiados)."""
    position = torch.arange(first, first + max_len, dtype=torch.float64).unsqueeze(1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angle = position * frequency(two_i, d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = (angle.cos(), angle.sin()) if swap else (angle.sin(), angle.cos())
    return pe.float()


def _frequency(two_i, d_model):
    return torch.exp(-math.log(10000.0) * two_i / d_model)


def exp_without_minus(max_len, d_model):
    return _exp_form(max_len, d_model, lambda two_i, d: torch.exp(math.log(10000.0) * two_i / d))


def exp_two_i_halved(max_len, d_model):
    return _exp_form(
        max_len, d_model, lambda two_i, d: torch.exp(-math.log(10000.0) * two_i / 2 / d)
    )


def exp_two_i_doubled(max_len, d_model):
    return _exp_form(
        max_len, d_model, lambda two_i, d: torch.exp(-math.log(10000.0) * 2 * two_i / d)
    )


def exp_log10(max_len, d_model):
    return _exp_form(max_len, d_model, lambda two_i, d: torch.exp(-math.log10(10000.0) * two_i / d))


def exp_sin_cos_swapped(max_len, d_model):
    return _exp_form(max_len, d_model, _frequency, swap=True)


def exp_positions_from_one(max_len, d_model):
    return _exp_form(max_len, d_model, _frequency, first=1)


def exp_base_1000(max_len, d_model):
    return _exp_form(max_len, d_model, lambda two_i, d: torch.exp(-math.log(1000.0) * two_i / d))


def exp_angle_float32(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)
    angle = position * torch.exp(-math.log(10000.0) * two_i / d_model)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2], pe[:, 1::2] = angle.sin(), angle.cos()
    return pe


def exp_float64(max_len, d_model):
    return ref.sinusoidal_encoding_exp(max_len, d_model).double()


def exp_columns_swapped(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    frequency = torch.exp(torch.arange(0, d_model, 2).double() * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 1::2] = torch.sin(position * frequency)
    pe[:, 0::2] = torch.cos(position * frequency)
    return pe.float()


def exp_positions_plus_one(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1) + 1
    frequency = torch.exp(torch.arange(0, d_model, 2).double() * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * frequency)
    pe[:, 1::2] = torch.cos(position * frequency)
    return pe.float()


def exp_without_log(max_len, d_model):
    return _exp_form(max_len, d_model, lambda two_i, d: torch.exp(-two_i / d))


def exp_base_100000(max_len, d_model):
    return _exp_form(max_len, d_model, lambda two_i, d: torch.exp(-math.log(100000.0) * two_i / d))


def exp_divided_by_frequency(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    frequency = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2).double() / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position / frequency)
    pe[:, 1::2] = torch.cos(position / frequency)
    return pe.float()


def exp_pair_index(max_len, d_model):
    return _exp_form(
        max_len,
        d_model,
        lambda two_i, d: torch.exp(-math.log(10000.0) * torch.arange(d // 2).double() / d),
    )


def exp_torch_log10(max_len, d_model):
    log_base = torch.log10(torch.tensor(10000.0, dtype=torch.float64))
    return _exp_form(max_len, d_model, lambda two_i, d: torch.exp(-log_base * two_i / d))


def exp_returns_double(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    frequency = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2).double() / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * frequency)
    pe[:, 1::2] = torch.cos(position * frequency)
    return pe


def exp_sines_then_cosines(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    frequency = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2).double() / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, : d_model // 2] = torch.sin(position * frequency)
    pe[:, d_model // 2 :] = torch.cos(position * frequency)
    return pe.float()


def exp_one_row_too_many(max_len, d_model):
    position = torch.arange(max_len + 1, dtype=torch.float64).unsqueeze(1)
    frequency = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2).double() / d_model)
    pe = torch.zeros(max_len + 1, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * frequency)
    pe[:, 1::2] = torch.cos(position * frequency)
    return pe.float()


# --- ejercicio 4: PositionalEncoding ---------------------------------------------------


def _check_length(module, x):
    """La comprobación de la referencia: un mutante de otra idea no debe fallar aquí."""
    if x.size(1) > module.pe.size(0):
        raise ValueError("secuencia demasiado larga")


class PositionalEncodingDropoutBeforeSum(ref.PositionalEncoding):
    def forward(self, x):
        _check_length(self, x)
        return self.dropout(x) + self.pe[: x.size(1)]


class PositionalEncodingWithoutDropout(ref.PositionalEncoding):
    def forward(self, x):
        _check_length(self, x)
        return x + self.pe[: x.size(1)]


class PositionalEncodingShifted(ref.PositionalEncoding):
    def forward(self, x):
        _check_length(self, x)
        return self.dropout(x + self.pe[1 : x.size(1) + 1])


class PositionalEncodingWithoutLengthCheck(ref.PositionalEncoding):
    def forward(self, x):
        return self.dropout(x + self.pe[: x.size(1)])


class PositionalEncodingPlainAttribute(nn.Module):
    def __init__(self, d_model, dropout=0.0, max_len=ref.MAX_LEN):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.pe = ref.sinusoidal_encoding(max_len, d_model)

    forward = ref.PositionalEncoding.forward


class PositionalEncodingPersistent(nn.Module):
    def __init__(self, d_model, dropout=0.0, max_len=ref.MAX_LEN):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", ref.sinusoidal_encoding(max_len, d_model))

    forward = ref.PositionalEncoding.forward


class PositionalEncodingParameter(nn.Module):
    def __init__(self, d_model, dropout=0.0, max_len=ref.MAX_LEN):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.pe = nn.Parameter(ref.sinusoidal_encoding(max_len, d_model), requires_grad=False)

    forward = ref.PositionalEncoding.forward


class PositionalEncodingRefusesMaxLen(ref.PositionalEncoding):
    def forward(self, x):
        if x.size(1) >= self.pe.size(0):
            raise ValueError("la secuencia es demasiado larga")
        return self.dropout(x + self.pe[: x.size(1)])


class PositionalEncodingLimitMinusOne(ref.PositionalEncoding):
    def forward(self, x):
        B, T, D = x.shape
        if T > len(self.pe) - 1:
            raise ValueError(f"T={T} supera max_len")
        return self.dropout(x + self.pe[:T])


class PositionalEncodingStoredMaxLen(ref.PositionalEncoding):
    def __init__(self, d_model, dropout=0.0, max_len=ref.MAX_LEN):
        super().__init__(d_model, dropout, max_len)
        self.max_len = max_len

    def forward(self, x):
        if not x.size(1) < self.max_len:
            raise ValueError("la secuencia es demasiado larga")
        return self.dropout(x + self.pe[: x.size(1)])


class PositionalEncodingAssertsLength(ref.PositionalEncoding):
    def forward(self, x):
        assert x.size(1) <= self.pe.size(0), "secuencia demasiado larga"
        return self.dropout(x + self.pe[: x.size(1)])


class PositionalEncodingIndexError(ref.PositionalEncoding):
    def forward(self, x):
        if x.size(1) > self.pe.size(0):
            raise IndexError("secuencia demasiado larga")
        return self.dropout(x + self.pe[: x.size(1)])


class PositionalEncodingSlicedByBatch(ref.PositionalEncoding):
    def forward(self, x):
        if x.size(1) > self.pe.size(0):
            raise ValueError("secuencia demasiado larga")
        return self.dropout(x + self.pe[: x.size(0)])


class PositionalEncodingSlicedByLen(ref.PositionalEncoding):
    def forward(self, x):
        if x.size(1) > self.pe.size(0):
            raise ValueError("secuencia demasiado larga")
        return self.dropout(x + self.pe[: len(x)])


class PositionalEncodingSlicedByWidth(ref.PositionalEncoding):
    def forward(self, x):
        B, T, D = x.shape
        if T > self.pe.size(0):
            raise ValueError("secuencia demasiado larga")
        return self.dropout(x + self.pe[:D])


class PositionalEncodingBatchAxis(nn.Module):
    """La tabla guardada como (1, max_len, D), como en muchos tutoriales."""

    def __init__(self, d_model, dropout=0.0, max_len=ref.MAX_LEN):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        pe = ref.sinusoidal_encoding(max_len, d_model).unsqueeze(0)
        self.register_buffer("pe", pe, persistent=False)

    def forward(self, x):
        if x.size(1) > self.pe.size(1):
            raise ValueError("secuencia demasiado larga")
        return self.dropout(x + self.pe[:, : x.size(1)])


class PositionalEncodingSequenceFirst(nn.Module):
    """La tabla como (max_len, 1, D) del tutorial de PyTorch, con la entrada (B, T, D)."""

    def __init__(self, d_model, dropout=0.0, max_len=ref.MAX_LEN):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        pe = ref.sinusoidal_encoding(max_len, d_model).unsqueeze(1)
        self.register_buffer("pe", pe, persistent=False)

    def forward(self, x):
        if x.size(1) > self.pe.size(0):
            raise ValueError("secuencia demasiado larga")
        return self.dropout(x + self.pe[: x.size(1)].transpose(0, 1))


class PositionalEncodingDropoutFirst(ref.PositionalEncoding):
    def forward(self, x):
        if x.size(1) > self.pe.size(0):
            raise ValueError("secuencia demasiado larga")
        x = self.dropout(x)
        return x + self.pe[: x.size(1)]


class PositionalEncodingFunctionalDropoutFirst(ref.PositionalEncoding):
    def forward(self, x):
        if x.size(1) > self.pe.size(0):
            raise ValueError("secuencia demasiado larga")
        return F.dropout(x, self.dropout.p, self.training) + self.pe[: x.size(1)]


class PositionalEncodingDropoutOnTable(ref.PositionalEncoding):
    def forward(self, x):
        if x.size(1) > self.pe.size(0):
            raise ValueError("secuencia demasiado larga")
        return x + self.dropout(self.pe[: x.size(1)])


class PositionalEncodingDropoutOnTableFirst(ref.PositionalEncoding):
    def forward(self, x):
        if x.size(1) > self.pe.size(0):
            raise ValueError("secuencia demasiado larga")
        pe = self.dropout(self.pe[: x.size(1)])
        return x + pe


class PositionalEncodingDropoutNeverTrains(ref.PositionalEncoding):
    def forward(self, x):
        if x.size(1) > self.pe.size(0):
            raise ValueError("secuencia demasiado larga")
        return F.dropout(x + self.pe[: x.size(1)], self.dropout.p, training=False)


class PositionalEncodingIndexedFromOne(ref.PositionalEncoding):
    def forward(self, x):
        T = x.size(1)
        if T > self.pe.size(0):
            raise ValueError("secuencia demasiado larga")
        return self.dropout(x + self.pe[torch.arange(1, T + 1)])


class PositionalEncodingSkipsFirstRow(ref.PositionalEncoding):
    def forward(self, x):
        T = x.size(1)
        if T > self.pe.size(0):
            raise ValueError("secuencia demasiado larga")
        return self.dropout(x + self.pe[1:][:T])


class PositionalEncodingFrozenAttribute(nn.Module):
    def __init__(self, d_model, dropout=0.0, max_len=ref.MAX_LEN):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.pe = ref.sinusoidal_encoding(max_len, d_model).requires_grad_(False)

    forward = ref.PositionalEncoding.forward


class PositionalEncodingPersistentTrue(nn.Module):
    def __init__(self, d_model, dropout=0.0, max_len=ref.MAX_LEN):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", ref.sinusoidal_encoding(max_len, d_model), persistent=True)

    forward = ref.PositionalEncoding.forward


class PositionalEncodingTrainableParameter(nn.Module):
    def __init__(self, d_model, dropout=0.0, max_len=ref.MAX_LEN):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.register_parameter("pe", nn.Parameter(ref.sinusoidal_encoding(max_len, d_model)))

    forward = ref.PositionalEncoding.forward


class PositionalEncodingScaledTable(ref.PositionalEncoding):
    def forward(self, x):
        B, T, D = x.shape
        _check_length(self, x)
        return self.dropout(x + self.pe[:T] * math.sqrt(D))


class PositionalEncodingScaledFirst(ref.PositionalEncoding):
    def forward(self, x):
        _check_length(self, x)
        return self.dropout(x + math.sqrt(x.size(-1)) * self.pe[: x.size(1)])


class PositionalEncodingScaledBuffer(nn.Module):
    def __init__(self, d_model, dropout=0.0, max_len=ref.MAX_LEN):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        pe = ref.sinusoidal_encoding(max_len, d_model) * math.sqrt(d_model)
        self.register_buffer("pe", pe, persistent=False)

    forward = ref.PositionalEncoding.forward


# --- ejercicio 5: LearnedPositionalEmbedding -------------------------------------------


class LearnedWithoutX(ref.LearnedPositionalEmbedding):
    def forward(self, x):
        return self.embedding(torch.arange(x.size(1), device=x.device))


class LearnedFromOne(ref.LearnedPositionalEmbedding):
    def forward(self, x):
        return x + self.embedding(torch.arange(1, x.size(1) + 1, device=x.device))


class LearnedScaled(ref.LearnedPositionalEmbedding):
    def forward(self, x):
        B, T, D = x.shape
        return x + self.embedding(torch.arange(T, device=x.device)) * math.sqrt(D)


class LearnedSwapped(ref.LearnedPositionalEmbedding):
    def __init__(self, d_model, max_len=ref.MAX_LEN):
        super().__init__(d_model, max_len)
        self.embedding = nn.Embedding(d_model, max_len)


class LearnedRowsOnly(ref.LearnedPositionalEmbedding):
    def forward(self, x):
        return self.embedding.weight[: x.size(1)]


class LearnedRowsFromOne(ref.LearnedPositionalEmbedding):
    def forward(self, x):
        return x + self.embedding.weight[1 : x.size(1) + 1]


class LearnedPositionsPlusOne(ref.LearnedPositionalEmbedding):
    def forward(self, x):
        positions = torch.arange(x.size(1), device=x.device) + 1
        return x + self.embedding(positions)


class LearnedScaledByRoot(ref.LearnedPositionalEmbedding):
    def forward(self, x):
        positions = torch.arange(x.size(1), device=x.device)
        return x + self.embedding(positions) * self.embedding.embedding_dim**0.5


class LearnedSwappedByKeyword(ref.LearnedPositionalEmbedding):
    def __init__(self, d_model, max_len=ref.MAX_LEN):
        super().__init__(d_model, max_len)
        self.embedding = nn.Embedding(num_embeddings=d_model, embedding_dim=max_len)


class LearnedArangeWidth(ref.LearnedPositionalEmbedding):
    def forward(self, x):
        B, T, D = x.shape
        return x + self.embedding(torch.arange(D, device=x.device))


class LearnedArangeLastAxis(ref.LearnedPositionalEmbedding):
    def forward(self, x):
        return x + self.embedding(torch.arange(x.size(-1), device=x.device))


class LearnedArangeBatch(ref.LearnedPositionalEmbedding):
    def forward(self, x):
        return x + self.embedding(torch.arange(len(x), device=x.device))


class LearnedArangeFirstAxis(ref.LearnedPositionalEmbedding):
    def forward(self, x):
        positions = torch.arange(x.shape[0], device=x.device)
        return x + self.embedding(positions)


class LearnedDetached(ref.LearnedPositionalEmbedding):
    def forward(self, x):
        positions = torch.arange(x.size(1), device=x.device)
        return x + self.embedding(positions).detach()


class LearnedUnderNoGrad(ref.LearnedPositionalEmbedding):
    def forward(self, x):
        with torch.no_grad():
            table = self.embedding(torch.arange(x.size(1), device=x.device))
        return x + table


class LearnedFrozenTable(ref.LearnedPositionalEmbedding):
    def __init__(self, d_model, max_len=ref.MAX_LEN):
        super().__init__(d_model, max_len)
        self.embedding.weight.requires_grad_(False)


# Un mensaje por idea: todas las formas de una idea lo comparten.
UNSCALED = "¿Falta multiplicar por √D?"
TIMES_D = "Se multiplica por √D, no por D."
OVER_SQRT_D = "Se multiplica por √D, no se divide."
VOCAB_FACTOR = "El factor usa D (d_model), no el tamaño del vocabulario."
SWAPPED_TABLE = (
    "¿Están cambiados los argumentos de nn.Embedding? Es nn.Embedding(filas, D): una fila"
    " por token (o por posición) y D columnas."
)
DETACHED = "¿Usas detach() o torch.no_grad() en forward? La tabla no recibiría gradiente."
PADDING = (
    "¿Tratas aparte el token 0 (padding_idx=0 o anulando su salida)? El enunciado no lo"
    " pide: el token 0 se embebe como cualquier otro y su fila recibe gradiente."
)
SWAPPED_SINE = "¿Están cambiados seno y coseno? Las columnas pares llevan el seno."
FROM_ONE = "Las posiciones empiezan en 0, no en 1."
BLOCKS = (
    "¿Pones todos los senos y después todos los cosenos? Van intercalados: la columna 2i"
    " lleva el seno y la 2i + 1 el coseno."
)
EXTRA_ROW = "¿Una fila de más? Hay max_len posiciones, de 0 a max_len − 1: arange(max_len)."
BASE_1000 = "¿Usas 1000 como base? El ángulo es posición / 10000^(2i/D)."
BASE_100000 = "¿Usas 100000 como base? El ángulo es posición / 10000^(2i/D)."
BASE_E = "¿Usas e como base (exp sin log)? El ángulo es posición / 10000^(2i/D)."
FLOAT32 = "¿calculas el ángulo en float32?"
FLOAT64 = "Devuelve float32: convierte el resultado con .float() al final."
FREQUENCY_UP = (
    "La frecuencia baja con la columna: se divide la posición entre 10000^(2i/D) (en la"
    " forma exp, exp(−log(10000) · 2i/D), con el signo menos)."
)
PAIR_INDEX = (
    "El exponente es 2i/D con 2i = 0, 0, 2, 2, …; parece que usas i = 0, 0, 1, 1, …"
    " (o divides two_i entre 2)."
)
TWO_I_DOUBLED = "two_i ya vale 0, 2, 4, …: no lo multipliques por 2."
COLUMN_EXPONENT = (
    "Cada par de columnas (2i, 2i + 1) comparte frecuencia: el exponente es 2⌊j/2⌋/D, no j/D."
)
EXPONENT_2J = (
    "El exponente es 2i/D con 2i = 0, 0, 2, 2, …; parece que usas 2j/D con j el índice de columna."
)
LOG10 = "¿Usas log10? La fórmula lleva el logaritmo natural."
AT_LIMIT = (
    "Con T = max_len la tabla tiene justo las filas necesarias: lanza ValueError solo si"
    " T > max_len."
)
NO_LENGTH_CHECK = "Con T > max_len, PositionalEncoding debe lanzar ValueError"
LENGTH_AXIS = (
    "¿Tomas las posiciones con otro tamaño que T? Las filas de la tabla son posiciones:"
    " pe[:T] o arange(T), con T = x.size(1), no B = x.size(0) (ni len(x)) ni D = x.size(-1)."
)
EXTRA_AXIS = (
    "`pe` tiene un eje de más: guárdala con forma (max_len, D), sin eje de lote;"
    " x + pe[:T] ya se difunde sobre B."
)
DROPOUT_AFTER_SUM = (
    "El dropout va después de la suma: se aplica a x + pe, no a uno solo de los sumandos."
)
NO_DROPOUT = "¿Aplicas self.dropout?"
PLAIN_ATTRIBUTE = "Registra la tabla con self.register_buffer('pe', ...)"
PERSISTENT = "`pe` no debe entrar en el state_dict: regístralo con persistent=False."
PARAMETER = "`pe` es un buffer, no un nn.Parameter"
PE_SCALED = (
    "La codificación sinusoidal se suma tal cual: no se multiplica por √D (eso es cosa de"
    " TokenEmbedding)."
)
WITHOUT_X = "¿Falta sumar x a las filas de la tabla?"
LEARNED_SCALED = (
    "La codificación aprendida no se multiplica por √D (eso es cosa de TokenEmbedding)."
)

MISTAKES = [
    *for_exercise(
        "ej1_embedding",
        "TokenEmbedding",
        (TokenEmbeddingUnscaled, UNSCALED),
        (TokenEmbeddingFunctionalUnscaled, UNSCALED),
        (TokenEmbeddingScaledAtInit, UNSCALED),
        (TokenEmbeddingTimesD, TIMES_D),
        (TokenEmbeddingTimesWidth, TIMES_D),
        (TokenEmbeddingTimesLastAxis, TIMES_D),
        (TokenEmbeddingOverSqrtD, OVER_SQRT_D),
        (TokenEmbeddingPowerMinusHalf, OVER_SQRT_D),
        (TokenEmbeddingOverRoot, OVER_SQRT_D),
        (TokenEmbeddingSqrtVocab, VOCAB_FACTOR),
        (TokenEmbeddingSqrtRows, VOCAB_FACTOR),
        (TokenEmbeddingSwapped, SWAPPED_TABLE),
        (TokenEmbeddingSwappedByKeyword, SWAPPED_TABLE),
        (TokenEmbeddingDetached, DETACHED),
        (TokenEmbeddingUnderNoGrad, DETACHED),
        (TokenEmbeddingPaddingIdx, PADDING),
        (TokenEmbeddingPaddingIdxByName, PADDING),
        (TokenEmbeddingPaddingZeroed, PADDING),
        (TokenEmbeddingPaddingMaskedFill, PADDING),
    ),
    *for_exercise(
        "ej2_senoidal",
        "sinusoidal_encoding",
        (sinusoidal_sin_cos_swapped, SWAPPED_SINE),
        (sinusoidal_odd_columns_sine, SWAPPED_SINE),
        (sinusoidal_cos_sin_interleaved, SWAPPED_SINE),
        (sinusoidal_sines_then_cosines, BLOCKS),
        (sinusoidal_stacked_blocks, BLOCKS),
        (sinusoidal_one_row_too_many, EXTRA_ROW),
        (sinusoidal_linspace_positions, EXTRA_ROW),
        (sinusoidal_exponent_j, COLUMN_EXPONENT),
        (sinusoidal_exponent_column_pow, COLUMN_EXPONENT),
        (
            sinusoidal_exponent_2j,
            EXPONENT_2J,
        ),
        (sinusoidal_exponent_even_steps, EXPONENT_2J),
        (sinusoidal_exponent_i, PAIR_INDEX),
        (sinusoidal_exponent_pair_index, PAIR_INDEX),
        (sinusoidal_two_i_doubled, TWO_I_DOUBLED),
        (sinusoidal_positions_from_one, FROM_ONE),
        (sinusoidal_positions_plus_one, FROM_ONE),
        (sinusoidal_multiplied, FREQUENCY_UP),
        (sinusoidal_times_power, FREQUENCY_UP),
        (sinusoidal_base_1000, BASE_1000),
        (sinusoidal_base_e, BASE_E),
        (sinusoidal_base_100000, BASE_100000),
        (sinusoidal_angle_float32, FLOAT32),
        (sinusoidal_float32_throughout, FLOAT32),
        (sinusoidal_float64, FLOAT64),
    ),
    *for_exercise(
        "ej3_senoidal_exp",
        "sinusoidal_encoding_exp",
        (exp_without_minus, FREQUENCY_UP),
        (exp_divided_by_frequency, FREQUENCY_UP),
        (exp_two_i_halved, PAIR_INDEX),
        (exp_pair_index, PAIR_INDEX),
        (exp_two_i_doubled, TWO_I_DOUBLED),
        (exp_log10, LOG10),
        (exp_torch_log10, LOG10),
        (exp_sin_cos_swapped, SWAPPED_SINE),
        (exp_columns_swapped, SWAPPED_SINE),
        (exp_sines_then_cosines, BLOCKS),
        (exp_one_row_too_many, EXTRA_ROW),
        (exp_positions_from_one, FROM_ONE),
        (exp_positions_plus_one, FROM_ONE),
        (exp_base_1000, BASE_1000),
        (exp_base_100000, BASE_100000),
        (exp_without_log, BASE_E),
        (exp_angle_float32, FLOAT32),
        (exp_float64, FLOAT64),
        (exp_returns_double, FLOAT64),
    ),
    *for_exercise(
        "ej4_posicional",
        "PositionalEncoding",
        (PositionalEncodingDropoutBeforeSum, DROPOUT_AFTER_SUM),
        (PositionalEncodingDropoutFirst, DROPOUT_AFTER_SUM),
        (PositionalEncodingFunctionalDropoutFirst, DROPOUT_AFTER_SUM),
        (PositionalEncodingDropoutOnTable, DROPOUT_AFTER_SUM),
        (PositionalEncodingDropoutOnTableFirst, DROPOUT_AFTER_SUM),
        (PositionalEncodingWithoutDropout, NO_DROPOUT),
        (PositionalEncodingDropoutNeverTrains, NO_DROPOUT),
        (PositionalEncodingShifted, FROM_ONE),
        (PositionalEncodingIndexedFromOne, FROM_ONE),
        (PositionalEncodingSkipsFirstRow, FROM_ONE),
        (PositionalEncodingWithoutLengthCheck, NO_LENGTH_CHECK),
        (PositionalEncodingAssertsLength, NO_LENGTH_CHECK),
        (PositionalEncodingIndexError, NO_LENGTH_CHECK),
        (PositionalEncodingRefusesMaxLen, AT_LIMIT),
        (PositionalEncodingLimitMinusOne, AT_LIMIT),
        (PositionalEncodingStoredMaxLen, AT_LIMIT),
        (PositionalEncodingSlicedByBatch, LENGTH_AXIS),
        (PositionalEncodingSlicedByLen, LENGTH_AXIS),
        (PositionalEncodingSlicedByWidth, LENGTH_AXIS),
        (PositionalEncodingScaledTable, PE_SCALED),
        (PositionalEncodingScaledFirst, PE_SCALED),
        (PositionalEncodingScaledBuffer, PE_SCALED),
        (PositionalEncodingBatchAxis, EXTRA_AXIS),
        (PositionalEncodingSequenceFirst, EXTRA_AXIS),
        (PositionalEncodingPlainAttribute, PLAIN_ATTRIBUTE),
        (PositionalEncodingFrozenAttribute, PLAIN_ATTRIBUTE),
        (PositionalEncodingPersistent, PERSISTENT),
        (PositionalEncodingPersistentTrue, PERSISTENT),
        (PositionalEncodingParameter, PARAMETER),
        (PositionalEncodingTrainableParameter, PARAMETER),
    ),
    *for_exercise(
        "ej5_aprendida",
        "LearnedPositionalEmbedding",
        (LearnedWithoutX, WITHOUT_X),
        (LearnedRowsOnly, WITHOUT_X),
        (LearnedFromOne, FROM_ONE),
        (LearnedRowsFromOne, FROM_ONE),
        (LearnedPositionsPlusOne, FROM_ONE),
        (LearnedScaled, LEARNED_SCALED),
        (LearnedScaledByRoot, LEARNED_SCALED),
        (LearnedSwapped, SWAPPED_TABLE),
        (LearnedSwappedByKeyword, SWAPPED_TABLE),
        (LearnedDetached, DETACHED),
        (LearnedUnderNoGrad, DETACHED),
        (LearnedFrozenTable, DETACHED),
        (LearnedArangeWidth, LENGTH_AXIS),
        (LearnedArangeLastAxis, LENGTH_AXIS),
        (LearnedArangeBatch, LENGTH_AXIS),
        (LearnedArangeFirstAxis, LENGTH_AXIS),
    ),
]
