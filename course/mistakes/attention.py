"""Errores típicos del laboratorio 1 (atención por producto escalar escalado).

Cada mutante es la referencia con un solo error. Nunca llega al estudiante.
"""

import math

import torch

from course.mistakes import for_exercise
from course.reference import attention as ref

LAB = "01_atencion"


# --- ejercicio 1: puntuaciones ----------------------------------------------------------


def scores_without_scale(query, key):
    return query @ key.transpose(-2, -1)


def scores_over_d_k(query, key):
    return query @ key.transpose(-2, -1) / query.size(-1)


def scores_over_sqrt_length(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.size(-2))


def scores_times_sqrt_d_k(query, key):
    return query @ key.transpose(-2, -1) * math.sqrt(query.size(-1))


# --- ejercicio 2: softmax ---------------------------------------------------------------


def softmax_without_max(x):
    exp = x.exp()
    return exp / exp.sum(dim=-1, keepdim=True)


def softmax_over_everything(x):
    exp = (x - x.amax(dim=-1, keepdim=True)).exp()
    return exp / exp.sum()


def softmax_over_first_axis(x):
    exp = (x - x.amax(dim=0, keepdim=True)).exp()
    return exp / exp.sum(dim=0, keepdim=True)


def softmax_sum_without_keepdim(x):
    exp = (x - x.amax(dim=-1, keepdim=True)).exp()
    return exp / exp.sum(dim=-1)


def softmax_max_without_keepdim(x):
    exp = (x - x.amax(dim=-1)).exp()
    return exp / exp.sum(dim=-1, keepdim=True)


# --- ejercicio 3: máscara de relleno ----------------------------------------------------


def padding_mask_inverted(tokens, pad_idx):
    return (tokens == pad_idx).unsqueeze(-2)


def padding_mask_without_query_axis(tokens, pad_idx):
    return tokens != pad_idx


def padding_mask_axis_at_the_end(tokens, pad_idx):
    return (tokens != pad_idx).unsqueeze(-1)


def padding_mask_fixed_zero(tokens, pad_idx):
    return (tokens != 0).unsqueeze(-2)


# --- ejercicio 4: máscara causal --------------------------------------------------------


def causal_mask_transposed(size):
    return torch.ones(size, size, dtype=torch.bool).triu()


def causal_mask_inverted(size):
    return torch.ones(size, size, dtype=torch.bool).triu(diagonal=1)


def causal_mask_without_diagonal(size):
    return torch.ones(size, size, dtype=torch.bool).tril(diagonal=-1)


def causal_mask_of_floats(size):
    return torch.ones(size, size).tril()


# --- ejercicio 5: la atención completa --------------------------------------------------


def attention_output_only(query, key, value, mask=None):
    return ref.scaled_dot_product_attention(query, key, value, mask)[0]


def attention_pair_swapped(query, key, value, mask=None):
    output, weights = ref.scaled_dot_product_attention(query, key, value, mask)
    return weights, output


def attention_mask_after_softmax(query, key, value, mask=None):
    weights = ref.softmax(ref.attention_scores(query, key))
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ value, weights


def attention_nan_rows(query, key, value, mask=None):
    scores = ref.attention_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = ref.softmax(scores)
    return weights @ value, weights


def attention_mask_inverted(query, key, value, mask=None):
    scores = ref.attention_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = ref.softmax(scores)
    if mask is not None:
        weights = weights.masked_fill(mask, 0.0)
    return weights @ value, weights


# --- la misma idea dentro de la atención completa (puntuaciones y softmax en línea) -------


def _inline(query, key, value, mask, scores, dim=-1):
    """La atención de referencia a partir de unas puntuaciones ya calculadas en línea."""
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=dim)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ value, weights


def attention_inline_without_scale(query, key, value, mask=None):
    return _inline(query, key, value, mask, torch.matmul(query, key.mT))


def attention_inline_over_d_k(query, key, value, mask=None):
    return _inline(query, key, value, mask, query @ key.transpose(-2, -1) / key.shape[-1])


def attention_inline_times_sqrt_d_k(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) * query.shape[-1] ** 0.5
    return _inline(query, key, value, mask, scores)


