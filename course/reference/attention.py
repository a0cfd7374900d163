"""Laboratorio 1: atención producto-escalar escalada (Vaswani et al., 2017, §3.2.1).

Convención de máscaras de todo el curso: booleana, ``True`` = "se puede atender",
como en ``F.scaled_dot_product_attention``. Las posiciones prohibidas reciben ``-inf``
antes del softmax; una fila sin ninguna posición permitida da pesos y salida cero.
"""

import math

import torch
from torch import Tensor, nn


def attention_scores(query: Tensor, key: Tensor) -> Tensor:
    """Puntuaciones escaladas ``Q Kᵀ / √d_k``.

    Forma:
        query (..., T_q, d_k); key (..., T_k, d_k) -> (..., T_q, T_k)
    """
    d_k = query.size(-1)
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (..., T_q, T_k)


def softmax(x: Tensor) -> Tensor:
    """Softmax estable sobre el último eje: resta el máximo de cada fila antes de ``exp``.

    Una fila entera de ``-inf`` da ``nan`` (como ``torch.softmax``); quien enmascara
    decide qué hacer con ella.

    Forma:
        x (..., N) -> (..., N)
    """
    shifted = x - x.amax(dim=-1, keepdim=True)
    exp = shifted.exp()
    return exp / exp.sum(dim=-1, keepdim=True)


def padding_mask(tokens: Tensor, pad_idx: int) -> Tensor:
    """Máscara de relleno a partir de los identificadores de los *tokens*.

    Forma:
        tokens (B, T) -> (B, 1, T), bool; ``True`` donde el *token* no es relleno.
        El eje de tamaño 1 se difunde sobre las consultas T_q.
    """
    return (tokens != pad_idx).unsqueeze(-2)  # (B, 1, T)


def causal_mask(size: int, device: torch.device | None = None) -> Tensor:
    """Máscara causal: la posición ``i`` ve las posiciones ``j <= i``.

    Forma:
        devuelve (T, T), bool, triangular inferior.
    """
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    dropout: nn.Module | None = None,
) -> tuple[Tensor, Tensor]:
    """``softmax(Q Kᵀ / √d_k) V`` devolviendo también los pesos de atención.

    Args:
        query, key, value: tensores de consultas, claves y valores.
        mask: bool, difundible a (..., T_q, T_k); ``True`` = se puede atender.
        dropout: módulo de *dropout* aplicado a los pesos (solo al producto con V).

    Forma:
        query (..., T_q, d_k); key (..., T_k, d_k); value (..., T_k, d_v)
        devuelve (salida (..., T_q, d_v), pesos (..., T_q, T_k))
    """
    scores = attention_scores(query, key)  # (..., T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = softmax(scores)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # filas sin posiciones permitidas: 0, no nan
    dropped = dropout(weights) if dropout is not None else weights
    return dropped @ value, weights  # (..., T_q, d_v), (..., T_q, T_k)
