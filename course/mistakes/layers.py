"""Errores típicos del laboratorio 5 (capas del codificador y del decodificador).

Cada mutante es la referencia con un solo error. Nunca llega al estudiante.
"""

import copy

import torch.nn.functional as F
from torch import nn

from course.mistakes import for_exercise
from course.reference import layers as ref
from course.reference.normalization import LayerNorm

LAB = "05_capas"


# --- ejercicio 1: PositionwiseFeedForward ----------------------------------------------


class FeedForwardWithoutActivation(ref.PositionwiseFeedForward):
    def forward(self, x):
        return self.linear2(self.dropout(self.linear1(x)))


class FeedForwardActivationsSwapped(ref.PositionwiseFeedForward):
    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__(d_model, d_ff, dropout, activation)
        self.activation = F.gelu if activation == "relu" else F.relu


def _gelu_tanh(x):
    return F.gelu(x, approximate="tanh")


class FeedForwardGeluTanh(ref.PositionwiseFeedForward):
    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__(d_model, d_ff, dropout, activation)
        if activation == "gelu":
            self.activation = _gelu_tanh


class FeedForwardActivationAtTheEnd(ref.PositionwiseFeedForward):
    def forward(self, x):
        return self.activation(super().forward(x))


class FeedForwardDropoutAfterLinear2(ref.PositionwiseFeedForward):
    def forward(self, x):
        return self.dropout(self.linear2(self.activation(self.linear1(x))))


class FeedForwardUnknownIsRelu(ref.PositionwiseFeedForward):
    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__(d_model, d_ff, dropout, activation if activation == "gelu" else "relu")


# --- ejercicio 2: EncoderLayer ---------------------------------------------------------


class EncoderLayerInverted(ref.EncoderLayer):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, not norm_first)


class EncoderLayerWithoutMask(ref.EncoderLayer):
    def forward(self, x, mask=None):
        return super().forward(x)


