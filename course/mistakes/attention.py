"""Errores típicos del laboratorio 1 (atención por producto escalar escalado).

Cada mutante es la referencia con un solo error. Nunca llega al estudiante.
"""

import math

import torch
import torch.nn.functional as F

from course.mistakes import for_exercise
from course.reference import attention as ref

LAB = "01_atencion"


# --- los mensajes: uno por idea, compartido por todas sus formas -------------------------

NO_SCALE = "¿Falta dividir entre √d_k?"
OVER_D_K = "¿Divides entre d_k en lugar de entre su raíz cuadrada?"
TIMES_SQRT = "¿Multiplicas por √d_k en lugar de dividir?"
WRONG_D_K = "¿Tomas d_k del eje equivocado? d_k es el tamaño del último eje de `query`."
TRANSPOSE_AXES = (
    "¿Traspones solo los dos últimos ejes de key? Usa key.transpose(-2, -1), que vale con"
    " cualquier número de ejes delante (lote, cabezas)."
)
NO_MAX = "¿Restas el máximo de cada fila antes de la exponencial? Sin restarlo, exp(1000) es inf."
OVER_EVERYTHING = (
    "¿Sumas todo el tensor en lugar de cada fila? Suma sobre el último eje con keepdim=True."
)
WRONG_AXIS = "¿Normalizas sobre otro eje? El softmax va sobre el último (dim=-1): cada fila suma 1."
SUM_KEEPDIM = "¿Falta keepdim=True en la suma? Sin él, cada fila se divide entre la suma de otra."
MAX_KEEPDIM = "¿Falta keepdim=True en el máximo? Sin él, a cada fila se le resta el máximo de otra."
MASK_INVERTED = "¿La máscara está invertida? En el curso, True = se puede atender."
NO_QUERY_AXIS = "¿Falta el eje de tamaño 1 de las consultas? Añádelo con unsqueeze."
AXIS_AT_END = "¿El eje de tamaño 1 está al final? Va entre el lote y las claves: (B, 1, T)."
FIXED_ZERO = "¿Comparas con 0 en lugar de con `pad_idx`?"
NOT_BOOL = "¿La máscara es de números? Debe ser booleana (dtype=torch.bool)."
MASK_TRANSPOSED = "¿La máscara está traspuesta? La fila es la consulta: usa tril, no triu."
NO_DIAGONAL = "¿Falta la diagonal? Cada posición puede atenderse a sí misma."
OUTPUT_ONLY = "¿Devuelves la pareja (salida, pesos)? Parece que devuelves solo la salida."
PAIR_SWAPPED = "¿Devuelves la pareja en el orden (salida, pesos)?"
MASK_AFTER_SOFTMAX = (
    "¿Aplicas la máscara antes del softmax? Hay que poner -inf en las puntuaciones."
)
NAN_ROWS = (
    "¿Vuelves a poner a 0 los pesos donde la máscara es False? En una fila sin"
    " posiciones permitidas el softmax calcula -inf - (-inf) = nan."
)
FILL_ZERO = (
    "¿Rellenas con 0 en lugar de -inf? exp(0) = 1: la posición tapada sigue recibiendo peso."
)
QK_SWAPPED = "¿Cambias query y key? Las puntuaciones son Q Kᵀ: la fila es la consulta."
BLOCKED_ROW = (
    "¿Vuelves a poner a 0 los pesos donde la máscara es False? Una fila sin posiciones"
    " permitidas debe dar pesos y salida 0."
)
AXIS_IN_FRONT = (
    "¿El eje de tamaño 1 está delante del lote? Va entre el lote y las claves: (B, 1, T)."
)
MASK_NONE = "¿Compruebas `if mask is not None`? Sin máscara, `mask` vale None."


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


# --- más formas de cada idea (otra API, otro lugar, el mismo efecto) ---------------------


def scores_without_scale_matmul(query, key):
    return torch.matmul(query, key.mT)


