"""Errores típicos del laboratorio 5 (capas del codificador y del decodificador).

Cada mutante es la referencia con un solo error. Nunca llega al estudiante.
"""

import copy
import math

import torch
import torch.nn.functional as F
from torch import nn

from course.mistakes import for_exercise
from course.reference import layers as ref
from course.reference.multihead import MultiHeadAttention
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


# --- la misma idea en más formas (issue 23): ejercicio 1 ---------------------------------


class FeedForwardActivationDiscarded(ref.PositionwiseFeedForward):
    """Llama a la activación, pero no guarda su resultado."""

    def forward(self, x):
        h = self.linear1(x)
        self.activation(h)
        return self.linear2(self.dropout(h))


class FeedForwardStepsWithoutActivation(ref.PositionwiseFeedForward):
    def forward(self, x):
        x = self.linear1(x)
        x = self.dropout(x)
        return self.linear2(x)


class FeedForwardAlwaysGelu(ref.PositionwiseFeedForward):
    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__(d_model, d_ff, dropout, activation)
        self.activation = F.gelu


class FeedForwardGeluKeyCopied(ref.PositionwiseFeedForward):
    """El diccionario de activaciones copiado y pegado: "gelu" también da ReLU."""

    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__(d_model, d_ff, dropout, activation)
        self.activation = {"relu": F.relu, "gelu": F.relu}[activation]


def _gelu_tanh_formula(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


class FeedForwardGeluTanhFormula(ref.PositionwiseFeedForward):
    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__(d_model, d_ff, dropout, activation)
        if activation == "gelu":
            self.activation = _gelu_tanh_formula


class FeedForwardGeluModuleTanh(ref.PositionwiseFeedForward):
    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__(d_model, d_ff, dropout, activation)
        if activation == "gelu":
            self.activation = nn.GELU(approximate="tanh")


class FeedForwardActivationAfterBoth(ref.PositionwiseFeedForward):
    def forward(self, x):
        x = self.dropout(self.activation(self.linear1(x)))
        return self.activation(self.linear2(x))


class FeedForwardActivationAfterLinear2(ref.PositionwiseFeedForward):
    def forward(self, x):
        return self.activation(self.linear2(self.dropout(self.linear1(x))))


class FeedForwardFunctionalDropoutAtTheEnd(ref.PositionwiseFeedForward):
    def forward(self, x):
        out = self.linear2(self.activation(self.linear1(x)))
        return F.dropout(out, self.dropout.p, self.training)


class FeedForwardDropoutOnInput(ref.PositionwiseFeedForward):
    def forward(self, x):
        return self.linear2(self.activation(self.linear1(self.dropout(x))))


class FeedForwardUnknownIsGelu(ref.PositionwiseFeedForward):
    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__(d_model, d_ff, dropout, "relu" if activation == "relu" else "gelu")


class FeedForwardUnknownDefaultsToRelu(ref.PositionwiseFeedForward):
    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__(d_model, d_ff, dropout, "relu")
        self.activation = {"relu": F.relu, "gelu": F.gelu}.get(activation, F.relu)


class FeedForwardWithoutDropout(ref.PositionwiseFeedForward):
    def forward(self, x):
        return self.linear2(self.activation(self.linear1(x)))


class FeedForwardDropoutDiscarded(ref.PositionwiseFeedForward):
    """Llama a self.dropout, pero no guarda su resultado."""

    def forward(self, x):
        h = self.activation(self.linear1(x))
        self.dropout(h)
        return self.linear2(h)


class FeedForwardFunctionalDropoutAlways(ref.PositionwiseFeedForward):
    """F.dropout sin training=self.training: también actúa en evaluación."""

    def forward(self, x):
        return self.linear2(F.dropout(self.activation(self.linear1(x)), self.dropout.p))


# --- ejercicio 2: EncoderLayer en más formas ----------------------------------------------


class EncoderLayerBranchesSwapped(ref.EncoderLayer):
    def forward(self, x, mask=None):
        if not self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncoderLayerAttentionWithoutMask(ref.EncoderLayer):
    def forward(self, x, mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncoderLayerNorm2Twice(ref.EncoderLayer):
    def forward(self, x, mask=None):
        if self.norm_first:
            h = self.norm2(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm2(x + self.dropout(self.self_attn(x, x, x, mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncoderLayerNormsSwapped(ref.EncoderLayer):
    def forward(self, x, mask=None):
        if self.norm_first:
            h = self.norm2(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask)[0])
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm2(x + self.dropout(self.self_attn(x, x, x, mask)[0]))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class EncoderLayerDropoutAfterNorm(ref.EncoderLayer):
    def forward(self, x, mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = self.dropout(x + self.self_attn(h, h, h, mask)[0])
            return self.dropout(x + self.feed_forward(self.norm2(x)))
        x = self.dropout(self.norm1(x + self.self_attn(x, x, x, mask)[0]))
        return self.dropout(self.norm2(x + self.feed_forward(x)))


class EncoderLayerWithoutFeedForwardResidual(ref.EncoderLayer):
    def forward(self, x, mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask)[0])
            return self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)[0]))
        return self.norm2(self.dropout(self.feed_forward(x)))


class EncoderLayerResidualFromNormalized(ref.EncoderLayer):
    """Pre-norm con la suma residual sobre h = norm(x) en lugar de x."""

    def forward(self, x, mask=None):
        if not self.norm_first:
            return super().forward(x, mask)
        h = self.norm1(x)
        x = h + self.dropout(self.self_attn(h, h, h, mask)[0])
        h = self.norm2(x)
        return h + self.dropout(self.feed_forward(h))


class EncoderLayerDropoutOnlyOnAttention(ref.EncoderLayer):
    def forward(self, x, mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask)[0])
            return x + self.feed_forward(self.norm2(x))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)[0]))
        return self.norm2(x + self.feed_forward(x))


