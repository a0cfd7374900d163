"""Decodificación incremental: el decodificador con caché de claves y valores.

``Transformer.decode`` recalcula todo el prefijo en cada paso de la generación, así que
producir T *tokens* cuesta del orden de T² pasadas por posición. Aquí cada capa guarda
las claves y los valores de su autoatención de los pasos anteriores y, una sola vez por
frase, los de la atención cruzada sobre ``memory``: el paso t solo proyecta el *token*
nuevo y atiende a lo ya guardado. Las cuentas son las de ``DecoderLayer.forward`` en
modo evaluación (sin *dropout*), las dos ramas, post-norm y pre-norm, con
``F.scaled_dot_product_attention``; la causalidad sale sola, porque la caché solo tiene
posiciones anteriores.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from course.reference.layers import DecoderLayer
from course.reference.model import Transformer
from course.reference.multihead import MultiHeadAttention, merge_heads, split_heads


@dataclass
class KVCache:
    """Claves y valores de cada capa del decodificador, una fila por hipótesis.

    Forma (N hipótesis, H cabezas, d_k por cabeza, t pasos ya dados, S de origen):
        self_k[i], self_v[i] (N, H, t, d_k): autoatención de la capa i; crecen un paso
        cada vez
        cross_k[i], cross_v[i] (N, H, S, d_k): atención cruzada sobre ``memory``; fijas
        memory_mask (N, 1, 1, S) bool, True = se puede atender
    """

    self_k: list[Tensor]
    self_v: list[Tensor]
    cross_k: list[Tensor]
    cross_v: list[Tensor]
    memory_mask: Tensor

    def reorder(self, rows: Tensor) -> None:
        """Cada hipótesis pasa a continuar la fila ``rows[n]`` (búsqueda en haz). Forma: rows (N,)."""
        self.self_k = [k.index_select(0, rows) for k in self.self_k]
        self.self_v = [v.index_select(0, rows) for v in self.self_v]


def start(model: Transformer, memory: Tensor, memory_mask: Tensor) -> KVCache:
    """Caché vacía para N hipótesis con sus claves y valores cruzados ya proyectados.

    Forma:
        memory (N, S, D); memory_mask (N, 1, S) de ``make_src_mask``
    """
    layers: list[DecoderLayer] = list(model.decoder.layers)
    H = layers[0].self_attn.num_heads
    cross_k = [split_heads(layer.cross_attn.w_k(memory), H) for layer in layers]
    cross_v = [split_heads(layer.cross_attn.w_v(memory), H) for layer in layers]
    # la caché vacía toma el tipo de las proyecciones (bfloat16 bajo autocast en CUDA)
    empty = cross_k[0][:, :, :0]  # (N, H, 0, d_k)
    return KVCache(
        self_k=[empty] * len(layers),
        self_v=[empty] * len(layers),
        cross_k=cross_k,
        cross_v=cross_v,
        memory_mask=memory_mask.unsqueeze(1),  # eje de cabezas: (N, 1, 1, S)
    )


def _attend(
    attn: MultiHeadAttention, x: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> Tensor:
    """La consulta del *token* nuevo frente a claves y valores ya proyectados.

    Forma:
        x (N, 1, D); k, v (N, H, T_k, d_k); mask difundible a (N, H, 1, T_k)
        devuelve (N, 1, D)
    """
    q = split_heads(attn.w_q(x), attn.num_heads)  # (N, H, 1, d_k)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (N, H, 1, d_k)
    return attn.w_o(merge_heads(out))  # (N, 1, D)


def _self_attend(layer: DecoderLayer, cache: KVCache, i: int, x: Tensor) -> Tensor:
    """Autoatención del paso nuevo: añade su clave y su valor a la caché de la capa ``i``."""
    attn = layer.self_attn
    cache.self_k[i] = torch.cat([cache.self_k[i], split_heads(attn.w_k(x), attn.num_heads)], 2)
    cache.self_v[i] = torch.cat([cache.self_v[i], split_heads(attn.w_v(x), attn.num_heads)], 2)
    return _attend(attn, x, cache.self_k[i], cache.self_v[i])  # (N, 1, D)


def step(model: Transformer, cache: KVCache, token: Tensor, position: int) -> Tensor:
    """Un paso del decodificador: la salida de la posición ``position`` para ``token``.

    Equivale a la última fila de ``model.decode(memory, mask, prefijo, causal_mask)`` con el
    prefijo entero, en modo evaluación. Actualiza ``cache``.

    Forma:
        token (N,) int64 -> (N, D), la entrada del generador
    """
    x = model.tgt_embed(token.unsqueeze(1)) + model.positional.pe[position]  # (N, 1, D)
    for i, layer in enumerate(model.decoder.layers):
        cross_k, cross_v, mask = cache.cross_k[i], cache.cross_v[i], cache.memory_mask
        if layer.norm_first:
            x = x + _self_attend(layer, cache, i, layer.norm1(x))
            x = x + _attend(layer.cross_attn, layer.norm2(x), cross_k, cross_v, mask)
            x = x + layer.feed_forward(layer.norm3(x))
        else:
            x = layer.norm1(x + _self_attend(layer, cache, i, x))
            x = layer.norm2(x + _attend(layer.cross_attn, x, cross_k, cross_v, mask))
            x = layer.norm3(x + layer.feed_forward(x))
    return model.decoder.norm(x).squeeze(1)  # (N, D)