def scores_without_scale_unassigned(query, key):
    scores = query @ key.transpose(-2, -1)
    scores / math.sqrt(query.size(-1))  # noqa: B018 (el error: el resultado no se guarda)
    return scores


def scores_without_scale_broadcast(query, key):
    return (query.unsqueeze(-2) * key.unsqueeze(-3)).sum(dim=-1)


def scores_over_d_k_both_scaled(query, key):
    scale = math.sqrt(query.size(-1))
    return (query / scale) @ (key / scale).transpose(-2, -1)


def scores_over_d_k_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key) / query.shape[-1]


def scores_times_sqrt_d_k_negative_power(query, key):
    return query @ key.transpose(-2, -1) / query.size(-1) ** -0.5


def scores_times_sqrt_d_k_matmul(query, key):
    return torch.matmul(query, key.mT) * math.sqrt(key.shape[-1])


def scores_over_sqrt_len(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(len(query))


def scores_over_sqrt_keys(query, key):
    return torch.matmul(query, key.mT) / math.sqrt(key.size(-2))


def scores_key_t(query, key):
    return query @ key.t() / math.sqrt(query.size(-1))


def scores_key_transpose_0_1(query, key):
    return query @ key.transpose(0, 1) / math.sqrt(query.size(-1))


def scores_key_transpose_1_2(query, key):
    return query @ key.transpose(1, 2) / math.sqrt(query.size(-1))


def softmax_without_max_torch_exp(x):
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)


def softmax_without_max_unsqueeze(x):
    exp = x.exp()
    return exp / exp.sum(dim=-1).unsqueeze(-1)


def softmax_over_everything_torch_sum(x):
    exp = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return exp / torch.sum(exp)


def softmax_over_everything_global_max(x):
    exp = torch.exp(x - torch.max(x))
    return exp / torch.sum(exp)


def softmax_over_penultimate_axis(x):
    exp = (x - x.amax(dim=-2, keepdim=True)).exp()
    return exp / exp.sum(dim=-2, keepdim=True)


def softmax_over_first_axis_broadcast(x):
    exp = torch.exp(x - x.amax(dim=0))
    return exp / exp.sum(dim=0)


def softmax_sum_without_keepdim_torch_sum(x):
    exp = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return exp / torch.sum(exp, dim=-1)


def softmax_sum_unsqueezed_in_front(x):
    exp = (x - x.amax(dim=-1, keepdim=True)).exp()
    return exp / exp.sum(dim=-1).unsqueeze(0)


def softmax_max_values_without_keepdim(x):
    exp = torch.exp(x - x.max(dim=-1).values)
    return exp / exp.sum(dim=-1, keepdim=True)


def softmax_max_index_without_keepdim(x):
    exp = (x - torch.max(x, -1)[0]).exp()
    return exp / torch.sum(exp, dim=-1, keepdim=True)


def padding_mask_inverted_eq(tokens, pad_idx):
    return tokens.eq(pad_idx)[:, None, :]


def padding_mask_inverted_tilde(tokens, pad_idx):
    return ~(tokens != pad_idx).unsqueeze(1)


def padding_mask_without_query_axis_ne(tokens, pad_idx):
    return tokens.ne(pad_idx)


def padding_mask_without_query_axis_torch(tokens, pad_idx):
    return torch.ne(tokens, pad_idx)


def padding_mask_axis_at_the_end_none(tokens, pad_idx):
    return (tokens != pad_idx)[..., None]


def padding_mask_axis_at_the_end_two(tokens, pad_idx):
    return tokens.ne(pad_idx).unsqueeze(2)


def padding_mask_fixed_zero_bool(tokens, pad_idx):
    return tokens.bool().unsqueeze(-2)


def padding_mask_fixed_zero_positive(tokens, pad_idx):
    return (tokens > 0).unsqueeze(1)