class EncoderLayerDropoutOnlyOnFeedForward(ref.EncoderLayer):
    def forward(self, x, mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.self_attn(h, h, h, mask)[0]
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.self_attn(x, x, x, mask)[0])
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncoderLayerAttentionWithoutDropout(ref.EncoderLayer):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.self_attn = MultiHeadAttention(d_model, num_heads)


class EncoderLayerFeedForwardWithoutDropout(ref.EncoderLayer):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.feed_forward = ref.PositionwiseFeedForward(d_model, d_ff)


class EncoderLayerSublayersWithoutDropout(ref.EncoderLayer):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = ref.PositionwiseFeedForward(d_model, d_ff)


class EncoderLayerFunctionalDropout(ref.EncoderLayer):
    """F.dropout sin training=self.training: también actúa en evaluación."""

    def forward(self, x, mask=None):
        p = self.dropout.p
        if self.norm_first:
            h = self.norm1(x)
            x = x + F.dropout(self.self_attn(h, h, h, mask)[0], p)
            return x + F.dropout(self.feed_forward(self.norm2(x)), p)
        x = self.norm1(x + F.dropout(self.self_attn(x, x, x, mask)[0], p))
        return self.norm2(x + F.dropout(self.feed_forward(x), p))


class EncoderLayerReturnsWeightsToo(ref.EncoderLayer):
    def forward(self, x, mask=None):
        h = self.norm1(x) if self.norm_first else x
        weights = self.self_attn(h, h, h, mask)[1]
        return super().forward(x, mask), weights


class EncoderLayerFeedForwardOnNormedInput(ref.EncoderLayer):
    """Pre-norm que normaliza la entrada una vez y se la da a las dos subcapas."""

    def forward(self, x, mask=None):
        if not self.norm_first:
            return super().forward(x, mask)
        normed = self.norm1(x)
        attended = x + self.dropout(self.self_attn(normed, normed, normed, mask)[0])
        return attended + self.dropout(self.feed_forward(normed))


# --- ejercicio 3: DecoderLayer en más formas ----------------------------------------------


def _decoder_forward(layer, x, memory, self_mask, cross_mask, cross_kv=None):
    """La referencia con las máscaras (y las claves y valores cruzados) que se le pasen."""
    kv = memory if cross_kv is None else cross_kv
    if layer.norm_first:
        h = layer.norm1(x)
        x = x + layer.dropout(layer.self_attn(h, h, h, self_mask)[0])
        out, weights = layer.cross_attn(layer.norm2(x), kv, kv, cross_mask)
        x = x + layer.dropout(out)
        return x + layer.dropout(layer.feed_forward(layer.norm3(x))), weights
    x = layer.norm1(x + layer.dropout(layer.self_attn(x, x, x, self_mask)[0]))
    out, weights = layer.cross_attn(x, kv, kv, cross_mask)
    x = layer.norm2(x + layer.dropout(out))
    return layer.norm3(x + layer.dropout(layer.feed_forward(x))), weights


