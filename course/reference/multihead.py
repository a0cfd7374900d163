"""Laboratorio 4: atención multicabeza (Vaswani et al., 2017, §3.2.2).

Cuatro proyecciones ``nn.Linear`` separadas (``w_q``, ``w_k``, ``w_v``, ``w_o``) en
lugar de la matriz fusionada de ``nn.MultiheadAttention``: se leen mejor y
``course.student.checks.copy_mha_weights`` reparte los pesos de PyTorch entre ellas. Los pesos
de atención se devuelven, nunca se guardan en ``self``.
"""

import torch.nn.functional as F
from torch import Tensor, nn

from course.reference.attention import scaled_dot_product_attention


def split_heads(x: Tensor, num_heads: int) -> Tensor:
    """Parte el último eje en H cabezas de tamaño d_k y las adelanta al eje 1.

    Args:
        x: proyección de consultas, claves o valores.
        num_heads: número de cabezas H; debe dividir a D.

    Forma:
        x (B, T, D) -> (B, H, T, d_k), con d_k = D // H
    """
    B, T, D = x.shape
    x = x.reshape(B, T, num_heads, D // num_heads)  # (B, T, H, d_k)
    return x.transpose(1, 2)  # (B, H, T, d_k)


def merge_heads(x: Tensor) -> Tensor:
    """Deshace :func:`split_heads`: concatena las cabezas en el último eje.

    Forma:
        x (B, H, T, d_k) -> (B, T, D), con D = H · d_k
    """
    B, H, T, d_k = x.shape
    x = x.transpose(1, 2)  # (B, T, H, d_k)
    return x.reshape(B, T, H * d_k)  # (B, T, D)


class MultiHeadAttention(nn.Module):
    """Atención multicabeza (Vaswani et al., 2017, §3.2.2): Concat(head_1..head_H) W^O.

    .. math::
        \\mathrm{head}_h = \\mathrm{Attention}(Q W^Q_h, K W^K_h, V W^V_h)

    Sirve para autoatención (``query = key = value``), autoatención causal (con
    ``causal_mask``) y atención cruzada (``key = value`` = salida del codificador).

    Args:
        d_model: dimensión D de entrada y salida.
        num_heads: número de cabezas H; debe dividir a D (d_k = D // H).
        dropout: probabilidad de *dropout* sobre los pesos de atención.

    Forma:
        query (B, T_q, D); key, value (B, T_k, D)
        mask: bool, difundible a (B, T_q, T_k); True = la posición se puede atender.
        devuelve (salida (B, T_q, D), pesos (B, H, T_q, T_k))

    Cuidado: ``nn.MultiheadAttention`` usa la convención opuesta (True = prohibido);
    al compararla con este módulo hay que pasarle ``~mask``.
    """

    # Con ``fused = True`` (lo pone ``course.reference.model.use_fused_kernels`` para
    # entrenar), la atención la calcula ``F.scaled_dot_product_attention`` sin materializar
    # la matriz de pesos: misma cuenta, menos memoria, y devuelve ``None`` como pesos.
    fused: bool = False

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} no es divisible entre num_heads={num_heads}")
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.w_q, self.w_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        B, T_q, D = query.shape
        q = split_heads(self.w_q(query), self.num_heads)  # (B, H, T_q, d_k)
        k = split_heads(self.w_k(key), self.num_heads)  # (B, H, T_k, d_k)
        v = split_heads(self.w_v(value), self.num_heads)  # (B, H, T_k, d_k)
        if mask is not None:
            mask = mask.unsqueeze(-3)  # eje de cabezas: (B, 1, T_q, T_k)
        if self.fused:
            p = self.dropout.p if self.training else 0.0
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
            return self.w_o(merge_heads(out)), None  # (B, T_q, D), sin pesos
        out, weights = scaled_dot_product_attention(q, k, v, mask, self.dropout)
        out = merge_heads(out)  # (B, H, T_q, d_k) -> (B, T_q, D)
        return self.w_o(out), weights  # (B, T_q, D), (B, H, T_q, T_k)

    def extra_repr(self) -> str:
        return f"num_heads={self.num_heads}, d_k={self.d_k}"
