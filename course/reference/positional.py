"""Laboratorio 3: *embeddings* de *tokens* y codificación posicional (Vaswani et al., 2017, §3.4-3.5).

La codificación sinusoidal se calcula de dos formas (la cerrada, ``pos / 10000^(2i/D)``,
y la exponencial del código de referencia, ``exp(-log(10000) · 2i / D)``) que deben dar
lo mismo. Ambas calculan el ángulo en ``float64`` y devuelven ``float32``: con
posiciones de miles, ``float32`` pierde decimales del ángulo antes del seno.
"""

import math

import torch
from torch import Tensor, nn

MAX_LEN = 5000  # posiciones precalculadas por defecto, como en The Annotated Transformer
BASE = 10000.0  # base de las longitudes de onda del artículo (§3.5)


class TokenEmbedding(nn.Module):
    """*Embedding* de *tokens* multiplicado por √D (Vaswani et al., 2017, §3.4).

    El factor √D pone la escala del *embedding* a la altura de la codificación
    posicional, cuyos valores están en [-1, 1].

    Args:
        vocab_size: tamaño V del vocabulario.
        d_model: dimensión D del *embedding*.

    Forma:
        tokens (B, T), int64 -> (B, T, D)
    """

    def __init__(self, vocab_size: int, d_model: int) -> None:
        super().__init__()
        self.d_model = d_model
        self.embedding = nn.Embedding(vocab_size, d_model)

    def forward(self, tokens: Tensor) -> Tensor:
        return self.embedding(tokens) * math.sqrt(self.d_model)  # (B, T, D)


def sinusoidal_encoding(max_len: int, d_model: int) -> Tensor:
    """Codificación sinusoidal, forma cerrada (Vaswani et al., 2017, §3.5).

    .. math::
        PE_{(pos, 2i)} = \\sin(pos / 10000^{2i/D}), \\quad
        PE_{(pos, 2i+1)} = \\cos(pos / 10000^{2i/D})

    Las columnas pares llevan seno y las impares coseno; cada par (2i, 2i + 1)
    comparte frecuencia, así que sin² + cos² = 1 en cada par.

    Args:
        max_len: número de posiciones T (de 0 a T - 1).
        d_model: dimensión D.

    Forma:
        devuelve (T, D), float32, valores en [-1, 1]
    """
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)  # (T, 1)
    dims = torch.arange(d_model)  # (D,)
    two_i = (dims // 2 * 2).to(torch.float64)  # (D,): 0, 0, 2, 2, 4, 4, ...
    angle = position / BASE ** (two_i / d_model)  # (T, D)
    encoding = torch.where(dims % 2 == 0, angle.sin(), angle.cos())  # (T, D)
    return encoding.float()


def sinusoidal_encoding_exp(max_len: int, d_model: int) -> Tensor:
    """La misma codificación con ``exp(-log(10000) · 2i / D)``, como en el código habitual.

    Escribir ``1 / 10000^(2i/D)`` como una exponencial evita la potencia; el resultado
    debe coincidir con :func:`sinusoidal_encoding`.

    Args:
        max_len: número de posiciones T.
        d_model: dimensión D.

    Forma:
        devuelve (T, D), float32
    """
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)  # (T, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (⌈D/2⌉,)
    frequency = torch.exp(-math.log(BASE) * two_i / d_model)  # (⌈D/2⌉,)
    encoding = torch.zeros(max_len, d_model, dtype=torch.float64)  # (T, D)
    encoding[:, 0::2] = torch.sin(position * frequency)  # (T, ⌈D/2⌉)
    encoding[:, 1::2] = torch.cos(position * frequency[: d_model // 2])  # (T, ⌊D/2⌋)
    return encoding.float()


class PositionalEncoding(nn.Module):
    """Suma la codificación sinusoidal a los *embeddings* y aplica *dropout* (§3.5, §5.4).

    La tabla se guarda como *buffer* ``pe`` **no persistente**: se mueve con
    ``.to(device)`` pero no entra en el ``state_dict``, porque se recalcula igual en
    cada construcción; así un punto de control no depende de ``max_len``.

    Args:
        d_model: dimensión D.
        dropout: probabilidad de *dropout* tras la suma.
        max_len: número máximo de posiciones que admite.

    Forma:
        x (B, T, D) con T <= max_len -> (B, T, D)
    """

    def __init__(self, d_model: int, dropout: float = 0.0, max_len: int = MAX_LEN) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_encoding(max_len, d_model), persistent=False)

    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        if T > self.pe.size(0):
            raise ValueError(f"la secuencia tiene {T} posiciones; el máximo es {self.pe.size(0)}")
        return self.dropout(x + self.pe[:T])  # (B, T, D) + (T, D) -> (B, T, D)


class LearnedPositionalEmbedding(nn.Module):
    """Codificación posicional aprendida: una fila entrenable por posición (§3.5, Tabla 3 (E)).

    El artículo la probó y obtuvo resultados casi idénticos a los de la sinusoidal, pero
    no puede extrapolar a posiciones que no vio en el entrenamiento.

    Args:
        d_model: dimensión D.
        max_len: número de posiciones que tienen fila.

    Forma:
        x (B, T, D) con T <= max_len -> (B, T, D)
    """

    def __init__(self, d_model: int, max_len: int = MAX_LEN) -> None:
        super().__init__()
        self.embedding = nn.Embedding(max_len, d_model)

    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        positions = torch.arange(T, device=x.device)  # (T,)
        return x + self.embedding(positions)  # (B, T, D) + (T, D) -> (B, T, D)