class DecoderLayerBranchesSwapped(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        if not self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, tgt_mask)[0])
            out, weights = self.cross_attn(self.norm2(x), memory, memory, memory_mask)
            x = x + self.dropout(out)
            return x + self.dropout(self.feed_forward(self.norm3(x))), weights
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)[0]))
        out, weights = self.cross_attn(x, memory, memory, memory_mask)
        x = self.norm2(x + self.dropout(out))
        return self.norm3(x + self.dropout(self.feed_forward(x))), weights


class DecoderLayerSelfAttentionWithoutMask(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        return _decoder_forward(self, x, memory, None, memory_mask)


class DecoderLayerCrossAttentionWithoutMask(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        return _decoder_forward(self, x, memory, tgt_mask, None)


class DecoderLayerMasksSwapped(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        return super().forward(x, memory, memory_mask, tgt_mask)


class DecoderLayerTgtMaskInBoth(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        return _decoder_forward(self, x, memory, tgt_mask, tgt_mask)


class DecoderLayerMemoryMaskInBoth(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        return _decoder_forward(self, x, memory, memory_mask, memory_mask)


class DecoderLayerQueriesFromMemory(ref.DecoderLayer):
    """Consulta y claves-valores cambiados: cross_attn(memory, x, x)."""

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, tgt_mask)[0])
            out, weights = self.cross_attn(memory, self.norm2(x), self.norm2(x), memory_mask)
            x = x + self.dropout(out)
            return x + self.dropout(self.feed_forward(self.norm3(x))), weights
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)[0]))
        out, weights = self.cross_attn(memory, x, x, memory_mask)
        x = self.norm2(x + self.dropout(out))
        return self.norm3(x + self.dropout(self.feed_forward(x))), weights


class DecoderLayerValuesFromX(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, tgt_mask)[0])
            q = self.norm2(x)
            out, weights = self.cross_attn(q, memory, q, memory_mask)
            x = x + self.dropout(out)
            return x + self.dropout(self.feed_forward(self.norm3(x))), weights
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)[0]))
        out, weights = self.cross_attn(x, memory, x, memory_mask)
        x = self.norm2(x + self.dropout(out))
        return self.norm3(x + self.dropout(self.feed_forward(x))), weights


class DecoderLayerWeightsVariableReused(ref.DecoderLayer):
    """``out, weights`` de la autoatención, y ``out, _`` de la cruzada: vuelven los primeros."""

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        if self.norm_first:
            h = self.norm1(x)
            out, weights = self.self_attn(h, h, h, tgt_mask)
            x = x + self.dropout(out)
            out, _ = self.cross_attn(self.norm2(x), memory, memory, memory_mask)
            x = x + self.dropout(out)
            return x + self.dropout(self.feed_forward(self.norm3(x))), weights
        out, weights = self.self_attn(x, x, x, tgt_mask)
        x = self.norm1(x + self.dropout(out))
        out, _ = self.cross_attn(x, memory, memory, memory_mask)
        x = self.norm2(x + self.dropout(out))
        return self.norm3(x + self.dropout(self.feed_forward(x))), weights


class DecoderLayerNorm1Thrice(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, tgt_mask)[0])
            out, weights = self.cross_attn(self.norm1(x), memory, memory, memory_mask)
            x = x + self.dropout(out)
            return x + self.dropout(self.feed_forward(self.norm1(x))), weights
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)[0]))
        out, weights = self.cross_attn(x, memory, memory, memory_mask)
        x = self.norm1(x + self.dropout(out))
        return self.norm1(x + self.dropout(self.feed_forward(x))), weights


