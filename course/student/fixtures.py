"""Dobles de prueba: módulos de mentira con la interfaz de una pieza del curso (no son esa
pieza), para probar una función del estudiante sin depender de otra suya.

Viven en el paquete, no en las pruebas: al calificar, un doble viaja al núcleo del
estudiante (``course.grading.remote``), y allí tiene que poder importarse.
"""

import torch
from torch import nn

# --- Laboratorio 2: una subcapa ---


class Scale(nn.Module):
    """Subcapa de mentira sin parámetros: ``factor * x`` (``Scale(0.0)`` devuelve ceros).

    Sustituye a una ``lambda`` como subcapa de una prueba: al calificar, una ``lambda`` no
    puede viajar al núcleo del estudiante y un módulo de ``course.student.fixtures`` sí.
    """

    def __init__(self, factor: float):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return self.factor * x


# --- Laboratorio 5: capas para probar una pila ---


def _toy_mix(query, memory, mask):
    """Media de ``memory`` con pesos softmax(query memoryᵀ/√D) que respetan ``mask``."""
    scores = query @ memory.transpose(-2, -1) / query.size(-1) ** 0.5
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)  # finito: una fila sin nada visible no da NaN
    return scores.softmax(dim=-1) @ memory


class ToyEncoderLayer(nn.Module):
    """Capa de mentira con la interfaz de una capa del codificador (no es una).

    Sirve para probar una pila de capas sin depender de la capa del estudiante:
    ``x + dropout(tanh(mix(media de las posiciones de norm1(x) que mask deja ver))))``.
    Sin atención multicabeza ni *feed-forward*, y con la misma fórmula sea cual sea
    ``norm_first``, que solo se guarda para que la pila lo lea. ``norm1.weight`` tiene
    D elementos.
    """

    def __init__(self, d_model: int, dropout: float = 0.0, norm_first: bool = False):
        super().__init__()
        self.norm_first = norm_first
        self.norm1 = nn.LayerNorm(d_model)
        self.mix = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        h = self.norm1(x)  # (B, T, D)
        return x + self.dropout(torch.tanh(self.mix(_toy_mix(h, h, mask))))


class ToyDecoderLayer(nn.Module):
    """Capa de mentira con la interfaz de una capa del decodificador (no es una).

    Como :class:`ToyEncoderLayer` con ``tgt_mask``, más unos pesos «cruzados» por cabeza,
    softmax((norm1(x) W_h) memoryᵀ/√D) con ``memory_mask``, cuya media de ``memory`` se
    suma a la mezcla. Devuelve ``(salida (B, T_q, D), pesos (B, H, T_q, T_k))``.
    """

    def __init__(
        self, d_model: int, num_heads: int, dropout: float = 0.0, norm_first: bool = False
    ):
        super().__init__()
        self.norm_first, self.num_heads = norm_first, num_heads
        self.norm1 = nn.LayerNorm(d_model)
        self.query = nn.Linear(d_model, num_heads * d_model)
        self.mix = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        h = self.norm1(x)  # (B, T_q, D)
        B, T_q, D = h.shape
        query = self.query(h).view(B, T_q, self.num_heads, D).transpose(1, 2)  # (B, H, T_q, D)
        scores = query @ memory.unsqueeze(1).transpose(-2, -1) / D**0.5  # (B, H, T_q, T_k)
        if memory_mask is not None:
            scores = scores.masked_fill(~memory_mask.unsqueeze(-3), -1e9)
        weights = scores.softmax(dim=-1)
        cross = (weights @ memory.unsqueeze(1)).mean(dim=1)  # (B, T_q, D)
        out = torch.tanh(self.mix(_toy_mix(h, h, tgt_mask) + cross))
        return x + self.dropout(out), weights


# --- Laboratorio 6: modelos para probar la decodificación y el entrenamiento ---


