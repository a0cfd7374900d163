"""Configuración del modelo completo (``course.reference.model``) como *dataclass* congelada.

Los bloques de los laboratorios 1 a 5 reciben escalares explícitos, como PyTorch; solo el
Transformer completo y ``python -m course train`` usan esta configuración. Los valores
por defecto son los del modelo *base* del artículo (Vaswani et al., 2017, Tabla 3),
salvo los tamaños de vocabulario, que dependen de los datos y no tienen valor por defecto.
"""

import dataclasses
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
    # P_drop de los pesos de atención si difiere de dropout (None = dropout). Con 0, la
    # atención fusionada de la CPU conserva su núcleo rápido (con dropout usa la cuenta lenta)
    attention_dropout: float | None = None
    # P_drop tras la activación de la feed-forward si difiere de dropout (None = dropout)
    activation_dropout: float | None = None
    norm_first: bool = False  # post-norm como el artículo; True para pre-norm
    tie_weights: bool = True  # el generador comparte la matriz del embedding de destino (§3.4)
    pad_idx: int = 0  # identificador del token de relleno en ambos vocabularios
    max_len: int = 512  # posiciones que cubre la codificación posicional


@dataclass(frozen=True)
class TrainConfig:
    """Receta de entrenamiento de ``python -m course train`` (modelo, datos, optimización, decodificación).

    Se guarda en cada punto de control (``dataclasses.asdict``) junto a la semilla, así
    que un punto de control dice cómo se obtuvo. ``max_tokens`` es el presupuesto de un
    lote **por proceso** (relleno incluido): con ``torchrun`` y N procesos, el lote
    efectivo es N veces mayor.
    """

    name: str
    # modelo (ModelConfig, sin los tamaños de vocabulario, que fija el tokenizador)
    d_model: int = 256
    num_heads: int = 4
    num_encoder_layers: int = 3
    num_decoder_layers: int = 3
    d_ff: int = 1024
    dropout: float = 0.1
    attention_dropout: float | None = None  # None = dropout; 0 = atención fusionada rápida en CPU
    activation_dropout: float | None = None  # None = dropout; 0 = una pasada menos por la FFN
    norm_first: bool = True  # pre-norm: estable con tasas altas y sin calentamiento largo
    fused_kernels: bool = True  # atención y LayerNorm de PyTorch (use_fused_kernels)
    vocab_size: int = 8000  # BPE conjunto alemán+inglés
    # datos
    max_tokens: int = 4096  # tokens por lote y proceso, relleno incluido
    max_sentence_tokens: int = 128  # se descartan los pares de entrenamiento más largos
    max_train_pairs: int | None = None  # None = las 29 000 frases
    max_val_pairs: int | None = None
    max_test_pairs: int | None = None
    # optimización
    epochs: int = 20
    lr: float = 1e-3  # tasa máxima (AdamW), alcanzada al final del calentamiento
    warmup_steps: int = 500
    weight_decay: float = 1e-4
    label_smoothing: float = 0.1
    clip_norm: float | None = 1.0
    max_minutes: float | None = None  # tope de tiempo de entrenamiento (None = sin tope)
    average_last: int = 1  # promedia los pesos de las últimas N épocas (1 = sin promedio)
    save_every: int | None = None  # guarda también cada N pasos (reanudación a mitad de época)
    seed: int = 0
    # decodificación del conjunto de prueba
    beam_size: int = 5
    length_penalty: float = 0.6  # α de la penalización de longitud de GNMT
    decode_batch_size: int = 128  # frases por lote al traducir

    def model_config(self, vocab_size: int) -> ModelConfig:
        """La ``ModelConfig`` de esta receta para un vocabulario de ``vocab_size`` símbolos."""
        return ModelConfig(
            src_vocab_size=vocab_size,
            tgt_vocab_size=vocab_size,
            d_model=self.d_model,
            num_heads=self.num_heads,
            num_encoder_layers=self.num_encoder_layers,
            num_decoder_layers=self.num_decoder_layers,
            d_ff=self.d_ff,
            dropout=self.dropout,
            attention_dropout=self.attention_dropout,
            activation_dropout=self.activation_dropout,
            norm_first=self.norm_first,
        )


# CPU (2 núcleos): objetivo sacreBLEU >= 30 en <= 30 min. Vocabulario de 4000 (el
# generador y el softmax de 8000 símbolos eran casi la mitad del cómputo) y lotes de
# 2048 tokens: el doble de pasos por época por un 7 % menos de tokens/s
_CPU = TrainConfig(
    name="cpu",
    d_model=128,
    num_heads=4,
    num_encoder_layers=3,
    num_decoder_layers=2,
    d_ff=512,
    dropout=0.1,
    vocab_size=4000,
    max_tokens=2048,
    epochs=14,
    lr=2e-3,
    warmup_steps=300,
    max_minutes=25.0,
    average_last=3,
)

PRESETS: dict[str, TrainConfig] = {
    # GPU (una H100 o H200): objetivo sacreBLEU >= 41 en test_2016_flickr, <= 10 M parámetros,
    # <= 3 min para la orden entera. Un modelo tan pequeño deja la GPU esperando a Python:
    # lotes 4 veces mayores que los de 6144 cuestan casi lo mismo por paso, se forman en la
    # GPU (DeviceBatches) y la atención evita cuDNN (attention_backends). Unos 40 pasos/s:
    # las 100 épocas caben en ~75 s; el tope de 2 min es por si la GPU va más lenta.
    # Medido en docs/benchmarks.md
    "gpu": TrainConfig(
        name="gpu",
        dropout=0.3,
        max_tokens=24576,
        epochs=100,
        lr=2e-3,
        warmup_steps=300,
        average_last=5,
        max_minutes=2.0,
    ),
    "cpu": _CPU,
    # CPU (2 núcleos) en una sesión de clase: objetivo sacreBLEU >= 35 en <= 12 min para la
    # orden entera. El modelo y los lotes de la receta cpu con tres cambios: sin dropout
    # (en 8 épocas el modelo apenas sobreajusta, y sin dropout la atención fusionada de la
    # CPU usa su núcleo rápido: +50 % de tokens/s), tasa más alta y calentamiento más
    # corto; el coseno termina al agotarse el tope de 10,5 min si antes no acaban las 8
    # épocas. Medido en docs/benchmarks.md
    "rapida": dataclasses.replace(
        _CPU, name="rapida", dropout=0.0, epochs=8, lr=3e-3, warmup_steps=150, max_minutes=10.5
    ),
    # CPU (2 núcleos), para probar antes de la rapida. La receta rapida con 2 épocas y un
    # tope de 3 min por si la máquina va más lenta. Medido con los 2 núcleos libres
    # (25-11-2026): 2 épocas en 95 s, la orden entera en 1 min 46 s, BLEU 24.04
    "corta": dataclasses.replace(
        _CPU, name="corta", dropout=0.0, epochs=2, lr=3e-3, warmup_steps=150, max_minutes=3.0
    ),
    # prueba de humo: pocos pasos con unos cientos de frases, segundos
    "smoke": TrainConfig(
        name="smoke",
        d_model=64,
        num_heads=4,
        num_encoder_layers=2,
        num_decoder_layers=2,
        d_ff=128,
        dropout=0.1,
        max_tokens=1024,
        max_train_pairs=300,
        max_val_pairs=64,
        max_test_pairs=32,
        epochs=2,
        lr=2e-3,
        warmup_steps=10,
        beam_size=2,
        decode_batch_size=32,
    ),
}