class DecoderLayerDropoutAfterNorm(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        if self.norm_first:
            return DecoderLayerDropoutOnResidual.forward(self, x, memory, tgt_mask, memory_mask)
        x = self.dropout(self.norm1(x + self.self_attn(x, x, x, tgt_mask)[0]))
        out, weights = self.cross_attn(x, memory, memory, memory_mask)
        x = self.dropout(self.norm2(x + out))
        return self.dropout(self.norm3(x + self.feed_forward(x))), weights


class DecoderLayerWithoutSelfResidual(ref.DecoderLayer):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = self.dropout(self.self_attn(h, h, h, tgt_mask)[0])
            out, weights = self.cross_attn(self.norm2(x), memory, memory, memory_mask)
            x = x + self.dropout(out)
            return x + self.dropout(self.feed_forward(self.norm3(x))), weights
        x = self.norm1(self.dropout(self.self_attn(x, x, x, tgt_mask)[0]))
        out, weights = self.cross_attn(x, memory, memory, memory_mask)
        x = self.norm2(x + self.dropout(out))
        return self.norm3(x + self.dropout(self.feed_forward(x))), weights


class DecoderLayerAttentionsWithoutDropout(ref.DecoderLayer):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.cross_attn = MultiHeadAttention(d_model, num_heads)


class DecoderLayerCrossAttentionWithoutDropout(ref.DecoderLayer):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.cross_attn = MultiHeadAttention(d_model, num_heads)


class DecoderLayerFeedForwardWithoutDropout(ref.DecoderLayer):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.feed_forward = ref.PositionwiseFeedForward(d_model, d_ff)


class DecoderLayerFeedForwardOnNormedInput(ref.DecoderLayer):
    """Pre-norm que normaliza la entrada una vez y reutiliza ese tensor en la feed-forward."""

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        if not self.norm_first:
            return super().forward(x, memory, tgt_mask, memory_mask)
        normed = self.norm1(x)
        x = x + self.dropout(self.self_attn(normed, normed, normed, tgt_mask)[0])
        out, weights = self.cross_attn(self.norm2(x), memory, memory, memory_mask)
        x = x + self.dropout(out)
        return x + self.dropout(self.feed_forward(normed)), weights


# --- ejercicios 4 y 5: las pilas en más formas ---------------------------------------------


class EncoderListComprehension(ref.Encoder):
    def __init__(self, layer, num_layers):
        super().__init__(layer, num_layers)
        self.layers = nn.ModuleList([layer for _ in range(num_layers)])


class EncoderLayersOutsideModuleList(ref.Encoder):
    def __init__(self, layer, num_layers):
        super().__init__(layer, num_layers)
        del self.layers
        self.layers = tuple(copy.deepcopy(layer) for _ in range(num_layers))


class EncoderMaskOnlyFirstLayer(ref.Encoder):
    def forward(self, x, mask=None):
        for i, layer in enumerate(self.layers):
            x = layer(x, mask if i == 0 else None)
        return self.norm(x)


class EncoderNormInsideLoop(ref.Encoder):
    def forward(self, x, mask=None):
        for layer in self.layers:
            x = layer(x, mask)
            x = self.norm(x)
        return x


class EncoderNormFirst(ref.Encoder):
    def forward(self, x, mask=None):
        x = self.norm(x)
        for layer in self.layers:
            x = layer(x, mask)
        return x


class DecoderFirstWeightsKept(ref.Decoder):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        weights = []
        for layer in self.layers:
            x, w = layer(x, memory, tgt_mask, memory_mask)
            weights.append(w)
        return self.norm(x), weights[0]


class DecoderPlainList(ref.Decoder):
    def __init__(self, layer, num_layers):
        super().__init__(layer, num_layers)
        del self.layers
        self.layers = [copy.deepcopy(layer) for _ in range(num_layers)]


class DecoderListComprehension(ref.Decoder):
    def __init__(self, layer, num_layers):
        super().__init__(layer, num_layers)
        self.layers = nn.ModuleList([layer for _ in range(num_layers)])


class DecoderNormEachLayer(ref.Decoder):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        for layer in self.layers:
            x, weights = layer(x, memory, tgt_mask, memory_mask)
            x = self.norm(x)
        return x, weights


class DecoderForgetsNorm(ref.Decoder):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        for layer in self.layers:
            x, weights = layer(x, memory, tgt_mask, memory_mask)
        return x, weights


class DecoderMasksSwapped(ref.Decoder):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        return super().forward(x, memory, memory_mask, tgt_mask)


class DecoderWithoutValueErrorCheck(ref.Decoder):
    """Comprueba ``num_layers < 0`` en lugar de ``< 1``: la pila vacía pasa."""

    def __init__(self, layer, num_layers):
        if num_layers < 0:
            raise ValueError("num_layers negativo")
        nn.Module.__init__(self)
        self.layers = nn.ModuleList(copy.deepcopy(layer) for _ in range(num_layers))
        self.norm = _always_norm(layer) if layer.norm_first else nn.Identity()


# --- cableado de la capa y de la pila (se nombra por la huella que deja en una sonda) -----


class EncoderLayerFeedForwardResidualFromInput(ref.EncoderLayer):
    """La conexión residual de la FFN suma la x de antes de la atención."""

    def forward(self, x, mask=None):
        if self.norm_first:
            h = self.norm1(x)
            attended = x + self.dropout(self.self_attn(h, h, h, mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(attended)))
        attended = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(attended)))


