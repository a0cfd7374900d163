"""Errores típicos del laboratorio 4 (atención multicabeza), como mutantes de la referencia.

Cada mutante es la referencia con un solo error realista. Este módulo no va a los
estudiantes: su código vale tanto como una respuesta.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from course.mistakes import for_exercise
from course.reference import multihead as ref
from course.reference.attention import scaled_dot_product_attention

LAB = "04_multicabeza"


# Ejercicio 1 · split_heads


def split_heads_direct_reshape(x, num_heads):
    B, T, D = x.shape
    return x.reshape(B, num_heads, T, D // num_heads)


def split_heads_without_transpose(x, num_heads):
    B, T, D = x.shape
    return x.reshape(B, T, num_heads, D // num_heads)


def split_heads_interleaved(x, num_heads):
    B, T, D = x.shape
    return x.reshape(B, T, D // num_heads, num_heads).permute(0, 3, 1, 2)


def split_heads_contiguous(x, num_heads):
    B, T, D = x.shape
    return x.reshape(B, T, num_heads, D // num_heads).transpose(1, 2).contiguous()


def split_heads_view_direct(x, num_heads):
    B, T, D = x.shape
    return x.view(B, num_heads, T, D // num_heads)


def split_heads_reshape_minus_one(x, num_heads):
    B, T, D = x.shape
    return x.reshape(B, num_heads, -1, D // num_heads)


def split_heads_view_without_transpose(x, num_heads):
    B, T, D = x.shape
    return x.view(B, T, num_heads, -1)


def split_heads_unflatten(x, num_heads):
    return x.unflatten(-1, (num_heads, x.size(-1) // num_heads))


def split_heads_strided_columns(x, num_heads):
    return torch.stack([x[..., h::num_heads] for h in range(num_heads)], dim=1)


def split_heads_interleaved_transposes(x, num_heads):
    B, T, D = x.shape
    return x.reshape(B, T, -1, num_heads).transpose(1, 3).transpose(2, 3)


def split_heads_stacked_chunks(x, num_heads):
    return torch.stack(x.split(x.size(-1) // num_heads, dim=-1), dim=1)


# Ejercicio 2 · merge_heads


def merge_heads_without_transpose(x):
    B, H, T, d_k = x.shape
    return x.reshape(B, T, H * d_k)


def merge_heads_interleaved(x):
    B, H, T, d_k = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, T, H * d_k)


def merge_heads_summed(x):
    return x.sum(dim=1)


def merge_heads_reshape_minus_one(x):
    B, H, T, d_k = x.shape
    return x.reshape(B, T, -1)


def merge_heads_view(x):
    B, H, T, d_k = x.shape
    return x.view(B, T, H * d_k)


def merge_heads_double_transpose(x):
    B, H, T, d_k = x.shape
    return x.transpose(1, 2).transpose(2, 3).reshape(B, T, -1)


def merge_heads_stacked_last(x):
    B, H, T, d_k = x.shape
    return torch.stack(x.unbind(1), dim=-1).reshape(B, T, H * d_k)


def merge_heads_summed_by_loop(x):
    return sum(x[:, h] for h in range(x.size(1)))


def merge_heads_mean(x):
    return x.mean(dim=1)


def merge_heads_cat_tokens(x):
    return torch.cat(x.unbind(1), dim=1)


def merge_heads_reshape_tokens(x):
    B, H, T, d_k = x.shape
    return x.reshape(B, H * T, d_k)


def merge_heads_cat_loop_tokens(x):
    return torch.cat([x[:, h] for h in range(x.size(1))], dim=1)


# Ejercicio 3 · MultiHeadAttention


def _project(mha, query, key, value):
    """Los pasos de la referencia antes de la atención: q, k, v en cabezas (B, H, T, d_k)."""
    q = ref.split_heads(mha.w_q(query), mha.num_heads)
    k = ref.split_heads(mha.w_k(key), mha.num_heads)
    v = ref.split_heads(mha.w_v(value), mha.num_heads)
    return q, k, v


def _head_axis(mask):
    """La máscara de la referencia con el eje de las cabezas: (B, 1, T_q, T_k), o ``None``."""
    return None if mask is None else mask.unsqueeze(-3)


class MultiHeadAttentionWithoutHeadAxis(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        out, weights = scaled_dot_product_attention(q, k, v, mask, self.dropout)
        return self.w_o(ref.merge_heads(out)), weights


class MultiHeadAttentionInvertedMask(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        if mask is not None:
            mask = ~mask.unsqueeze(-3)
        out, weights = scaled_dot_product_attention(q, k, v, mask, self.dropout)
        return self.w_o(ref.merge_heads(out)), weights


class MultiHeadAttentionWithoutBias(ref.MultiHeadAttention):
    def __init__(self, d_model, num_heads, dropout=0.0):
        super().__init__(d_model, num_heads, dropout)
        self.w_q = nn.Linear(d_model, d_model, bias=False)
        self.w_k = nn.Linear(d_model, d_model, bias=False)
        self.w_v = nn.Linear(d_model, d_model, bias=False)
        self.w_o = nn.Linear(d_model, d_model, bias=False)


class MultiHeadAttentionWithoutOutputProjection(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        out, weights = scaled_dot_product_attention(q, k, v, _head_axis(mask), self.dropout)
        return ref.merge_heads(out), weights


class MultiHeadAttentionMergeWithoutTranspose(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        B, T_q, D = query.shape
        q, k, v = _project(self, query, key, value)
        out, weights = scaled_dot_product_attention(q, k, v, _head_axis(mask), self.dropout)
        return self.w_o(out.reshape(B, T_q, D)), weights


class MultiHeadAttentionQueryEverywhere(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, query, query)
        out, weights = scaled_dot_product_attention(q, k, v, _head_axis(mask), self.dropout)
        return self.w_o(ref.merge_heads(out)), weights


class MultiHeadAttentionWithoutDropout(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        out, weights = scaled_dot_product_attention(q, k, v, _head_axis(mask))
        return self.w_o(ref.merge_heads(out)), weights


class MultiHeadAttentionDropoutOnOutput(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        out, weights = scaled_dot_product_attention(q, k, v, _head_axis(mask))
        return self.dropout(self.w_o(ref.merge_heads(out))), weights


class MultiHeadAttentionWithoutValueError(ref.MultiHeadAttention):
    def __init__(self, d_model, num_heads, dropout=0.0):
        nn.Module.__init__(self)
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.w_q, self.w_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)


class MultiHeadAttentionMaskFrontAxis(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        if mask is not None:
            mask = mask.unsqueeze(0)
        out, weights = scaled_dot_product_attention(q, k, v, mask, self.dropout)
        return self.w_o(ref.merge_heads(out)), weights


class MultiHeadAttentionLogicalNotMask(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        if mask is not None:
            mask = mask.unsqueeze(1).logical_not()
        out, weights = scaled_dot_product_attention(q, k, v, mask, self.dropout)
        return self.w_o(ref.merge_heads(out)), weights


class MultiHeadAttentionQKVWithoutBias(ref.MultiHeadAttention):
    def __init__(self, d_model, num_heads, dropout=0.0):
        super().__init__(d_model, num_heads, dropout)
        self.w_q, self.w_k, self.w_v = (nn.Linear(d_model, d_model, bias=False) for _ in range(3))


class MultiHeadAttentionViewWithoutTranspose(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        out, weights = scaled_dot_product_attention(q, k, v, _head_axis(mask), self.dropout)
        return self.w_o(out.view(query.size(0), -1, query.size(-1))), weights


class MultiHeadAttentionSelfOnly(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        key = value = query
        q, k, v = _project(self, query, key, value)
        out, weights = scaled_dot_product_attention(q, k, v, _head_axis(mask), self.dropout)
        return self.w_o(ref.merge_heads(out)), weights


class MultiHeadAttentionDropoutNone(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        out, weights = scaled_dot_product_attention(q, k, v, _head_axis(mask), None)
        return self.w_o(ref.merge_heads(out)), weights


class MultiHeadAttentionFunctionalDropoutOnOutput(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        out, weights = scaled_dot_product_attention(q, k, v, _head_axis(mask))
        out = self.w_o(ref.merge_heads(out))
        return F.dropout(out, self.dropout.p, self.training), weights


class MultiHeadAttentionAssertsDivisible(ref.MultiHeadAttention):
    def __init__(self, d_model, num_heads, dropout=0.0):
        assert d_model % num_heads == 0, "d_model debe ser divisible entre num_heads"
        MultiHeadAttentionWithoutValueError.__init__(self, d_model, num_heads, dropout)


class MultiHeadAttentionAveragedWeights(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        out, weights = super().forward(query, key, value, mask)
        return out, weights.mean(dim=1)


# Ejercicio 4 · multihead_by_loop


def _loop(mha, query, key, value, mask, *, bias=True, head_axis=False):
    H = mha.num_heads
    d_k = query.size(-1) // H
    if head_axis:
        mask = _head_axis(mask)
    outputs, weights = [], []
    for h in range(H):
        rows = slice(h * d_k, (h + 1) * d_k)
        q, k, v = (
            F.linear(t, lin.weight[rows], lin.bias[rows] if bias else None)
            for lin, t in ((mha.w_q, query), (mha.w_k, key), (mha.w_v, value))
        )
        out, w = scaled_dot_product_attention(q, k, v, mask)
        outputs.append(out)
        weights.append(w)
    return outputs, weights


def loop_without_bias(mha, query, key, value, mask=None):
    outputs, weights = _loop(mha, query, key, value, mask, bias=False)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(weights, dim=1)


def loop_without_output_projection(mha, query, key, value, mask=None):
    outputs, weights = _loop(mha, query, key, value, mask)
    return torch.cat(outputs, dim=-1), torch.stack(weights, dim=1)


def loop_stack_heads_first(mha, query, key, value, mask=None):
    outputs, weights = _loop(mha, query, key, value, mask)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(weights, dim=0)


def loop_mask_with_head_axis(mha, query, key, value, mask=None):
    outputs, weights = _loop(mha, query, key, value, mask, head_axis=True)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(weights, dim=1)


def loop_matmul_without_bias(mha, query, key, value, mask=None):
    H = mha.num_heads
    d_k = query.size(-1) // H
    outputs, weights = [], []
    for h in range(H):
        rows = slice(h * d_k, (h + 1) * d_k)
        q = query @ mha.w_q.weight[rows].T
        k = key @ mha.w_k.weight[rows].T
        v = value @ mha.w_v.weight[rows].T
        out, w = scaled_dot_product_attention(q, k, v, mask)
        outputs.append(out)
        weights.append(w)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(weights, dim=1)


def loop_concatenation_only(mha, query, key, value, mask=None):
    outputs, weights = _loop(mha, query, key, value, mask)
    return torch.cat(outputs, dim=2), torch.stack(weights, dim=1)


def loop_stack_default_axis(mha, query, key, value, mask=None):
    outputs, weights = _loop(mha, query, key, value, mask)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(weights)


def loop_mask_unsqueezed(mha, query, key, value, mask=None):
    if mask is not None:
        mask = mask.unsqueeze(1)
    outputs, weights = _loop(mha, query, key, value, mask)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(weights, dim=1)


def loop_averaged_weights(mha, query, key, value, mask=None):
    outputs, weights = _loop(mha, query, key, value, mask)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(weights, dim=1).mean(dim=1)


def loop_summed_weights_over_heads(mha, query, key, value, mask=None):
    outputs, weights = _loop(mha, query, key, value, mask)
    return mha.w_o(torch.cat(outputs, dim=-1)), sum(weights) / len(weights)


# Ejercicio 5 · attention_entropy


def entropy_nan_at_zero(weights):
    return -(weights * weights.log()).sum(dim=-1)


def entropy_epsilon_in_log(weights):
    return -(weights * torch.log(weights + 1e-9)).sum(dim=-1)


def entropy_without_minus(weights):
    return torch.special.xlogy(weights, weights).sum(dim=-1)


def entropy_log2(weights):
    return -(torch.special.xlogy(weights, weights) / torch.log(torch.tensor(2.0))).sum(dim=-1)


def entropy_summed_over_everything(weights):
    return -torch.special.xlogy(weights, weights).sum()


def entropy_mean(weights):
    return -torch.special.xlogy(weights, weights).mean(dim=-1)


def entropy_over_first_axis(weights):
    return -torch.special.xlogy(weights, weights).sum(dim=0)


def entropy_over_queries(weights):
    return -torch.special.xlogy(weights, weights).sum(dim=-2)


def entropy_log_nan(weights):
    return -(weights * torch.log(weights)).sum(dim=-1)


def entropy_nan_to_num_without_minus(weights):
    return (weights * weights.log()).nan_to_num().sum(dim=-1)


def entropy_negated_entr(weights):
    return -torch.special.entr(weights).sum(dim=-1)


def entropy_torch_log2(weights):
    return -(weights * torch.log2(weights)).nan_to_num().sum(dim=-1)


def entropy_over_log_two(weights):
    return torch.special.xlogy(weights, weights).sum(dim=-1) / -math.log(2.0)


def entropy_entr_summed_over_everything(weights):
    return torch.special.entr(weights).sum()


def entropy_nansum(weights):
    return -(weights * weights.log()).nansum()


def entropy_sum_over_length(weights):
    return -torch.special.xlogy(weights, weights).sum(dim=-1) / weights.size(-1)


def entropy_entr_mean(weights):
    return torch.special.entr(weights).mean(dim=-1)


# La misma idea escrita en línea dentro de MultiHeadAttention (sin la atención del lab. 1)


class _InlineAttention(ref.MultiHeadAttention):
    """Puntuaciones, máscara y softmax escritos en ``forward``; cada mutante cambia uno."""

    def scores(self, q, k):
        return q @ k.transpose(-2, -1) / math.sqrt(self.d_k)

    axis = -1

    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        scores = self.scores(q, k)
        if mask is not None:
            mask = mask.unsqueeze(-3)
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=self.axis)
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)
        weights = self.dropout(weights)
        return self.w_o(ref.merge_heads(weights @ v)), weights


class InlineWithoutScale(_InlineAttention):
    def scores(self, q, k):
        return q @ k.transpose(-2, -1)


class InlineScaledByModelWidth(_InlineAttention):
    def scores(self, q, k):
        return q @ k.transpose(-2, -1) / math.sqrt(self.num_heads * self.d_k)


class InlineOverDK(_InlineAttention):
    def scores(self, q, k):
        return q @ k.transpose(-2, -1) / self.d_k


class InlineSoftmaxOverQueries(_InlineAttention):
    axis = -2


class InlineSoftmaxDimTwo(_InlineAttention):
    axis = 2


class InlineEinsumWithoutScale(_InlineAttention):
    def scores(self, q, k):
        return torch.einsum("bhqd,bhkd->bhqk", q, k)


class InlineMatmulWithoutScale(_InlineAttention):
    def scores(self, q, k):
        return torch.matmul(q, k.transpose(-1, -2))


class InlineScaledByInputWidth(_InlineAttention):
    def scores(self, q, k):
        return q @ k.transpose(-2, -1) / math.sqrt(self.w_q.in_features)


class InlineTimesInverseDK(_InlineAttention):
    def scores(self, q, k):
        return q @ k.transpose(-2, -1) * (1.0 / self.d_k)


class _InlineForward(ref.MultiHeadAttention):
    """La atención entera escrita en ``forward``, con una variación por mutante."""

    head_axis = -3  # dónde va el eje de las cabezas en la máscara; None: sin él
    invert = False
    project_output = True
    keep_dropout = True
    merge_transposed = True

    def forward(self, query, key, value, mask=None):
        B, T_q, D = query.shape
        q, k, v = _project(self, query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            mask = mask if self.head_axis is None else mask.unsqueeze(self.head_axis)
            blocked = mask if self.invert else ~mask
            scores = scores.masked_fill(blocked, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(blocked, 0.0)
        dropped = self.dropout(weights) if self.keep_dropout else weights
        out = dropped @ v
        out = (out.transpose(1, 2) if self.merge_transposed else out).reshape(B, T_q, D)
        return (self.w_o(out) if self.project_output else out), weights


class InlineWithoutHeadAxis(_InlineForward):
    head_axis = None


class InlineMaskedWhereAllowed(_InlineForward):
    invert = True


class InlineWithoutOutputProjection(_InlineForward):
    project_output = False


class InlineWithoutDropout(_InlineForward):
    keep_dropout = False


class InlineQueryEverywhere(_InlineForward):
    def forward(self, query, key, value, mask=None):
        return super().forward(query, query, query, mask)


class InlineMergeWithoutTranspose(_InlineForward):
    merge_transposed = False


class InlineMinusBillionWithoutHeadAxis(ref.MultiHeadAttention):
    """Como The Annotated Transformer (``masked_fill(mask == 0, -1e9)``), sin el eje de las cabezas."""

    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        weights = scores.softmax(dim=-1)
        return self.w_o(ref.merge_heads(self.dropout(weights) @ v)), weights


class MultiHeadAttentionMaskIndexedNone(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        out, weights = scaled_dot_product_attention(
            q, k, v, None if mask is None else mask[None], self.dropout
        )
        return self.w_o(ref.merge_heads(out)), weights


class MultiHeadAttentionReshapedToWidth(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        out, weights = scaled_dot_product_attention(q, k, v, _head_axis(mask), self.dropout)
        merged = out.reshape(out.size(0), -1, self.num_heads * self.d_k)
        return self.w_o(merged), weights


class MultiHeadAttentionReshapedLikeQuery(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        out, weights = scaled_dot_product_attention(q, k, v, _head_axis(mask), self.dropout)
        return self.w_o(out.reshape(query.shape)), weights


class MultiHeadAttentionWithoutMask(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        out, weights = scaled_dot_product_attention(q, k, v, None, self.dropout)
        return self.w_o(ref.merge_heads(out)), weights


class MultiHeadAttentionMaskForgottenWithKeyword(ref.MultiHeadAttention):
    """Llama a la atención con ``dropout=`` por nombre y se olvida de la máscara."""

    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        out, weights = scaled_dot_product_attention(q, k, v, dropout=self.dropout)
        return self.w_o(ref.merge_heads(out)), weights


class InlineIgnoresMask(_InlineForward):
    def forward(self, query, key, value, mask=None):
        return super().forward(query, key, value, None)


class MultiHeadAttentionMaskAxisOne(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        if mask is not None:
            mask = mask.unsqueeze(1)
        out, weights = scaled_dot_product_attention(q, k, v, mask, self.dropout)
        return self.w_o(ref.merge_heads(out)), weights


class MultiHeadAttentionMaskIndexedAxisOne(ref.MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        q, k, v = _project(self, query, key, value)
        mask = None if mask is None else mask[:, None]
        out, weights = scaled_dot_product_attention(q, k, v, mask, self.dropout)
        return self.w_o(ref.merge_heads(out)), weights


class InlineMaskAxisOne(_InlineForward):
    head_axis = 1


class InlineAveragedWeights(_InlineForward):
    def forward(self, query, key, value, mask=None):
        out, weights = super().forward(query, key, value, mask)
        return out, weights.mean(1)


# Un mensaje por idea: todas las formas de una idea lo comparten.
NO_SCALE = "¿Falta dividir entre √d_k?"
OTHER_SCALE = (
    "¿Divides entre √D o entre d_k? En cada cabeza la escala es √d_k, la raíz de d_k = D / H."
)
WRONG_AXIS = "¿Normalizas sobre otro eje? El softmax va sobre el último (dim=-1): cada fila suma 1."
DIRECT_RESHAPE = (
    "¿Cambias la forma directamente a (B, H, T, d_k)? Así se mezclan trozos de tokens distintos."
)
HEADS_NOT_FIRST = (
    "¿Falta adelantar el eje de las cabezas? Tras el reshape la forma es (B, T, H, d_k)."
)
INTERLEAVED_SPLIT = (
    "¿Partes D como (d_k, H) en lugar de (H, d_k)? Cada cabeza debe quedarse con d_k"
    " columnas seguidas."
)
COPIED = "¿usas .contiguous(), clone() o torch.stack?"
MERGE_WITHOUT_TRANSPOSE = (
    "¿Falta devolver las cabezas detrás de los tokens antes del reshape? Sin eso se"
    " concatenan tokens en lugar de cabezas."
)
INTERLEAVED_MERGE = (
    "¿Concatenas las cabezas componente a componente? Cada cabeza debe ocupar d_k columnas"
    " seguidas."
)
HEADS_REDUCED = "¿Sumas o promedias las cabezas? Hay que concatenarlas: D = H · d_k."
HEADS_ON_TOKENS = (
    "¿Concatenas las cabezas en el eje de los tokens? Van una tras otra en el último eje:"
    " (B, T, H · d_k)."
)
NO_HEAD_AXIS = (
    "¿Falta añadir a la máscara el eje de las cabezas? Sin él, la cabeza h usa la máscara"
    " de la frase h."
)
INVERTED_MASK = (
    "¿Inviertes la máscara? En este curso True significa «se puede atender»; ~mask es solo"
    " para nn.MultiheadAttention."
)
NO_BIAS = "¿Creas las proyecciones con bias=False?"
NO_OUTPUT_PROJECTION = "¿Olvidas aplicar w_o a las cabezas unidas?"
MERGE_BY_RESHAPE = (
    "¿Unes las cabezas con un reshape directo? Usa tu merge_heads: sin el transpose se"
    " mezclan tokens."
)
QUERY_EVERYWHERE = (
    "¿Proyectas key y value a partir de query? En la atención cruzada vienen de otra secuencia."
)
NO_DROPOUT = (
    "¿Pasas self.dropout a scaled_dot_product_attention? En modo entrenamiento la salida no cambia."
)
DROPOUT_ON_OUTPUT = "¿Aplicas el dropout a la salida? Debe actuar sobre los pesos de atención."
NO_VALUE_ERROR = "MultiHeadAttention(6, 4) debería lanzar ValueError"
AVERAGED_WEIGHTS = (
    "¿Promedias los pesos de las cabezas? Devuelve los de cada una: (B, H, T_q, T_k), como"
    " nn.MultiheadAttention con average_attn_weights=False."
)
LOOP_WITHOUT_BIAS = "¿Olvidas el sesgo de las proyecciones (las mismas filas de bias)?"
LOOP_WITHOUT_OUTPUT = "¿Olvidas aplicar mha.w_o a la concatenación?"
LOOP_STACK_FIRST = "¿Apilas los pesos en el eje 0? Las cabezas van en el eje 1: (B, H, T_q, T_k)."
LOOP_MASK_AXIS = (
    "¿Añades a la máscara un eje de cabezas? En el bucle cada cabeza es una atención"
    " (B, T_q, T_k) y la máscara se usa tal cual."
)
NAN_AT_ZERO = "¿Calculas 0 · log 0? Da nan: las posiciones con peso 0 deben aportar 0."
EPSILON = (
    "¿Sumas un ε dentro del logaritmo? Cambia un poco todas las entropías: solo los pesos 0"
    " deben tratarse aparte."
)
NO_MINUS = "¿Falta el signo menos? La entropía es -Σ p log p, siempre ≥ 0."
LOG2 = "¿Usas log2? La entropía se pide en nats, con el logaritmo natural."
MEAN = "¿Promedias en lugar de sumar sobre las claves?"
MASK_AXIS_ONE = (
    "¿Añades el eje de las cabezas con unsqueeze(1)? Una máscara (T_q, T_k), sin eje de"
    " lote, queda (T_q, 1, T_k): cuenta desde el final, unsqueeze(-3)."
)
NO_MASK = (
    "¿Pasas la máscara a la atención? Sin ella las posiciones de relleno (o futuras) reciben peso."
)
OTHER_SUM_AXIS = (
    "¿Sumas sobre otro eje? La entropía es una por fila: suma sobre el último eje (las claves)."
)
SUMMED_EVERYTHING = (
    "¿Sumas sin indicar el eje? La entropía es una por fila: suma sobre el último eje."
)

MISTAKES = [
    *for_exercise(
        "ej1_split_heads",
        "split_heads",
        (split_heads_direct_reshape, DIRECT_RESHAPE),
        (split_heads_view_direct, DIRECT_RESHAPE),
        (split_heads_reshape_minus_one, DIRECT_RESHAPE),
        (split_heads_without_transpose, HEADS_NOT_FIRST),
        (split_heads_view_without_transpose, HEADS_NOT_FIRST),
        (split_heads_unflatten, HEADS_NOT_FIRST),
        (split_heads_interleaved, INTERLEAVED_SPLIT),
        (split_heads_strided_columns, INTERLEAVED_SPLIT),
        (split_heads_interleaved_transposes, INTERLEAVED_SPLIT),
        (split_heads_contiguous, COPIED),
        (split_heads_stacked_chunks, COPIED),
    ),
    *for_exercise(
        "ej2_merge_heads",
        "merge_heads",
        (merge_heads_without_transpose, MERGE_WITHOUT_TRANSPOSE),
        (merge_heads_reshape_minus_one, MERGE_WITHOUT_TRANSPOSE),
        (merge_heads_view, MERGE_WITHOUT_TRANSPOSE),
        (merge_heads_interleaved, INTERLEAVED_MERGE),
        (merge_heads_double_transpose, INTERLEAVED_MERGE),
        (merge_heads_stacked_last, INTERLEAVED_MERGE),
        (merge_heads_summed, HEADS_REDUCED),
        (merge_heads_summed_by_loop, HEADS_REDUCED),
        (merge_heads_mean, HEADS_REDUCED),
        (merge_heads_cat_tokens, HEADS_ON_TOKENS),
        (merge_heads_reshape_tokens, HEADS_ON_TOKENS),
        (merge_heads_cat_loop_tokens, HEADS_ON_TOKENS),
    ),
    *for_exercise(
        "ej3_multihead",
        "MultiHeadAttention",
        (MultiHeadAttentionWithoutHeadAxis, NO_HEAD_AXIS),
        (MultiHeadAttentionMaskFrontAxis, NO_HEAD_AXIS),
        (InlineWithoutHeadAxis, NO_HEAD_AXIS),
        (InlineMinusBillionWithoutHeadAxis, NO_HEAD_AXIS),
        (MultiHeadAttentionMaskIndexedNone, NO_HEAD_AXIS),
        (MultiHeadAttentionInvertedMask, INVERTED_MASK),
        (MultiHeadAttentionWithoutMask, NO_MASK),
        (MultiHeadAttentionMaskAxisOne, MASK_AXIS_ONE),
        (MultiHeadAttentionMaskIndexedAxisOne, MASK_AXIS_ONE),
        (InlineMaskAxisOne, MASK_AXIS_ONE),
        (MultiHeadAttentionMaskForgottenWithKeyword, NO_MASK),
        (InlineIgnoresMask, NO_MASK),
        (MultiHeadAttentionLogicalNotMask, INVERTED_MASK),
        (InlineMaskedWhereAllowed, INVERTED_MASK),
        (MultiHeadAttentionWithoutBias, NO_BIAS),
        (MultiHeadAttentionQKVWithoutBias, NO_BIAS),
        (MultiHeadAttentionWithoutOutputProjection, NO_OUTPUT_PROJECTION),
        (InlineWithoutOutputProjection, NO_OUTPUT_PROJECTION),
        (MultiHeadAttentionMergeWithoutTranspose, MERGE_BY_RESHAPE),
        (MultiHeadAttentionViewWithoutTranspose, MERGE_BY_RESHAPE),
        (InlineMergeWithoutTranspose, MERGE_BY_RESHAPE),
        (MultiHeadAttentionReshapedToWidth, MERGE_BY_RESHAPE),
        (MultiHeadAttentionReshapedLikeQuery, MERGE_BY_RESHAPE),
        (MultiHeadAttentionQueryEverywhere, QUERY_EVERYWHERE),
        (InlineQueryEverywhere, QUERY_EVERYWHERE),
        (MultiHeadAttentionSelfOnly, QUERY_EVERYWHERE),
        (MultiHeadAttentionWithoutDropout, NO_DROPOUT),
        (MultiHeadAttentionDropoutNone, NO_DROPOUT),
        (InlineWithoutDropout, NO_DROPOUT),
        (MultiHeadAttentionDropoutOnOutput, DROPOUT_ON_OUTPUT),
        (MultiHeadAttentionFunctionalDropoutOnOutput, DROPOUT_ON_OUTPUT),
        (MultiHeadAttentionWithoutValueError, NO_VALUE_ERROR),
        (MultiHeadAttentionAssertsDivisible, NO_VALUE_ERROR),
        (MultiHeadAttentionAveragedWeights, AVERAGED_WEIGHTS),
        (InlineAveragedWeights, AVERAGED_WEIGHTS),
    ),
    *for_exercise(
        "ej4_bucle_cabezas",
        "multihead_by_loop",
        (loop_without_bias, LOOP_WITHOUT_BIAS),
        (loop_matmul_without_bias, LOOP_WITHOUT_BIAS),
        (loop_without_output_projection, LOOP_WITHOUT_OUTPUT),
        (loop_concatenation_only, LOOP_WITHOUT_OUTPUT),
        (loop_stack_heads_first, LOOP_STACK_FIRST),
        (loop_stack_default_axis, LOOP_STACK_FIRST),
        (loop_mask_with_head_axis, LOOP_MASK_AXIS),
        (loop_mask_unsqueezed, LOOP_MASK_AXIS),
        (loop_averaged_weights, AVERAGED_WEIGHTS),
        (loop_summed_weights_over_heads, AVERAGED_WEIGHTS),
    ),
    *for_exercise(
        "ej5_entropia",
        "attention_entropy",
        (entropy_nan_at_zero, NAN_AT_ZERO),
        (entropy_log_nan, NAN_AT_ZERO),
        (entropy_epsilon_in_log, EPSILON),
        (entropy_without_minus, NO_MINUS),
        (entropy_nan_to_num_without_minus, NO_MINUS),
        (entropy_negated_entr, NO_MINUS),
        (entropy_log2, LOG2),
        (entropy_torch_log2, LOG2),
        (entropy_over_log_two, LOG2),
        (entropy_mean, MEAN),
        (entropy_sum_over_length, MEAN),
        (entropy_entr_mean, MEAN),
        (entropy_summed_over_everything, SUMMED_EVERYTHING),
        (entropy_entr_summed_over_everything, SUMMED_EVERYTHING),
        (entropy_nansum, SUMMED_EVERYTHING),
        (entropy_over_first_axis, OTHER_SUM_AXIS),
        (entropy_over_queries, OTHER_SUM_AXIS),
    ),
    *for_exercise(
        "ej3_multihead",
        "MultiHeadAttention",
        (InlineWithoutScale, NO_SCALE),
        (InlineEinsumWithoutScale, NO_SCALE),
        (InlineMatmulWithoutScale, NO_SCALE),
        (InlineScaledByModelWidth, OTHER_SCALE),
        (InlineScaledByInputWidth, OTHER_SCALE),
        (InlineOverDK, OTHER_SCALE),
        (InlineTimesInverseDK, OTHER_SCALE),
        (InlineSoftmaxOverQueries, WRONG_AXIS),
        (InlineSoftmaxDimTwo, WRONG_AXIS),
    ),
]
