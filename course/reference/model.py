"""Laboratorio 6: el Transformer completo (Vaswani et al., 2017, §3 y Figura 1).

Ensamblaje codificador-decodificador, máscaras de origen y destino, recuento de
parámetros y decodificación voraz por lotes.
"""

import torch
from torch import Tensor, nn

from course.reference.attention import causal_mask, padding_mask
from course.reference.layers import Decoder, DecoderLayer, Encoder, EncoderLayer
from course.reference.multihead import MultiHeadAttention
from course.reference.normalization import LayerNorm
from course.reference.positional import PositionalEncoding, TokenEmbedding
from course.translation.config import ModelConfig


class Transformer(nn.Module):
    """Transformer codificador-decodificador para traducción (Vaswani et al., 2017, §3).

    ``src -> embedding + posición -> codificador -> memory``;
    ``tgt -> embedding + posición -> decodificador(memory) -> generador -> logits``.

    Con ``config.tie_weights`` el generador y el *embedding* de destino comparten la
    misma matriz (V, D) (§3.4): un solo tensor, contado una vez. Todos los parámetros
    con más de un eje se inicializan con Xavier uniforme; los sesgos y las normas
    conservan la inicialización de PyTorch. ``config.attention_dropout`` y
    ``config.activation_dropout`` (si no son ``None``) sustituyen a ``config.dropout``
    sobre los pesos de atención y tras la activación de la FFN: con 0, la atención
    fusionada de la CPU usa su núcleo rápido, la FFN ahorra una pasada y el *dropout* de
    los residuales y los *embeddings* sigue regularizando.

    Args:
        config: hiperparámetros (:class:`course.translation.config.ModelConfig`).

    Forma:
        src (B, T_k) y tgt (B, T_q), int64
        src_mask (B, 1, T_k) de :func:`make_src_mask`; tgt_mask (B, T_q, T_q) de
        :func:`make_tgt_mask`
        devuelve logits (B, T_q, V) sin softmax
    """

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        c = self.config = config
        self.src_embed = TokenEmbedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = TokenEmbedding(c.tgt_vocab_size, c.d_model)
        self.positional = PositionalEncoding(c.d_model, c.dropout, c.max_len)
        encoder_layer = EncoderLayer(c.d_model, c.num_heads, c.d_ff, c.dropout, c.norm_first)
        decoder_layer = DecoderLayer(c.d_model, c.num_heads, c.d_ff, c.dropout, c.norm_first)
        _set_dropout(encoder_layer, decoder_layer, c)  # en los prototipos, antes de copiarlos
        self.encoder = Encoder(encoder_layer, c.num_encoder_layers)
        self.decoder = Decoder(decoder_layer, c.num_decoder_layers)
        self.generator = nn.Linear(c.d_model, c.tgt_vocab_size)
        if c.tie_weights:
            self.generator.weight = self.tgt_embed.embedding.weight
        for p in self.parameters():  # parameters() no repite el tensor compartido
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def encode(self, src: Tensor, src_mask: Tensor) -> Tensor:
        """Codifica el origen. Forma: src (B, T_k), src_mask (B, 1, T_k) -> (B, T_k, D)."""
        return self.encoder(self.positional(self.src_embed(src)), src_mask)

    def decode(
        self, memory: Tensor, src_mask: Tensor, tgt: Tensor, tgt_mask: Tensor
    ) -> tuple[Tensor, Tensor]:
        """Decodifica el destino atendiendo a ``memory``.

        Forma:
            memory (B, T_k, D); src_mask (B, 1, T_k); tgt (B, T_q); tgt_mask (B, T_q, T_q)
            devuelve (salida (B, T_q, D), pesos cruzados de la última capa (B, H, T_q, T_k))
        """
        return self.decoder(self.positional(self.tgt_embed(tgt)), memory, tgt_mask, src_mask)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor, tgt_mask: Tensor) -> Tensor:
        memory = self.encode(src, src_mask)  # (B, T_k, D)
        out, _ = self.decode(memory, src_mask, tgt, tgt_mask)  # (B, T_q, D)
        return self.generator(out)  # (B, T_q, V)


def _set_dropout(encoder_layer: EncoderLayer, decoder_layer: DecoderLayer, c: ModelConfig) -> None:
    """Aplica ``c.attention_dropout`` y ``c.activation_dropout`` si no son ``None``.

    Las capas reciben un solo ``dropout`` (como las de PyTorch); estas dos tasas lo
    sustituyen sobre los pesos de atención y tras la activación de la *feed-forward*.
    """
    attentions = (encoder_layer.self_attn, decoder_layer.self_attn, decoder_layer.cross_attn)
    if c.attention_dropout is not None:
        for attention in attentions:
            attention.dropout.p = c.attention_dropout
    if c.activation_dropout is not None:
        for layer in (encoder_layer, decoder_layer):
            layer.feed_forward.dropout.p = c.activation_dropout