class EncoderLayerTorchMaskConvention(ref.EncoderLayer):
    """La máscara con el convenio de nn.TransformerEncoderLayer: True = tapado."""

    def forward(self, x, mask=None):
        return super().forward(x, None if mask is None else ~mask)


class DecoderLayerFeedForwardResidualBeforeCross(ref.DecoderLayer):
    """La FFN suma la x de antes de la atención cruzada (la de después de la autoatención)."""

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, tgt_mask)[0])
            out, cross_weights = self.cross_attn(self.norm2(x), memory, memory, memory_mask)
            crossed = x + self.dropout(out)
            return x + self.dropout(self.feed_forward(self.norm3(crossed))), cross_weights
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)[0]))
        out, cross_weights = self.cross_attn(x, memory, memory, memory_mask)
        crossed = self.norm2(x + self.dropout(out))
        return self.norm3(x + self.dropout(self.feed_forward(crossed))), cross_weights


class DecoderLayerTorchMaskConvention(ref.DecoderLayer):
    """Las dos máscaras con el convenio de PyTorch: True = tapado."""

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        flip = lambda mask: None if mask is None else ~mask  # noqa: E731
        return super().forward(x, memory, flip(tgt_mask), flip(memory_mask))


class EncoderLayersNotChained(ref.Encoder):
    """Cada capa recibe la entrada original: la pila da la última capa aplicada a x."""

    def forward(self, x, mask=None):
        out = x
        for layer in self.layers:
            out = layer(x, mask)
        return self.norm(out)


class DecoderLayersNotChained(ref.Decoder):
    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        for layer in self.layers:
            out, cross_weights = layer(x, memory, tgt_mask, memory_mask)
        return self.norm(out), cross_weights


# --- mensajes: uno por idea, compartido por todas sus formas ------------------------------