def padding_mask_of_floats(tokens, pad_idx):
    return (tokens != pad_idx).unsqueeze(-2).float()


def padding_mask_of_floats_where(tokens, pad_idx):
    return torch.where(tokens == pad_idx, 0.0, 1.0).unsqueeze(1)


def padding_mask_of_floats_times_one(tokens, pad_idx):
    return (tokens != pad_idx)[:, None, :] * 1.0


def causal_mask_transposed_triu_bool(size):
    return torch.triu(torch.ones(size, size, dtype=torch.bool))


def causal_mask_transposed_arange(size):
    positions = torch.arange(size)
    return positions[:, None] <= positions[None, :]


def causal_mask_transposed_triu_float(size):
    return torch.ones(size, size).triu().bool()


def causal_mask_transposed_swapped_transpose(size):
    return torch.ones(size, size, dtype=torch.bool).tril().transpose(0, 1)


def causal_mask_transposed_keys_after_queries(size):
    positions = torch.arange(size)
    return positions[None, :] >= positions[:, None]


def causal_mask_inverted_tilde(size):
    return ~torch.ones(size, size, dtype=torch.bool).tril()


def causal_mask_inverted_equals_zero(size):
    return torch.tril(torch.ones(size, size)) == 0


def causal_mask_without_diagonal_arange(size):
    positions = torch.arange(size)
    return positions[:, None] > positions[None, :]


def causal_mask_without_diagonal_not_triu(size):
    return ~torch.triu(torch.ones(size, size, dtype=torch.bool))


def causal_mask_of_floats_torch_tril(size):
    return torch.tril(torch.ones(size, size))


def causal_mask_of_floats_arange(size):
    positions = torch.arange(size)
    return (positions[:, None] >= positions[None, :]).float()