class ToySeq2Seq(nn.Module):
    """Modelo de juguete con la interfaz del Transformer del laboratorio 6 (no es uno).

    ``encode``: *embedding* del origen. ``decode``: una atención cruzada por posiciones
    (consultas y claves = *embeddings* de posición, valores = ``memory``, con ``src_mask``)
    más la media de los *embeddings* del destino que ``tgt_mask`` deja ver, repetida
    ``layers`` veces (con 2, como en un decodificador de dos capas, la salida de la última
    posición ya depende de ``tgt_mask``). Sin normas ni autoatención aprendida. Los pesos
    son normales de desviación ``scale`` y dependen solo de ``seed``; cada llamada a
    ``decode`` anota el tamaño del lote en ``decode_batches``.

    En evaluación, ``forward`` suma ``eval_shift`` a todos los *logits*: la pérdida y el
    *softmax* no cambian, pero los *logits* dicen el modo del modelo con un valor que el
    calificador puede recalcular (lo que contesta el núcleo sobre ``model.training`` no
    se puede comprobar).
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int = 16,
        max_len: int = 32,
        seed: int = 0,
        scale: float = 1.0,
        layers: int = 1,
        eval_shift: float = 0.0,
    ):
        super().__init__()
        self.layers, self.eval_shift = layers, eval_shift
        self.src_embed = nn.Embedding(vocab_size, d_model)
        self.tgt_embed = nn.Embedding(vocab_size, d_model)
        self.position = nn.Embedding(max_len, d_model)
        self.generator = nn.Linear(d_model, vocab_size)
        self.decode_batches: list[int] = []
        random = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for parameter in self.parameters():
                parameter.copy_(torch.randn(parameter.shape, generator=random) * scale)

    def encode(self, src, src_mask):
        return self.src_embed(src)  # (B, T_k, D)

    def decode(self, memory, src_mask, tgt, tgt_mask):
        self.decode_batches.append(tgt.size(0))
        T_q, T_k, D = tgt.size(1), memory.size(1), memory.size(2)
        query = self.position(torch.arange(T_q, device=tgt.device))  # (T_q, D)
        key = self.position(torch.arange(T_k, device=tgt.device))  # (T_k, D)
        scores = (query @ key.T / D**0.5).expand(memory.size(0), T_q, T_k)
        if src_mask is not None:
            scores = scores.masked_fill(~src_mask, float("-inf"))
        weights = scores.softmax(dim=-1)  # (B, T_q, T_k)
        seen = tgt_mask.float() if tgt_mask is not None else torch.ones(T_q, T_q)
        prefix = self.tgt_embed(tgt)  # (B, T_q, D)
        for _ in range(self.layers):
            prefix = seen @ prefix / seen.sum(dim=-1, keepdim=True).clamp(min=1)
        return weights @ memory + prefix + query, weights.unsqueeze(1)

    def forward(self, src, tgt, src_mask, tgt_mask):
        out, _ = self.decode(self.encode(src, src_mask), src_mask, tgt, tgt_mask)
        logits = self.generator(out)  # (B, T_q, V)
        return logits if self.training else logits + self.eval_shift


class CopyOracle(nn.Module):
    """«Modelo» de mentira para probar una decodificación: copia el origen y después emite EOS.

    ``encode`` devuelve el propio origen; ``decode``, en cada posición del destino, el
    *one-hot* (B, T_q, V) del símbolo de origen de esa posición (``eos_idx`` tras el último),
    que el generador (la identidad) deja como *logits*. Cada llamada a ``decode`` anota la
    longitud del destino que recibe en ``decode_lengths``.
    """

    def __init__(self, vocab_size: int, eos_idx: int):
        super().__init__()
        self.vocab_size, self.eos_idx, self.generator = vocab_size, eos_idx, nn.Identity()
        self.decode_lengths: list[int] = []

    def encode(self, src, src_mask):
        return src

    def decode(self, memory, src_mask, tgt, tgt_mask):
        self.decode_lengths.append(tgt.size(1))
        following = torch.cat([memory, torch.full_like(memory[:, :1], self.eos_idx)], dim=1)
        position = torch.arange(tgt.size(1)).clamp(max=memory.size(1))
        return torch.nn.functional.one_hot(following[:, position], self.vocab_size).float(), None