NO_ACTIVATION = "¿Falta la activación entre las dos capas lineales?"
WRONG_ACTIVATION = (
    "¿Usas la activación que pide activation? Con 'relu', ReLU (F.relu); con 'gelu', GELU (F.gelu)."
)
GELU_APPROXIMATE = "GELU exacta: F.gelu sin approximate='tanh'."
ACTIVATION_PLACE = "La activación va solo entre linear1 y linear2, no a la salida."
FFN_DROPOUT_PLACE = "El dropout va justo después de la activación, antes de linear2."
UNKNOWN_ACTIVATION = (
    "Con una activación desconocida (activation='sigmoid') hay que lanzar ValueError."
)
FFN_WITHOUT_DROPOUT = "¿Aplicas self.dropout tras la activación?"
DROPOUT_IN_EVAL = (
    "En evaluación (.eval()) el dropout no actúa: ¿usas F.dropout sin training=self.training?"
    " nn.Dropout ya lo tiene en cuenta."
)
INVERTED = "¿Están cambiadas pre-norm y post-norm? norm_first=True normaliza antes de cada subcapa."
SELF_MASK = "¿Pasas la máscara a la autoatención?"
OWN_NORM = "Cada subcapa tiene su LayerNorm: norm1 con la atención y norm2 con la FFN."
DROPOUT_ON_RESIDUAL = (
    "self.dropout va sobre la salida de cada subcapa, no sobre la suma con la conexión residual."
)
KEYS_UNNORMALIZED = "En pre-norm, la consulta, la clave y el valor son el mismo tensor normalizado."
WITHOUT_RESIDUAL = "¿Falta sumar la conexión residual (x + …)?"
NORMALIZED_RESIDUAL = (
    "En pre-norm la LayerNorm va solo en la rama de la subcapa; la conexión residual suma"
    " la x sin normalizar."
)
SELF_DROPOUT = "¿Aplicas self.dropout a la salida de cada subcapa?"
SUBLAYER_DROPOUT = (
    "¿Pasas dropout a MultiHeadAttention y a PositionwiseFeedForward al crearlas en __init__?"
)
ENCODER_LAYER_OUTPUT = "EncoderLayer devuelve solo la salida (B, T, D), no una tupla."
REUSES_NORMED = (
    "¿Reutilizas norm1(x) para la feed-forward? En pre-norm cada subcapa normaliza su propia"
    " entrada: la x que sale de la subcapa anterior, con su propia LayerNorm."
)
TGT_MASK = "¿Pasas tgt_mask a la autoatención?"
MEMORY_MASK = "¿Pasas memory_mask a la atención cruzada?"
MASKS_SWAPPED = (
    "¿Están cambiadas las máscaras? tgt_mask (B, T_q, T_q) va a la autoatención y memory_mask"
    " (B, 1, T_k) a la atención cruzada."
)
CROSS_SOURCES = "En la atención cruzada la consulta sale de x; las claves y los valores, de memory."
SELF_WEIGHTS = "¿Devuelves los pesos de la autoatención? Se devuelven los de la atención cruzada."
MEMORY_NORMALIZED = (
    "En pre-norm solo se normaliza la consulta de la atención cruzada; memory entra tal cual."
)
DECODER_NORMS = (
    "Cada subcapa tiene su LayerNorm: norm1, norm2 y norm3, en el orden de las subcapas."
)
DECODER_LAYER_OUTPUT = "DecoderLayer devuelve la pareja (salida, pesos de la atención cruzada)."
SHARED = (
    "Las capas de la pila deben ser copias nuevas (copy.deepcopy), no el mismo objeto repetido."
)
PLAIN_LIST = "self.layers debe ser un nn.ModuleList"
POST_NORM_EXTRA = "En post-norm no hay LayerNorm final: cada capa ya termina normalizando"
PRE_NORM_MISSING = "En pre-norm falta la LayerNorm final"
STACK_MASK = "¿Pasas la máscara a cada capa?"
FINAL_NORM_ONCE = "La LayerNorm final se aplica una sola vez, tras la última capa."
FORGETS_NORM = "¿Aplicas self.norm a la salida de la última capa?"
LAST_WEIGHTS = "Devuelve los pesos de la atención cruzada de la última capa, no los de la primera."
NO_LAYERS = "Decoder(layer, 0) debe lanzar ValueError"
DECODER_MASKS = "¿Pasas tgt_mask y memory_mask a cada capa?"
RESIDUAL_SOURCE = (
    "Con la feed-forward callada tu capa devuelve x tal cual: la salida de la atención no llega"
    " a la salida. ¿La conexión residual de la feed-forward suma la x de antes de la atención?"
    " Cada subcapa suma su propia entrada, la x que sale de la subcapa anterior."
)
CROSS_RESIDUAL_SOURCE = (
    "Con la autoatención y la feed-forward calladas tu capa devuelve x tal cual: la salida de la"
    " atención cruzada no llega a la salida. ¿La feed-forward recibe o suma la x de antes de la"
    " atención cruzada?"
)
MASK_CONVENTION = (
    "Con una máscara toda True (todo visible) tu capa no da lo mismo que sin máscara: la usa al"
    " revés. Aquí True = se puede atender; key_padding_mask y tgt_mask de PyTorch usan el"
    " convenio contrario (True = tapado): ¿inviertes la máscara (~mask)?"
)
NOT_CHAINED = (
    "Las capas no se encadenan: tu pila da la última capa aplicada a la entrada original. Cada"
    " capa recibe la salida de la anterior (x = layer(x, ...))."
)
DECODER_OUTPUT = (
    "Decoder devuelve la pareja (salida, pesos de la atención cruzada de la última capa)."
)