def attention_inline_over_sqrt_length(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(key.shape[-2])
    return _inline(query, key, value, mask, scores)


def attention_softmax_over_queries(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    return _inline(query, key, value, mask, scores, dim=-2)


def attention_softmax_over_batch(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    return _inline(query, key, value, mask, scores, dim=0)


def scores_without_scale_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key)


def scores_over_d_k_matmul(query, key):
    return torch.matmul(query, key.mT) / key.shape[-1]


def softmax_over_everything_flat(x):
    exp = (x - x.max()).exp()
    return exp / exp.sum()


def padding_mask_inverted_ne(tokens, pad_idx):
    return (tokens != pad_idx).logical_not().unsqueeze(1)


def causal_mask_triu_transposed(size):
    return torch.tril(torch.ones(size, size)).bool().T


NO_SCALE = "¿Falta dividir entre √d_k?"
OVER_D_K = "¿Divides entre d_k en lugar de entre su raíz cuadrada?"
TIMES_SQRT = "¿Multiplicas por √d_k en lugar de dividir?"
WRONG_D_K = "¿Tomas d_k del eje equivocado? d_k es el tamaño del último eje de `query`."
WRONG_AXIS = "¿Normalizas sobre otro eje? El softmax va sobre el último (dim=-1): cada fila suma 1."
MASK_INVERTED = "¿La máscara está invertida? En el curso, True = se puede atender."
MASK_TRANSPOSED = "¿La máscara está traspuesta? La fila es la consulta: usa tril, no triu."
OVER_EVERYTHING = (
    "¿Sumas todo el tensor en lugar de cada fila? Suma sobre el último eje con keepdim=True."
)

MISTAKES = [
    *for_exercise(
        "ej1_puntuaciones",
        "attention_scores",
        (scores_without_scale, "¿Falta dividir entre √d_k?"),
        (scores_over_d_k, "¿Divides entre d_k en lugar de entre su raíz cuadrada?"),
        (
            scores_over_sqrt_length,
            "¿Tomas d_k del eje equivocado? d_k es el tamaño del último eje de `query`.",
        ),
        (scores_times_sqrt_d_k, "¿Multiplicas por √d_k en lugar de dividir?"),
    ),
    *for_exercise(
        "ej2_softmax",
        "softmax",
        (
            softmax_without_max,
            "¿Restas el máximo de cada fila antes de la exponencial? Sin restarlo, exp(1000) es inf.",
        ),
        (
            softmax_over_everything,
            "¿Sumas todo el tensor en lugar de cada fila? Suma sobre el último eje con keepdim=True.",
        ),
        (
            softmax_over_first_axis,
            "¿Normalizas sobre el primer eje? El softmax va sobre el último (dim=-1).",
        ),
        (
            softmax_sum_without_keepdim,
            "¿Falta keepdim=True en la suma? Sin él, cada fila se divide entre la suma de otra.",
        ),
        (
            softmax_max_without_keepdim,
            "¿Falta keepdim=True en el máximo? Sin él, a cada fila se le resta el máximo de otra.",
        ),
    ),
    *for_exercise(
        "ej3_relleno",
        "padding_mask",
        (
            padding_mask_inverted,
            "¿La máscara está invertida? En el curso, True = se puede atender.",
        ),
        (
            padding_mask_without_query_axis,
            "¿Falta el eje de tamaño 1 de las consultas? Añádelo con unsqueeze.",
        ),
        (
            padding_mask_axis_at_the_end,
            "¿El eje de tamaño 1 está al final? Va entre el lote y las claves: (B, 1, T).",
        ),
        (padding_mask_fixed_zero, "¿Comparas con 0 en lugar de con `pad_idx`?"),
    ),
    *for_exercise(
        "ej4_causal",
        "causal_mask",
        (
            causal_mask_transposed,
            "¿La máscara está traspuesta? La fila es la consulta: usa tril, no triu.",
        ),
        (causal_mask_inverted, "¿La máscara está invertida? En el curso, True = se puede atender."),
        (
            causal_mask_without_diagonal,
            "¿Falta la diagonal? Cada posición puede atenderse a sí misma.",
        ),
        (causal_mask_of_floats, "¿La máscara es de números? Debe ser booleana (dtype=torch.bool)."),
    ),
    *for_exercise(
        "ej5_atencion",
        "scaled_dot_product_attention",
        (
            attention_output_only,
            "¿Devuelves la pareja (salida, pesos)? Parece que devuelves solo la salida.",
        ),
        (attention_pair_swapped, "¿Devuelves la pareja en el orden (salida, pesos)?"),
        (
            attention_mask_after_softmax,
            "¿Aplicas la máscara antes del softmax? Hay que poner -inf en las puntuaciones.",
        ),
        (
            attention_nan_rows,
            "¿Vuelves a poner a 0 los pesos donde la máscara es False? En una fila sin"
            " posiciones permitidas el softmax calcula -inf - (-inf) = nan.",
        ),
        (
            attention_mask_inverted,
            "¿Tapas las posiciones donde la máscara es True? En el curso, True = se puede atender.",
        ),
    ),
    *for_exercise(
        "ej1_puntuaciones",
        "attention_scores",
        (scores_without_scale_einsum, NO_SCALE),
        (scores_over_d_k_matmul, OVER_D_K),
    ),
    *for_exercise(
        "ej2_softmax",
        "softmax",
        (softmax_over_everything_flat, OVER_EVERYTHING),
    ),
    *for_exercise(
        "ej3_relleno",
        "padding_mask",
        (padding_mask_inverted_ne, MASK_INVERTED),
    ),
    *for_exercise(
        "ej4_causal",
        "causal_mask",
        (causal_mask_triu_transposed, MASK_TRANSPOSED),
    ),
    *for_exercise(
        "ej5_atencion",
        "scaled_dot_product_attention",
        (attention_inline_without_scale, NO_SCALE),
        (attention_inline_over_d_k, OVER_D_K),
        (attention_inline_times_sqrt_d_k, TIMES_SQRT),
        (attention_inline_over_sqrt_length, WRONG_D_K),
        (attention_softmax_over_queries, WRONG_AXIS),
        (attention_softmax_over_batch, WRONG_AXIS),
    ),
]
