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


# Ejercicio 2 · merge_heads


def merge_heads_without_transpose(x):
    B, H, T, d_k = x.shape
    return x.reshape(B, T, H * d_k)


def merge_heads_interleaved(x):
    B, H, T, d_k = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, T, H * d_k)


def merge_heads_summed(x):
    return x.sum(dim=1)


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


NO_SCALE = "¿Falta dividir entre √d_k?"
WIDTH_SCALE = "¿Divides entre √D? En cada cabeza la escala es √d_k, con d_k = D / H."
OVER_D_K = "¿Divides entre d_k en lugar de entre su raíz cuadrada?"
WRONG_AXIS = "¿Normalizas sobre otro eje? El softmax va sobre el último (dim=-1): cada fila suma 1."

MISTAKES = [
    *for_exercise(
        "ej1_split_heads",
        "split_heads",
        (
            split_heads_direct_reshape,
            "¿Cambias la forma directamente a (B, H, T, d_k)? Así se mezclan trozos de tokens distintos.",
        ),
        (
            split_heads_without_transpose,
            "¿Falta adelantar el eje de las cabezas? Tras el reshape la forma es (B, T, H, d_k).",
        ),
        (
            split_heads_interleaved,
            "¿Partes D como (d_k, H) en lugar de (H, d_k)? Cada cabeza debe quedarse con d_k columnas seguidas.",
        ),
        (split_heads_contiguous, "¿usas .contiguous(), clone() o torch.stack?"),
    ),
    *for_exercise(
        "ej2_merge_heads",
        "merge_heads",
        (
            merge_heads_without_transpose,
            "¿Falta devolver las cabezas detrás de los tokens antes del reshape? Sin eso se concatenan tokens en lugar de cabezas.",
        ),
        (
            merge_heads_interleaved,
            "¿Concatenas las cabezas componente a componente? Cada cabeza debe ocupar d_k columnas seguidas.",
        ),
        (merge_heads_summed, "¿Sumas o promedias las cabezas? Hay que concatenarlas: D = H · d_k."),
    ),
    *for_exercise(
        "ej3_multihead",
        "MultiHeadAttention",
        (
            MultiHeadAttentionWithoutHeadAxis,
            "¿Falta añadir a la máscara el eje de las cabezas? Sin él, la cabeza h usa la máscara de la frase h.",
        ),
        (
            MultiHeadAttentionInvertedMask,
            "¿Inviertes la máscara? En este curso True significa «se puede atender»; ~mask es solo para nn.MultiheadAttention.",
        ),
        (MultiHeadAttentionWithoutBias, "¿Creas las proyecciones con bias=False?"),
        (MultiHeadAttentionWithoutOutputProjection, "¿Olvidas aplicar w_o a las cabezas unidas?"),
        (
            MultiHeadAttentionMergeWithoutTranspose,
            "¿Unes las cabezas con un reshape directo? Usa tu merge_heads: sin el transpose se mezclan tokens.",
        ),
        (
            MultiHeadAttentionQueryEverywhere,
            "¿Proyectas key y value a partir de query? En la atención cruzada vienen de otra secuencia.",
        ),
        (
            MultiHeadAttentionWithoutDropout,
            "¿Pasas self.dropout a scaled_dot_product_attention? En modo entrenamiento la salida no cambia.",
        ),
        (
            MultiHeadAttentionDropoutOnOutput,
            "¿Aplicas el dropout a la salida? Debe actuar sobre los pesos de atención.",
        ),
        (MultiHeadAttentionWithoutValueError, "MultiHeadAttention(6, 4) debería lanzar ValueError"),
    ),
    *for_exercise(
        "ej4_bucle_cabezas",
        "multihead_by_loop",
        (loop_without_bias, "¿Olvidas el sesgo de las proyecciones (las mismas filas de bias)?"),
        (loop_without_output_projection, "¿Olvidas aplicar mha.w_o a la concatenación?"),
        (
            loop_stack_heads_first,
            "¿Apilas los pesos en el eje 0? Las cabezas van en el eje 1: (B, H, T_q, T_k).",
        ),
        (
            loop_mask_with_head_axis,
            "¿Añades a la máscara un eje de cabezas? En el bucle cada cabeza es una atención (B, T_q, T_k) y la máscara se usa tal cual.",
        ),
    ),
    *for_exercise(
        "ej5_entropia",
        "attention_entropy",
        (
            entropy_nan_at_zero,
            "¿Calculas 0 · log 0? Da nan: las posiciones con peso 0 deben aportar 0.",
        ),
        (
            entropy_epsilon_in_log,
            "¿Sumas un ε dentro del logaritmo? Cambia un poco todas las entropías: solo los pesos 0 deben tratarse aparte.",
        ),
        (entropy_without_minus, "¿Falta el signo menos? La entropía es -Σ p log p, siempre ≥ 0."),
        (entropy_log2, "¿Usas log2? La entropía se pide en nats, con el logaritmo natural."),
        (entropy_mean, "¿Promedias en lugar de sumar sobre las claves?"),
        (
            entropy_summed_over_everything,
            "¿Sumas sin indicar el eje? La entropía es una por fila: suma sobre el último eje.",
        ),
    ),
    *for_exercise(
        "ej3_multihead",
        "MultiHeadAttention",
        (InlineWithoutScale, NO_SCALE),
        (InlineScaledByModelWidth, WIDTH_SCALE),
        (InlineOverDK, OVER_D_K),
        (InlineSoftmaxOverQueries, WRONG_AXIS),
    ),
]
