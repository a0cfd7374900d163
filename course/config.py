"""Configuración del modelo completo (``course.reference.model``) como *dataclass* congelada.

Los bloques de los laboratorios 1 a 5 reciben escalares explícitos, como PyTorch; solo el
Transformer completo y ``python -m course train`` usan esta configuración. Los valores
por defecto son los del modelo *base* del artículo (Vaswani et al., 2017, Tabla 3),
salvo los tamaños de vocabulario, que dependen de los datos y no tienen valor por defecto.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelConfig:
    """Hiperparámetros del Transformer codificador-decodificador.

    Se guarda junto a los pesos en cada punto de control (``dataclasses.asdict``).
    """

    src_vocab_size: int  # V de origen: lo fija el tokenizador de la lengua de origen
    tgt_vocab_size: int  # V de destino: lo fija el tokenizador de la lengua de destino
    d_model: int = 512  # D, dimensión de embeddings y de todas las subcapas
    num_heads: int = 8  # H; debe dividir a d_model (d_k = 64 en el modelo base)
    num_encoder_layers: int = 6  # N del codificador
    num_decoder_layers: int = 6  # N del decodificador
    d_ff: int = 2048  # dimensión oculta de la feed-forward, 4·D
    dropout: float = 0.1  # P_drop del artículo, en residuales, embeddings y atención
    norm_first: bool = False  # post-norm como el artículo; True para pre-norm
    tie_weights: bool = True  # el generador comparte la matriz del embedding de destino (§3.4)
    pad_idx: int = 0  # identificador del token de relleno en ambos vocabularios
    max_len: int = 512  # posiciones que cubre la codificación posicional