def attention_output_only_inline(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ value


def attention_output_only_torch(query, key, value, mask=None):
    return F.scaled_dot_product_attention(query, key, value, attn_mask=mask)


def attention_pair_swapped_inline(query, key, value, mask=None):
    scores = ref.attention_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = ref.softmax(scores)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights, weights @ value


def attention_pair_swapped_tuple(query, key, value, mask=None):
    output, weights = _inline(query, key, value, mask, ref.attention_scores(query, key))
    return (weights, output)


def attention_mask_after_softmax_product(query, key, value, mask=None):
    weights = torch.softmax(ref.attention_scores(query, key), dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ value, weights


def attention_mask_after_softmax_where(query, key, value, mask=None):
    weights = ref.softmax(ref.attention_scores(query, key))
    if mask is not None:
        weights = torch.where(mask, weights, 0.0)
    return torch.matmul(weights, value), weights


def attention_nan_rows_torch_softmax(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_nan_rows_where(query, key, value, mask=None):
    scores = ref.attention_scores(query, key)
    if mask is not None:
        scores = torch.where(mask, scores, -math.inf)
    weights = ref.softmax(scores)
    return torch.matmul(weights, value), weights


def attention_mask_inverted_where(query, key, value, mask=None):
    scores = ref.attention_scores(query, key)
    if mask is not None:
        scores = torch.where(mask, float("-inf"), scores)
    weights = ref.softmax(scores)
    if mask is not None:
        weights = torch.where(mask, 0.0, weights)
    return weights @ value, weights


def attention_mask_inverted_equals_one(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 1, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(mask == 1, 0.0)
    return weights @ value, weights


def _filled_with_zero(query, key, value, mask, fill):
    """La atención de referencia con las posiciones tapadas de las puntuaciones a 0."""
    scores = ref.attention_scores(query, key)
    if mask is not None:
        scores = fill(scores, mask)
    weights = ref.softmax(scores)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ value, weights


def attention_fill_zero(query, key, value, mask=None):
    return _filled_with_zero(query, key, value, mask, lambda s, m: s.masked_fill(~m, 0.0))


def attention_fill_zero_product(query, key, value, mask=None):
    return _filled_with_zero(query, key, value, mask, lambda s, m: s * m)


def attention_fill_zero_where(query, key, value, mask=None):
    return _filled_with_zero(query, key, value, mask, lambda s, m: torch.where(m, s, 0.0))


def attention_query_key_swapped(query, key, value, mask=None):
    return _inline(query, key, value, mask, ref.attention_scores(key, query))


def attention_query_key_swapped_inline(query, key, value, mask=None):
    return _inline(query, key, value, mask, key @ query.transpose(-2, -1) / math.sqrt(key.size(-1)))


def attention_scores_transposed(query, key, value, mask=None):
    return _inline(query, key, value, mask, ref.attention_scores(query, key).mT)


def attention_mask_none_unchecked(query, key, value, mask=None):
    scores = ref.attention_scores(query, key).masked_fill(~mask, float("-inf"))
    weights = ref.softmax(scores).masked_fill(~mask, 0.0)
    return weights @ value, weights


def attention_mask_none_where(query, key, value, mask=None):
    scores = torch.where(mask, ref.attention_scores(query, key), float("-inf"))
    weights = torch.where(mask, torch.softmax(scores, dim=-1), 0.0)
    return weights @ value, weights


def attention_mask_none_equals_zero(query, key, value, mask=None):
    scores = ref.attention_scores(query, key).masked_fill(mask == 0, float("-inf"))
    weights = torch.softmax(scores, dim=-1).masked_fill(mask == 0, 0.0)
    return weights @ value, weights


def attention_inline_without_scale_functional(query, key, value, mask=None):
    return _inline(query, key, value, mask, torch.einsum("...qd,...kd->...qk", query, key))


def attention_inline_times_sqrt_matmul(query, key, value, mask=None):
    scores = torch.matmul(query, key.mT) * math.sqrt(key.size(-1))
    return _inline(query, key, value, mask, scores)


def attention_inline_over_d_k_both_scaled(query, key, value, mask=None):
    scale = query.size(-1) ** 0.5
    return _inline(query, key, value, mask, (query / scale) @ (key / scale).mT)


def attention_inline_over_sqrt_len(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(1))
    return _inline(query, key, value, mask, scores)


def attention_softmax_over_dim_1(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    return _inline(query, key, value, mask, scores, dim=1)


def attention_softmax_over_batch_functional(query, key, value, mask=None):
    return _inline(query, key, value, mask, ref.attention_scores(query, key), dim=-3)


def padding_mask_axis_in_front(tokens, pad_idx):
    return (tokens != pad_idx).unsqueeze(0)


def padding_mask_axis_in_front_none(tokens, pad_idx):
    return (tokens != pad_idx)[None]


def padding_mask_axis_in_front_ne(tokens, pad_idx):
    return tokens.ne(pad_idx)[None, :, :]


def _large_negative(query, key, value, mask, fill):
    """La atención con un número grande y negativo en lugar de -inf y sin volver a poner 0."""
    scores = ref.attention_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(~mask, fill)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_minus_1e9_without_zeros(query, key, value, mask=None):
    return _large_negative(query, key, value, mask, -1e9)


def attention_minus_1e4_without_zeros(query, key, value, mask=None):
    return _large_negative(query, key, value, mask, -1e4)


def attention_finfo_min_without_zeros(query, key, value, mask=None):
    return _large_negative(query, key, value, mask, torch.finfo(query.dtype).min)


def attention_mask_truth_value(query, key, value, mask=None):
    scores = ref.attention_scores(query, key)
    if mask:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = ref.softmax(scores)
    if mask:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ value, weights


def attention_mask_bool_call(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    masked = bool(mask) if mask is not None else False
    if masked:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights.masked_fill(~mask, 0.0) @ value if masked else weights @ value, weights


MISTAKES = [
    *for_exercise(
        "ej1_puntuaciones",
        "attention_scores",
        (scores_without_scale, NO_SCALE),
        (scores_over_d_k, OVER_D_K),
        (scores_over_sqrt_length, WRONG_D_K),
        (scores_times_sqrt_d_k, TIMES_SQRT),
        (scores_without_scale_einsum, NO_SCALE),
        (scores_over_d_k_matmul, OVER_D_K),
        (scores_without_scale_matmul, NO_SCALE),
        (scores_without_scale_unassigned, NO_SCALE),
        (scores_without_scale_broadcast, NO_SCALE),
        (scores_over_d_k_both_scaled, OVER_D_K),
        (scores_over_d_k_einsum, OVER_D_K),
        (scores_times_sqrt_d_k_negative_power, TIMES_SQRT),
        (scores_times_sqrt_d_k_matmul, TIMES_SQRT),
        (scores_over_sqrt_len, WRONG_D_K),
        (scores_over_sqrt_keys, WRONG_D_K),
        (scores_key_t, TRANSPOSE_AXES),
        (scores_key_transpose_0_1, TRANSPOSE_AXES),
        (scores_key_transpose_1_2, TRANSPOSE_AXES),
    ),
    *for_exercise(
        "ej2_softmax",
        "softmax",
        (softmax_without_max, NO_MAX),
        (softmax_over_everything, OVER_EVERYTHING),
        (softmax_over_first_axis, WRONG_AXIS),
        (softmax_sum_without_keepdim, SUM_KEEPDIM),
        (softmax_max_without_keepdim, MAX_KEEPDIM),
        (softmax_over_everything_flat, OVER_EVERYTHING),
        (softmax_without_max_torch_exp, NO_MAX),
        (softmax_without_max_unsqueeze, NO_MAX),
        (softmax_over_everything_torch_sum, OVER_EVERYTHING),
        (softmax_over_everything_global_max, OVER_EVERYTHING),
        (softmax_over_penultimate_axis, WRONG_AXIS),
        (softmax_over_first_axis_broadcast, WRONG_AXIS),
        (softmax_sum_without_keepdim_torch_sum, SUM_KEEPDIM),
        (softmax_sum_unsqueezed_in_front, SUM_KEEPDIM),
        (softmax_max_values_without_keepdim, MAX_KEEPDIM),
        (softmax_max_index_without_keepdim, MAX_KEEPDIM),
    ),
    *for_exercise(
        "ej3_relleno",
        "padding_mask",
        (padding_mask_inverted, MASK_INVERTED),
        (padding_mask_without_query_axis, NO_QUERY_AXIS),
        (padding_mask_axis_at_the_end, AXIS_AT_END),
        (padding_mask_fixed_zero, FIXED_ZERO),
        (padding_mask_inverted_ne, MASK_INVERTED),
        (padding_mask_inverted_eq, MASK_INVERTED),
        (padding_mask_inverted_tilde, MASK_INVERTED),
        (padding_mask_without_query_axis_ne, NO_QUERY_AXIS),
        (padding_mask_without_query_axis_torch, NO_QUERY_AXIS),
        (padding_mask_axis_at_the_end_none, AXIS_AT_END),
        (padding_mask_axis_at_the_end_two, AXIS_AT_END),
        (padding_mask_fixed_zero_bool, FIXED_ZERO),
        (padding_mask_fixed_zero_positive, FIXED_ZERO),
        (padding_mask_of_floats, NOT_BOOL),
        (padding_mask_of_floats_where, NOT_BOOL),
        (padding_mask_of_floats_times_one, NOT_BOOL),
        (padding_mask_axis_in_front, AXIS_IN_FRONT),
        (padding_mask_axis_in_front_none, AXIS_IN_FRONT),
        (padding_mask_axis_in_front_ne, AXIS_IN_FRONT),
    ),
    *for_exercise(
        "ej4_causal",
        "causal_mask",
        (causal_mask_transposed, MASK_TRANSPOSED),
        (causal_mask_inverted, MASK_INVERTED),
        (causal_mask_without_diagonal, NO_DIAGONAL),
        (causal_mask_of_floats, NOT_BOOL),
        (causal_mask_triu_transposed, MASK_TRANSPOSED),
        (causal_mask_transposed_triu_bool, MASK_TRANSPOSED),
        (causal_mask_transposed_arange, MASK_TRANSPOSED),
        (causal_mask_transposed_triu_float, MASK_TRANSPOSED),
        (causal_mask_transposed_swapped_transpose, MASK_TRANSPOSED),
        (causal_mask_transposed_keys_after_queries, MASK_TRANSPOSED),
        (causal_mask_inverted_tilde, MASK_INVERTED),
        (causal_mask_inverted_equals_zero, MASK_INVERTED),
        (causal_mask_without_diagonal_arange, NO_DIAGONAL),
        (causal_mask_without_diagonal_not_triu, NO_DIAGONAL),
        (causal_mask_of_floats_torch_tril, NOT_BOOL),
        (causal_mask_of_floats_arange, NOT_BOOL),
    ),
    *for_exercise(
        "ej5_atencion",
        "scaled_dot_product_attention",
        (attention_output_only, OUTPUT_ONLY),
        (attention_pair_swapped, PAIR_SWAPPED),
        (attention_mask_after_softmax, MASK_AFTER_SOFTMAX),
        (attention_nan_rows, NAN_ROWS),
        (attention_mask_inverted, MASK_INVERTED),
        (attention_inline_without_scale, NO_SCALE),
        (attention_inline_over_d_k, OVER_D_K),
        (attention_inline_times_sqrt_d_k, TIMES_SQRT),
        (attention_inline_over_sqrt_length, WRONG_D_K),
        (attention_softmax_over_queries, WRONG_AXIS),
        (attention_softmax_over_batch, WRONG_AXIS),
        (attention_output_only_inline, OUTPUT_ONLY),
        (attention_output_only_torch, OUTPUT_ONLY),
        (attention_pair_swapped_inline, PAIR_SWAPPED),
        (attention_pair_swapped_tuple, PAIR_SWAPPED),
        (attention_mask_after_softmax_product, MASK_AFTER_SOFTMAX),
        (attention_mask_after_softmax_where, MASK_AFTER_SOFTMAX),
        (attention_nan_rows_torch_softmax, NAN_ROWS),
        (attention_nan_rows_where, NAN_ROWS),
        (attention_mask_inverted_where, MASK_INVERTED),
        (attention_mask_inverted_equals_one, MASK_INVERTED),
        (attention_fill_zero, FILL_ZERO),
        (attention_fill_zero_product, FILL_ZERO),
        (attention_fill_zero_where, FILL_ZERO),
        (attention_query_key_swapped, QK_SWAPPED),
        (attention_query_key_swapped_inline, QK_SWAPPED),
        (attention_scores_transposed, QK_SWAPPED),
        (attention_mask_none_unchecked, MASK_NONE),
        (attention_mask_none_where, MASK_NONE),
        (attention_mask_none_equals_zero, MASK_NONE),
        (attention_inline_without_scale_functional, NO_SCALE),
        (attention_inline_times_sqrt_matmul, TIMES_SQRT),
        (attention_inline_over_d_k_both_scaled, OVER_D_K),
        (attention_inline_over_sqrt_len, WRONG_D_K),
        (attention_softmax_over_dim_1, WRONG_AXIS),
        (attention_softmax_over_batch_functional, WRONG_AXIS),
        (attention_minus_1e9_without_zeros, BLOCKED_ROW),
        (attention_minus_1e4_without_zeros, BLOCKED_ROW),
        (attention_finfo_min_without_zeros, BLOCKED_ROW),
        (attention_mask_truth_value, MASK_NONE),
        (attention_mask_bool_call, MASK_NONE),
    ),
]
