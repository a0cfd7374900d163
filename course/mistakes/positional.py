"""Errores típicos del laboratorio 3 (*embeddings* y codificación posicional).

Cada mutante es la referencia con un solo error. Nunca llega al estudiante.
"""

import math

import torch
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


# --- ejercicio 4: PositionalEncoding ---------------------------------------------------


class PositionalEncodingDropoutBeforeSum(ref.PositionalEncoding):
    def forward(self, x):
        return self.dropout(x) + self.pe[: x.size(1)]


class PositionalEncodingWithoutDropout(ref.PositionalEncoding):
    def forward(self, x):
        return x + self.pe[: x.size(1)]


class PositionalEncodingShifted(ref.PositionalEncoding):
    def forward(self, x):
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


SWAPPED_SINE = "¿Están cambiados seno y coseno? Las columnas pares llevan el seno."
FROM_ONE = "Las posiciones empiezan en 0, no en 1."
BASE = "¿Usas otra base que 10000? El ángulo es posición / 10000^(2i/D)."
FLOAT32 = "¿calculas el ángulo en float32?"
FLOAT64 = "Devuelve float32: convierte el resultado con .float() al final."

MISTAKES = [
    *for_exercise(
        "ej1_embedding",
        "TokenEmbedding",
        (TokenEmbeddingUnscaled, "¿Falta multiplicar por √D?"),
        (TokenEmbeddingTimesD, "Se multiplica por √D, no por D."),
        (TokenEmbeddingOverSqrtD, "Se multiplica por √D, no se divide."),
        (TokenEmbeddingSqrtVocab, "El factor usa D (d_model), no el tamaño del vocabulario."),
        (
            TokenEmbeddingSwapped,
            "¿Están cambiados los argumentos de nn.Embedding? La tabla tiene una fila por token.",
        ),
        (
            TokenEmbeddingDetached,
            "¿Usas detach() o torch.no_grad() en forward? La tabla no recibiría gradiente.",
        ),
    ),
    *for_exercise(
        "ej2_senoidal",
        "sinusoidal_encoding",
        (sinusoidal_sin_cos_swapped, SWAPPED_SINE),
        (
            sinusoidal_exponent_j,
            "Cada par de columnas (2i, 2i + 1) comparte frecuencia: el exponente es 2⌊j/2⌋/D, no j/D.",
        ),
        (
            sinusoidal_exponent_2j,
            "El exponente es 2i/D con 2i = 0, 0, 2, 2, …; parece que usas 2j/D con j el índice de columna.",
        ),
        (
            sinusoidal_exponent_i,
            "El exponente es 2i/D con 2i = 0, 0, 2, 2, …; parece que usas i = 0, 0, 1, 1, …",
        ),
        (sinusoidal_positions_from_one, FROM_ONE),
        (sinusoidal_multiplied, "Se divide la posición entre 10000^(2i/D), no se multiplica."),
        (sinusoidal_float64, FLOAT64),
    ),
    *for_exercise(
        "ej3_senoidal_exp",
        "sinusoidal_encoding_exp",
        (
            exp_without_minus,
            "¿Falta el signo menos dentro de exp? La frecuencia baja con la columna.",
        ),
        (
            exp_two_i_halved,
            "two_i ya vale 0, 2, 4, …: no lo dividas entre 2 (ni uses i en lugar de 2i).",
        ),
        (exp_two_i_doubled, "two_i ya vale 0, 2, 4, …: no lo multipliques por 2."),
        (exp_log10, "¿Usas log10? La fórmula lleva el logaritmo natural."),
        (exp_sin_cos_swapped, SWAPPED_SINE),
        (exp_positions_from_one, FROM_ONE),
        (exp_float64, FLOAT64),
    ),
    *for_exercise(
        "ej4_posicional",
        "PositionalEncoding",
        (
            PositionalEncodingDropoutBeforeSum,
            "El dropout va después de la suma: se aplica a x + pe, no solo a x.",
        ),
        (PositionalEncodingWithoutDropout, "¿Aplicas self.dropout?"),
        (
            PositionalEncodingShifted,
            "Suma las primeras T filas de pe, empezando por la posición 0.",
        ),
        (
            PositionalEncodingWithoutLengthCheck,
            "Con T > max_len, PositionalEncoding debe lanzar ValueError",
        ),
        (PositionalEncodingPlainAttribute, "Registra la tabla con self.register_buffer('pe', ...)"),
        (
            PositionalEncodingPersistent,
            "`pe` no debe entrar en el state_dict: regístralo con persistent=False.",
        ),
        (PositionalEncodingParameter, "`pe` es un buffer, no un nn.Parameter"),
    ),
    *for_exercise(
        "ej5_aprendida",
        "LearnedPositionalEmbedding",
        (LearnedWithoutX, "¿Falta sumar x a las filas de la tabla?"),
        (LearnedFromOne, FROM_ONE),
        (
            LearnedScaled,
            "La codificación aprendida no se multiplica por √D (eso es cosa de TokenEmbedding).",
        ),
        (
            LearnedSwapped,
            "¿Están cambiados los argumentos de nn.Embedding? La tabla tiene una fila por posición.",
        ),
    ),
    *for_exercise(
        "ej1_embedding",
        "TokenEmbedding",
        (
            TokenEmbeddingPaddingIdx,
            "¿Usas padding_idx=0? El enunciado no lo pide: la fila del token 0 no recibiría gradiente.",
        ),
    ),
    *for_exercise(
        "ej2_senoidal",
        "sinusoidal_encoding",
        (sinusoidal_base_1000, BASE),
        (sinusoidal_base_e, BASE),
        (sinusoidal_angle_float32, FLOAT32),
    ),
    *for_exercise(
        "ej3_senoidal_exp",
        "sinusoidal_encoding_exp",
        (exp_base_1000, BASE),
        (exp_angle_float32, FLOAT32),
    ),
]