def make_src_mask(src: Tensor, pad_idx: int) -> Tensor:
    """Máscara del origen: solo oculta el relleno.

    Sirve para la autoatención del codificador y para la atención cruzada: el eje de
    tamaño 1 se difunde sobre las consultas.

    Forma:
        src (B, T_k) -> (B, 1, T_k), bool; True = se puede atender
    """
    return padding_mask(src, pad_idx)  # (B, 1, T_k)


def make_tgt_mask(tgt: Tensor, pad_idx: int) -> Tensor:
    """Máscara del destino: relleno **y** causalidad (la posición i ve j <= i que no sea relleno).

    Forma:
        tgt (B, T_q) -> (B, T_q, T_q), bool; True = se puede atender
    """
    T_q = tgt.size(1)
    causal = causal_mask(T_q, device=tgt.device)  # (T_q, T_q)
    return padding_mask(tgt, pad_idx) & causal  # (B, 1, T_q) & (T_q, T_q) -> (B, T_q, T_q)


def use_fused_kernels(model: nn.Module, enabled: bool = True) -> nn.Module:
    """Pone ``fused = enabled`` en cada atención y ``LayerNorm`` de ``model``; devuelve ``model``.

    Como ``self.flash`` en nanoGPT: los módulos eligen dentro de su ``forward`` entre la
    cuenta escrita a mano de los laboratorios y ``F.scaled_dot_product_attention`` /
    ``F.layer_norm``, que hacen lo mismo (hasta el redondeo) en menos pasadas por memoria;
    en CPU, con D = 128, las operaciones elemento a elemento de la versión a mano cuestan
    tanto como las multiplicaciones de matrices. Mismos parámetros: los puntos de control
    son intercambiables. La atención fusionada no devuelve la matriz de pesos
    (``model.decode`` da ``None`` como pesos cruzados); para dibujarlos, ``enabled=False``.
    """
    for module in model.modules():
        if isinstance(module, MultiHeadAttention | LayerNorm):
            module.fused = enabled
    return model


def count_parameters(model: nn.Module) -> int:
    """Número de parámetros escalares; un tensor compartido (pesos atados) cuenta una vez."""
    return sum(p.numel() for p in model.parameters())


@torch.no_grad()
def greedy_decode(
    model: Transformer,
    src: Tensor,
    src_mask: Tensor,
    max_len: int,
    bos_idx: int,
    eos_idx: int,
    pad_idx: int = ModelConfig.pad_idx,
) -> Tensor:
    """Decodificación voraz por lotes: en cada paso, el *token* más probable.

    Todas las frases avanzan a la vez (sin bucle de Python por frase). Una frase que ya
    produjo ``eos_idx`` recibe ``pad_idx`` en los pasos siguientes; el bucle termina
    cuando todas han producido ``eos_idx`` o al llegar a ``max_len`` *tokens*. No cambia
    el modo del modelo: llama antes a ``model.eval()``.

    Args:
        model: el Transformer (usa ``encode``, ``decode`` y ``generator``).
        src: *tokens* de origen.
        src_mask: máscara de :func:`make_src_mask`.
        max_len: longitud máxima de la salida, contando ``bos_idx``.
        bos_idx, eos_idx, pad_idx: *tokens* de inicio, fin y relleno del destino.

    Forma:
        src (B, T_k); src_mask (B, 1, T_k)
        devuelve (B, T) int64 con T <= max_len, empezando por ``bos_idx``
    """
    B = src.size(0)
    memory = model.encode(src, src_mask)  # (B, T_k, D)
    ys = torch.full((B, 1), bos_idx, dtype=torch.long, device=src.device)  # (B, 1)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)  # (B,)
    for _ in range(max_len - 1):
        tgt_mask = causal_mask(ys.size(1), device=src.device)  # (T, T)
        out, _ = model.decode(memory, src_mask, ys, tgt_mask)  # (B, T, D)
        next_token = model.generator(out[:, -1]).argmax(dim=-1)  # (B,)
        next_token = next_token.masked_fill(finished, pad_idx)  # (B,)
        ys = torch.cat([ys, next_token.unsqueeze(1)], dim=1)  # (B, T + 1)
        finished |= next_token == eos_idx
        if finished.all():
            break
    return ys
