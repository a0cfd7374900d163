"""Laboratorio 5: bloques del codificador y del decodificador (Vaswani et al., 2017, §3.1, §3.3).

Los nombres de los submódulos (``self_attn``, ``linear1``, ``linear2``, ``norm1``...)
son los de ``nn.TransformerEncoderLayer`` y ``nn.TransformerDecoderLayer``, para que
los pesos se copien de una a otra. Cada capa escribe sus dos (o tres) conexiones
residuales en línea, con las ramas post-norm y pre-norm una junto a otra, como hace
PyTorch: así se ve exactamente dónde cambia la normalización.

Qué devuelve cada pieza (decisión del curso):

- ``EncoderLayer`` y ``Encoder`` devuelven solo la salida (B, T, D), como PyTorch.
- ``DecoderLayer`` y ``Decoder`` devuelven ``(salida, pesos_cruzados)``: los pesos de la
  atención cruzada (B, H, T_q, T_k) de la capa (en la pila, de la última capa), que
  son los que el laboratorio 7 dibuja. Se devuelven, no se guardan en ``self``.
"""

import copy

import torch.nn.functional as F
from torch import Tensor, nn

from course.reference.multihead import MultiHeadAttention
from course.reference.normalization import LayerNorm

ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


class PositionwiseFeedForward(nn.Module):
    """Red *feed-forward* por posición (Vaswani et al., 2017, §3.3).

    .. math::
        \\mathrm{FFN}(x) = \\max(0, x W_1 + b_1) W_2 + b_2

    Se aplica a cada posición por separado. El *dropout* va tras la activación, como
    en ``nn.TransformerEncoderLayer``.

    Args:
        d_model: dimensión D de entrada y salida.
        d_ff: dimensión de la capa oculta (2048 en el artículo, 4·D).
        dropout: probabilidad de *dropout* tras la activación.
        activation: ``"relu"`` (el artículo) o ``"gelu"`` (BERT, GPT).

    Forma:
        x (B, T, D) -> (B, T, D)
    """

    def __init__(
        self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu"
    ) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(
                f"activación desconocida {activation!r}; usa una de {list(ACTIVATIONS)}"
            )
        self.activation = ACTIVATIONS[activation]
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        hidden = self.dropout(self.activation(self.linear1(x)))  # (B, T, d_ff)
        return self.linear2(hidden)  # (B, T, D)


class EncoderLayer(nn.Module):
    """Capa del codificador: autoatención y *feed-forward*, cada una con residual (§3.1).

    - post-norm (``norm_first=False``, el artículo): ``x = norm(x + dropout(subcapa(x)))``
    - pre-norm (``norm_first=True``): ``x = x + dropout(subcapa(norm(x)))``

    Equivale a ``nn.TransformerEncoderLayer(D, H, d_ff, dropout, batch_first=True,
    norm_first=norm_first)`` con activación ReLU.

    Args:
        d_model: dimensión D.
        num_heads: número de cabezas H.
        d_ff: dimensión oculta de la *feed-forward*.
        dropout: probabilidad de *dropout* (pesos de atención, FFN y residuales).
        norm_first: ``True`` para pre-norm.

    Forma:
        x (B, T, D); mask bool difundible a (B, T, T), True = se puede atender
        devuelve (B, T, D)
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2 = LayerNorm(d_model), LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)  # (B, T, D)
            x = x + self.dropout(self.self_attn(h, h, h, mask)[0])
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)[0]))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x  # (B, T, D)


class DecoderLayer(nn.Module):
    """Capa del decodificador: autoatención enmascarada, atención cruzada y FFN (§3.1).

    La autoatención usa la máscara causal del destino; la atención cruzada toma las
    consultas del decodificador y las claves y valores de ``memory`` (la salida del
    codificador). Equivale a ``nn.TransformerDecoderLayer(..., batch_first=True)``.

    Args:
        d_model: dimensión D.
        num_heads: número de cabezas H.
        d_ff: dimensión oculta de la *feed-forward*.
        dropout: probabilidad de *dropout*.
        norm_first: ``True`` para pre-norm.

    Forma:
        x (B, T_q, D); memory (B, T_k, D)
        tgt_mask bool difundible a (B, T_q, T_q); memory_mask difundible a (B, T_q, T_k)
        devuelve (salida (B, T_q, D), pesos de la atención cruzada (B, H, T_q, T_k))
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2, self.norm3 = (
            LayerNorm(d_model),
            LayerNorm(d_model),
            LayerNorm(d_model),
        )
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        if self.norm_first:
            h = self.norm1(x)  # (B, T_q, D)
            x = x + self.dropout(self.self_attn(h, h, h, tgt_mask)[0])
            out, cross_weights = self.cross_attn(self.norm2(x), memory, memory, memory_mask)
            x = x + self.dropout(out)
            x = x + self.dropout(self.feed_forward(self.norm3(x)))
        else:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)[0]))
            out, cross_weights = self.cross_attn(x, memory, memory, memory_mask)
            x = self.norm2(x + self.dropout(out))
            x = self.norm3(x + self.dropout(self.feed_forward(x)))
        return x, cross_weights  # (B, T_q, D), (B, H, T_q, T_k)


def _final_norm(layer: EncoderLayer | DecoderLayer) -> nn.Module:
    """Pre-norm deja la salida de la última capa sin normalizar: hace falta una norma final."""
    return LayerNorm(layer.norm1.weight.numel()) if layer.norm_first else nn.Identity()


class Encoder(nn.Module):
    """Pila de N capas del codificador (§3.1), copias independientes de ``layer``.

    En pre-norm añade una ``LayerNorm`` final (``norm``); en post-norm ``norm`` es la
    identidad, porque cada capa ya termina normalizando. Equivale a
    ``nn.TransformerEncoder(layer, N, norm=nn.LayerNorm(D) si pre-norm)``.

    Args:
        layer: capa prototipo; se copia ``num_layers`` veces (no comparten pesos).
        num_layers: número de capas N.

    Forma:
        x (B, T, D); mask difundible a (B, T, T) -> (B, T, D)
    """

    def __init__(self, layer: EncoderLayer, num_layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(copy.deepcopy(layer) for _ in range(num_layers))
        self.norm = _final_norm(layer)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        for layer in self.layers:
            x = layer(x, mask)  # (B, T, D)
        return self.norm(x)


class Decoder(nn.Module):
    """Pila de N capas del decodificador (§3.1), copias independientes de ``layer``.

    Devuelve también los pesos de atención cruzada de la **última** capa, los que se
    dibujan como mapa de calor en el laboratorio 7.

    Args:
        layer: capa prototipo; se copia ``num_layers`` veces.
        num_layers: número de capas N.

    Forma:
        x (B, T_q, D); memory (B, T_k, D); máscaras como en :class:`DecoderLayer`
        devuelve (salida (B, T_q, D), pesos cruzados de la última capa (B, H, T_q, T_k))
    """

    def __init__(self, layer: DecoderLayer, num_layers: int) -> None:
        super().__init__()
        if num_layers < 1:
            raise ValueError(
                f"el decodificador necesita al menos una capa; num_layers={num_layers}"
            )
        self.layers = nn.ModuleList(copy.deepcopy(layer) for _ in range(num_layers))
        self.norm = _final_norm(layer)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        for layer in self.layers:
            x, cross_weights = layer(x, memory, tgt_mask, memory_mask)  # (B, T_q, D)
        return self.norm(x), cross_weights