class EncoderLayerNorm1Twice(ref.EncoderLayer):
    def forward(self, x, mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask)[0])
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)[0]))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class EncoderLayerDropoutOnResidual(ref.EncoderLayer):
    def forward(self, x, mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = self.dropout(x + self.self_attn(h, h, h, mask)[0])
            return self.dropout(x + self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(x + self.self_attn(x, x, x, mask)[0]))
        return self.norm2(self.dropout(x + self.feed_forward(x)))


class EncoderLayerKeysUnnormalized(ref.EncoderLayer):
    def forward(self, x, mask=None):
        if not self.norm_first:
            return super().forward(x, mask)
        x = x + self.dropout(self.self_attn(self.norm1(x), x, x, mask)[0])
        return x + self.dropout(self.feed_forward(self.norm2(x)))


class EncoderLayerWithoutResidual(ref.EncoderLayer):
    def forward(self, x, mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = self.dropout(self.self_attn(h, h, h, mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self.self_attn(x, x, x, mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncoderLayerNormalizedResidual(ref.EncoderLayer):
    def forward(self, x, mask=None):
        if not self.norm_first:
            return super().forward(x, mask)
        x = self.norm1(x)
        x = x + self.dropout(self.self_attn(x, x, x, mask)[0])
        x = self.norm2(x)
        return x + self.dropout(self.feed_forward(x))


class EncoderLayerWithoutDropout(ref.EncoderLayer):
    def forward(self, x, mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.self_attn(h, h, h, mask)[0]
            return x + self.feed_forward(self.norm2(x))
        x = self.norm1(x + self.self_attn(x, x, x, mask)[0])
        return self.norm2(x + self.feed_forward(x))


class EncoderLayerReturnsPair(ref.EncoderLayer):
    def forward(self, x, mask=None):
        return super().forward(x, mask), self.self_attn(x, x, x, mask)[1]


# --- ejercicio 3: DecoderLayer ---------------------------------------------------------


class DecoderLayerInverted(ref.DecoderLayer):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, not norm_first)


class DecoderLayerWithoutTgtMask(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        return super().forward(x, memory, None, memory_mask)


class DecoderLayerWithoutMemoryMask(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        return super().forward(x, memory, tgt_mask, None)


class DecoderLayerCrossOnX(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        return super().forward(x, x, tgt_mask, None)


class DecoderLayerReturnsSelfWeights(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        h = self.norm1(x) if self.norm_first else x
        out, _ = super().forward(x, memory, tgt_mask, memory_mask)
        return out, self.self_attn(h, h, h, tgt_mask)[1]


class DecoderLayerMemoryNormalized(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        if not self.norm_first:
            return super().forward(x, memory, tgt_mask, memory_mask)
        h = self.norm1(x)
        x = x + self.dropout(self.self_attn(h, h, h, tgt_mask)[0])
        out, cross_weights = self.cross_attn(
            self.norm2(x), self.norm2(memory), self.norm2(memory), memory_mask
        )
        x = x + self.dropout(out)
        return x + self.dropout(self.feed_forward(self.norm3(x))), cross_weights


class DecoderLayerNormsSwapped(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, tgt_mask)[0])
            out, cross_weights = self.cross_attn(self.norm3(x), memory, memory, memory_mask)
            x = x + self.dropout(out)
            return x + self.dropout(self.feed_forward(self.norm2(x))), cross_weights
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)[0]))
        out, cross_weights = self.cross_attn(x, memory, memory, memory_mask)
        x = self.norm3(x + self.dropout(out))
        return self.norm2(x + self.dropout(self.feed_forward(x))), cross_weights


class DecoderLayerReturnsOnlyOutput(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        return super().forward(x, memory, tgt_mask, memory_mask)[0]


class DecoderLayerDropoutOnResidual(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = self.dropout(x + self.self_attn(h, h, h, tgt_mask)[0])
            out, cross_weights = self.cross_attn(self.norm2(x), memory, memory, memory_mask)
            x = self.dropout(x + out)
            return self.dropout(x + self.feed_forward(self.norm3(x))), cross_weights
        x = self.norm1(self.dropout(x + self.self_attn(x, x, x, tgt_mask)[0]))
        out, cross_weights = self.cross_attn(x, memory, memory, memory_mask)
        x = self.norm2(self.dropout(x + out))
        return self.norm3(self.dropout(x + self.feed_forward(x))), cross_weights


class DecoderLayerWithoutCrossResidual(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, tgt_mask)[0])
            out, cross_weights = self.cross_attn(self.norm2(x), memory, memory, memory_mask)
            x = self.dropout(out)
            return x + self.dropout(self.feed_forward(self.norm3(x))), cross_weights
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)[0]))
        out, cross_weights = self.cross_attn(x, memory, memory, memory_mask)
        x = self.norm2(self.dropout(out))
        return self.norm3(x + self.dropout(self.feed_forward(x))), cross_weights


# --- ejercicios 4 y 5: las pilas Encoder y Decoder -------------------------------------


def _always_norm(layer):
    return LayerNorm(layer.norm1.weight.numel())


class _SharedLayer:
    """La misma capa N veces en la pila (comparten pesos); sirve para Encoder y Decoder."""

    def __init__(self, layer, num_layers):
        super().__init__(layer, num_layers)
        self.layers = nn.ModuleList([layer] * num_layers)


class _AlwaysNorm:
    """LayerNorm final también en post-norm."""

    def __init__(self, layer, num_layers):
        super().__init__(layer, num_layers)
        self.norm = _always_norm(layer)


class _NeverNorm:
    """Sin LayerNorm final, tampoco en pre-norm."""

    def __init__(self, layer, num_layers):
        super().__init__(layer, num_layers)
        self.norm = nn.Identity()


class EncoderSharedLayer(_SharedLayer, ref.Encoder):
    pass


class EncoderOneCopyRepeated(ref.Encoder):
    def __init__(self, layer, num_layers):
        super().__init__(layer, num_layers)
        self.layers = nn.ModuleList([copy.deepcopy(layer)] * num_layers)


class EncoderPlainList(ref.Encoder):
    def __init__(self, layer, num_layers):
        super().__init__(layer, num_layers)
        del self.layers
        self.layers = [copy.deepcopy(layer) for _ in range(num_layers)]


class EncoderAlwaysNorm(_AlwaysNorm, ref.Encoder):
    pass


class EncoderNeverNorm(_NeverNorm, ref.Encoder):
    pass


class EncoderWithoutMask(ref.Encoder):
    def forward(self, x, mask=None):
        return super().forward(x)


class EncoderNormEachLayer(ref.Encoder):
    def forward(self, x, mask=None):
        for layer in self.layers:
            x = self.norm(layer(x, mask))
        return x


class EncoderForgetsNorm(ref.Encoder):
    def forward(self, x, mask=None):
        for layer in self.layers:
            x = layer(x, mask)
        return x


class DecoderFirstWeights(ref.Decoder):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        first = None
        for layer in self.layers:
            x, cross_weights = layer(x, memory, tgt_mask, memory_mask)
            first = cross_weights if first is None else first
        return self.norm(x), first


class DecoderWithoutValueError(ref.Decoder):
    def __init__(self, layer, num_layers):
        nn.Module.__init__(self)
        self.layers = nn.ModuleList(copy.deepcopy(layer) for _ in range(num_layers))
        self.norm = _always_norm(layer) if layer.norm_first else nn.Identity()


class DecoderSharedLayer(_SharedLayer, ref.Decoder):
    pass


class DecoderAlwaysNorm(_AlwaysNorm, ref.Decoder):
    pass


class DecoderNeverNorm(_NeverNorm, ref.Decoder):
    pass


class DecoderWithoutMasks(ref.Decoder):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        return super().forward(x, memory)


class DecoderReturnsOnlyOutput(ref.Decoder):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        return super().forward(x, memory, tgt_mask, memory_mask)[0]


# --- la misma idea en otras formas ---------------------------------------------------------


class EncoderLayerReusesNormedInput(ref.EncoderLayer):
    def forward(self, x, mask=None):
        if not self.norm_first:
            return super().forward(x, mask)
        h = self.norm1(x)
        x = x + self.dropout(self.self_attn(h, h, h, mask)[0])
        return x + self.dropout(self.feed_forward(h))


class DecoderLayerReusesNormedInput(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        if not self.norm_first:
            return super().forward(x, memory, tgt_mask, memory_mask)
        h = self.norm1(x)
        x = x + self.dropout(self.self_attn(h, h, h, tgt_mask)[0])
        out, cross_weights = self.cross_attn(self.norm2(x), memory, memory, memory_mask)
        x = x + self.dropout(out)
        return x + self.dropout(self.feed_forward(h)), cross_weights


class DecoderWithoutMemoryMask(ref.Decoder):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        return super().forward(x, memory, tgt_mask)


class DecoderWithoutTgtMask(ref.Decoder):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        return super().forward(x, memory, None, memory_mask)


class FeedForwardAlwaysRelu(ref.PositionwiseFeedForward):
    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__(d_model, d_ff, dropout, activation)
        self.activation = F.relu


REUSES_NORMED = (
    "¿Reutilizas norm1(x) para la feed-forward? En pre-norm cada subcapa normaliza su propia"
    " entrada: la x que sale de la subcapa anterior, con su propia LayerNorm."
)
MEMORY_MASK = "¿Pasas memory_mask a la atención cruzada?"
TGT_MASK = "¿Pasas tgt_mask a la autoatención?"

INVERTED = "¿Están cambiadas pre-norm y post-norm? norm_first=True normaliza antes de cada subcapa."
DROPOUT_ON_RESIDUAL = (
    "self.dropout va sobre la salida de cada subcapa, no sobre la suma con la conexión residual."
)
WITHOUT_RESIDUAL = "¿Falta sumar la conexión residual (x + …)?"
SHARED = (
    "Las capas de la pila deben ser copias nuevas (copy.deepcopy), no el mismo objeto repetido."
)
PLAIN_LIST = "self.layers debe ser un nn.ModuleList"
POST_NORM_EXTRA = "En post-norm no hay LayerNorm final: cada capa ya termina normalizando"
PRE_NORM_MISSING = "En pre-norm falta la LayerNorm final"

MISTAKES = [
    *for_exercise(
        "ej1_feed_forward",
        "PositionwiseFeedForward",
        (FeedForwardWithoutActivation, "¿Falta la activación entre las dos capas lineales?"),
        (
            FeedForwardActivationsSwapped,
            "Con activation='relu' hay que usar ReLU (y con 'gelu', GELU).",
        ),
        (FeedForwardGeluTanh, "GELU exacta: F.gelu sin approximate='tanh'."),
        (
            FeedForwardActivationAtTheEnd,
            "La activación va solo entre linear1 y linear2, no a la salida.",
        ),
        (
            FeedForwardDropoutAfterLinear2,
            "El dropout va justo después de la activación, antes de linear2.",
        ),
        (
            FeedForwardUnknownIsRelu,
            "Con una activación desconocida (activation='sigmoid') hay que lanzar ValueError.",
        ),
    ),
    *for_exercise(
        "ej2_encoder_layer",
        "EncoderLayer",
        (EncoderLayerInverted, INVERTED),
        (EncoderLayerWithoutMask, "¿Pasas la máscara a la autoatención?"),
        (
            EncoderLayerNorm1Twice,
            "Cada subcapa tiene su LayerNorm: norm1 con la atención y norm2 con la FFN.",
        ),
        (EncoderLayerDropoutOnResidual, DROPOUT_ON_RESIDUAL),
        (
            EncoderLayerKeysUnnormalized,
            "En pre-norm, la consulta, la clave y el valor son el mismo tensor normalizado.",
        ),
        (EncoderLayerWithoutResidual, WITHOUT_RESIDUAL),
        (
            EncoderLayerNormalizedResidual,
            "En pre-norm la LayerNorm va solo en la rama de la subcapa; la conexión residual suma"
            " la x sin normalizar.",
        ),
        (EncoderLayerWithoutDropout, "¿Aplicas self.dropout a la salida de cada subcapa?"),
        (EncoderLayerReturnsPair, "EncoderLayer devuelve solo la salida (B, T, D), no una tupla."),
    ),
    *for_exercise(
        "ej3_decoder_layer",
        "DecoderLayer",
        (DecoderLayerInverted, INVERTED),
        (DecoderLayerWithoutTgtMask, TGT_MASK),
        (DecoderLayerWithoutMemoryMask, MEMORY_MASK),
        (DecoderLayerCrossOnX, "Las claves y los valores de la atención cruzada vienen de memory."),
        (
            DecoderLayerReturnsSelfWeights,
            "¿Devuelves los pesos de la autoatención? Se devuelven los de la atención cruzada.",
        ),
        (
            DecoderLayerMemoryNormalized,
            "En pre-norm solo se normaliza la consulta de la atención cruzada; memory entra tal cual.",
        ),
        (
            DecoderLayerNormsSwapped,
            "Cada subcapa tiene su LayerNorm: norm1, norm2 y norm3, en el orden de las subcapas.",
        ),
        (
            DecoderLayerReturnsOnlyOutput,
            "DecoderLayer devuelve la pareja (salida, pesos de la atención cruzada).",
        ),
        (DecoderLayerDropoutOnResidual, DROPOUT_ON_RESIDUAL),
        (DecoderLayerWithoutCrossResidual, WITHOUT_RESIDUAL),
    ),
    *for_exercise(
        "ej4_encoder",
        "Encoder",
        (EncoderSharedLayer, SHARED),
        (EncoderOneCopyRepeated, SHARED),
        (EncoderPlainList, PLAIN_LIST),
        (EncoderAlwaysNorm, POST_NORM_EXTRA),
        (EncoderNeverNorm, PRE_NORM_MISSING),
        (EncoderWithoutMask, "¿Pasas la máscara a cada capa?"),
        (EncoderNormEachLayer, "La LayerNorm final se aplica una sola vez, tras la última capa."),
        (EncoderForgetsNorm, "¿Aplicas self.norm a la salida de la última capa?"),
    ),
    *for_exercise(
        "ej5_decoder",
        "Decoder",
        (
            DecoderFirstWeights,
            "Devuelve los pesos de la atención cruzada de la última capa, no los de la primera.",
        ),
        (DecoderWithoutValueError, "Decoder(layer, 0) debe lanzar ValueError"),
        (DecoderSharedLayer, SHARED),
        (DecoderAlwaysNorm, POST_NORM_EXTRA),
        (DecoderNeverNorm, PRE_NORM_MISSING),
        (DecoderWithoutMasks, "¿Pasas tgt_mask y memory_mask a cada capa?"),
        (
            DecoderReturnsOnlyOutput,
            "Decoder devuelve la pareja (salida, pesos de la atención cruzada de la última capa).",
        ),
    ),
    *for_exercise(
        "ej1_feed_forward",
        "PositionwiseFeedForward",
        (FeedForwardAlwaysRelu, "Con activation='gelu' hay que usar GELU: ¿usas siempre ReLU?"),
    ),
    *for_exercise(
        "ej2_encoder_layer",
        "EncoderLayer",
        (EncoderLayerReusesNormedInput, REUSES_NORMED),
    ),
    *for_exercise(
        "ej3_decoder_layer",
        "DecoderLayer",
        (DecoderLayerReusesNormedInput, REUSES_NORMED),
    ),
    *for_exercise(
        "ej5_decoder",
        "Decoder",
        (DecoderWithoutMemoryMask, MEMORY_MASK),
        (DecoderWithoutTgtMask, TGT_MASK),
    ),
]