MISTAKES = [
    *for_exercise(
        "ej1_feed_forward",
        "PositionwiseFeedForward",
        (FeedForwardWithoutActivation, NO_ACTIVATION),
        (FeedForwardActivationDiscarded, NO_ACTIVATION),
        (FeedForwardStepsWithoutActivation, NO_ACTIVATION),
        (FeedForwardActivationsSwapped, WRONG_ACTIVATION),
        (FeedForwardAlwaysRelu, WRONG_ACTIVATION),
        (FeedForwardAlwaysGelu, WRONG_ACTIVATION),
        (FeedForwardGeluKeyCopied, WRONG_ACTIVATION),
        (FeedForwardGeluTanh, GELU_APPROXIMATE),
        (FeedForwardGeluTanhFormula, GELU_APPROXIMATE),
        (FeedForwardGeluModuleTanh, GELU_APPROXIMATE),
        (FeedForwardActivationAtTheEnd, ACTIVATION_PLACE),
        (FeedForwardActivationAfterBoth, ACTIVATION_PLACE),
        (FeedForwardActivationAfterLinear2, ACTIVATION_PLACE),
        (FeedForwardDropoutAfterLinear2, FFN_DROPOUT_PLACE),
        (FeedForwardFunctionalDropoutAtTheEnd, FFN_DROPOUT_PLACE),
        (FeedForwardDropoutOnInput, FFN_DROPOUT_PLACE),
        (FeedForwardUnknownIsRelu, UNKNOWN_ACTIVATION),
        (FeedForwardUnknownIsGelu, UNKNOWN_ACTIVATION),
        (FeedForwardUnknownDefaultsToRelu, UNKNOWN_ACTIVATION),
        (FeedForwardWithoutDropout, FFN_WITHOUT_DROPOUT),
        (FeedForwardDropoutDiscarded, FFN_WITHOUT_DROPOUT),
        (FeedForwardFunctionalDropoutAlways, DROPOUT_IN_EVAL),
    ),
    *for_exercise(
        "ej2_encoder_layer",
        "EncoderLayer",
        (EncoderLayerInverted, INVERTED),
        (EncoderLayerBranchesSwapped, INVERTED),
        (EncoderLayerWithoutMask, SELF_MASK),
        (EncoderLayerAttentionWithoutMask, SELF_MASK),
        (EncoderLayerNorm1Twice, OWN_NORM),
        (EncoderLayerNorm2Twice, OWN_NORM),
        (EncoderLayerNormsSwapped, OWN_NORM),
        (EncoderLayerDropoutOnResidual, DROPOUT_ON_RESIDUAL),
        (EncoderLayerDropoutAfterNorm, DROPOUT_ON_RESIDUAL),
        (EncoderLayerKeysUnnormalized, KEYS_UNNORMALIZED),
        (EncoderLayerWithoutResidual, WITHOUT_RESIDUAL),
        (EncoderLayerWithoutFeedForwardResidual, WITHOUT_RESIDUAL),
        (EncoderLayerNormalizedResidual, NORMALIZED_RESIDUAL),
        (EncoderLayerResidualFromNormalized, NORMALIZED_RESIDUAL),
        (EncoderLayerWithoutDropout, SELF_DROPOUT),
        (EncoderLayerDropoutOnlyOnAttention, SELF_DROPOUT),
        (EncoderLayerDropoutOnlyOnFeedForward, SELF_DROPOUT),
        (EncoderLayerAttentionWithoutDropout, SUBLAYER_DROPOUT),
        (EncoderLayerFeedForwardWithoutDropout, SUBLAYER_DROPOUT),
        (EncoderLayerSublayersWithoutDropout, SUBLAYER_DROPOUT),
        (EncoderLayerFunctionalDropout, DROPOUT_IN_EVAL),
        (EncoderLayerReturnsPair, ENCODER_LAYER_OUTPUT),
        (EncoderLayerReturnsWeightsToo, ENCODER_LAYER_OUTPUT),
        (EncoderLayerReusesNormedInput, REUSES_NORMED),
        (EncoderLayerFeedForwardOnNormedInput, REUSES_NORMED),
        (EncoderLayerFeedForwardResidualFromInput, RESIDUAL_SOURCE),
        (EncoderLayerTorchMaskConvention, MASK_CONVENTION),
    ),
    *for_exercise(
        "ej3_decoder_layer",
        "DecoderLayer",
        (DecoderLayerInverted, INVERTED),
        (DecoderLayerBranchesSwapped, INVERTED),
        (DecoderLayerWithoutTgtMask, TGT_MASK),
        (DecoderLayerSelfAttentionWithoutMask, TGT_MASK),
        (DecoderLayerWithoutMemoryMask, MEMORY_MASK),
        (DecoderLayerCrossAttentionWithoutMask, MEMORY_MASK),
        (DecoderLayerMasksSwapped, MASKS_SWAPPED),
        (DecoderLayerTgtMaskInBoth, MASKS_SWAPPED),
        (DecoderLayerMemoryMaskInBoth, MASKS_SWAPPED),
        (DecoderLayerCrossOnX, CROSS_SOURCES),
        (DecoderLayerQueriesFromMemory, CROSS_SOURCES),
        (DecoderLayerValuesFromX, CROSS_SOURCES),
        (DecoderLayerReturnsSelfWeights, SELF_WEIGHTS),
        (DecoderLayerWeightsVariableReused, SELF_WEIGHTS),
        (DecoderLayerMemoryNormalized, MEMORY_NORMALIZED),
        (DecoderLayerNormsSwapped, DECODER_NORMS),
        (DecoderLayerNorm1Thrice, DECODER_NORMS),
        (DecoderLayerReturnsOnlyOutput, DECODER_LAYER_OUTPUT),
        (DecoderLayerDropoutOnResidual, DROPOUT_ON_RESIDUAL),
        (DecoderLayerDropoutAfterNorm, DROPOUT_ON_RESIDUAL),
        (DecoderLayerWithoutCrossResidual, WITHOUT_RESIDUAL),
        (DecoderLayerWithoutSelfResidual, WITHOUT_RESIDUAL),
        (DecoderLayerAttentionsWithoutDropout, SUBLAYER_DROPOUT),
        (DecoderLayerCrossAttentionWithoutDropout, SUBLAYER_DROPOUT),
        (DecoderLayerFeedForwardWithoutDropout, SUBLAYER_DROPOUT),
        (DecoderLayerReusesNormedInput, REUSES_NORMED),
        (DecoderLayerFeedForwardOnNormedInput, REUSES_NORMED),
        (DecoderLayerFeedForwardResidualBeforeCross, CROSS_RESIDUAL_SOURCE),
        (DecoderLayerTorchMaskConvention, MASK_CONVENTION),
    ),
    *for_exercise(
        "ej4_encoder",
        "Encoder",
        (EncoderSharedLayer, SHARED),
        (EncoderOneCopyRepeated, SHARED),
        (EncoderListComprehension, SHARED),
        (EncoderPlainList, PLAIN_LIST),
        (EncoderLayersOutsideModuleList, PLAIN_LIST),
        (EncoderAlwaysNorm, POST_NORM_EXTRA),
        (EncoderNeverNorm, PRE_NORM_MISSING),
        (EncoderWithoutMask, STACK_MASK),
        (EncoderMaskOnlyFirstLayer, STACK_MASK),
        (EncoderNormEachLayer, FINAL_NORM_ONCE),
        (EncoderNormInsideLoop, FINAL_NORM_ONCE),
        (EncoderNormFirst, FINAL_NORM_ONCE),
        (EncoderForgetsNorm, FORGETS_NORM),
        (EncoderLayersNotChained, NOT_CHAINED),
    ),
    *for_exercise(
        "ej5_decoder",
        "Decoder",
        (DecoderFirstWeights, LAST_WEIGHTS),
        (DecoderFirstWeightsKept, LAST_WEIGHTS),
        (DecoderWithoutValueError, NO_LAYERS),
        (DecoderWithoutValueErrorCheck, NO_LAYERS),
        (DecoderSharedLayer, SHARED),
        (DecoderListComprehension, SHARED),
        (DecoderPlainList, PLAIN_LIST),
        (DecoderAlwaysNorm, POST_NORM_EXTRA),
        (DecoderNeverNorm, PRE_NORM_MISSING),
        (DecoderWithoutMasks, DECODER_MASKS),
        (DecoderWithoutMemoryMask, MEMORY_MASK),
        (DecoderWithoutTgtMask, TGT_MASK),
        (DecoderNormEachLayer, FINAL_NORM_ONCE),
        (DecoderForgetsNorm, FORGETS_NORM),
        (DecoderReturnsOnlyOutput, DECODER_OUTPUT),
        (DecoderLayersNotChained, NOT_CHAINED),
    ),
]
