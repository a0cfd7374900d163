"""Errores típicos del laboratorio 2 (normalización, conexiones residuales y *dropout*).

Cada mutante es la referencia con un solo error. Nunca llega al estudiante.
"""

import torch
from torch import nn

from course.mistakes import for_exercise
from course.reference import normalization as ref

LAB = "02_normalizacion"


# --- los mensajes: uno por idea, compartido por todas sus formas -------------------------

UNBIASED = "¿Usas la varianza insesgada? LayerNorm divide entre D (unbiased=False)."
EPS_OUTSIDE = "eps va dentro de la raíz: sqrt(var + eps)."
NO_AFFINE = "¿Olvidas multiplicar por weight y sumar bias?"
OVER_EVERYTHING = "¿Calculas la media y la varianza de cada token, sobre el último eje (dim=-1)?"
OVER_VARIANCE = "¿Divides entre la varianza? Se divide entre su raíz."
PLAIN_TENSORS = "¿Creas weight y bias con nn.Parameter?"
EPS_IGNORED = (
    "¿Usas self.eps? Con eps=0.01 el resultado cambia: no lo omitas ni escribas otro valor."
)
KEEPDIM = (
    "¿Falta keepdim=True al reducir el último eje? Sin él, (B, T) no se difunde sobre (B, T, D)."
)
NOT_CENTRED = "¿Restas la media antes de dividir? LayerNorm normaliza x - media."
BIASED = "Aquí la desviación típica es la insesgada (divide entre D - 1)."
EPS_INSIDE = "En esta variante eps se suma a la desviación típica, fuera de la raíz."
AS_LAYERNORM = "Esto es LayerNorm del ejercicio 1, no la variante."
OVER_EVERYTHING_STD = (
    "¿Calculas la media y la desviación típica de cada token, sobre el último eje (dim=-1)?"
)
RMS_CENTRED = "RMSNorm no resta la media."
RMS_SUM = "Divide entre la raíz de la MEDIA de los cuadrados, no de la suma."
RMS_EPS_OUTSIDE = "eps va dentro de la raíz."
RMS_NO_WEIGHT = "¿Olvidas multiplicar por weight?"
RMS_NO_ROOT = "¿Falta la raíz? Se divide entre la raíz de la media de los cuadrados."
RMS_OVER_EVERYTHING = (
    "¿Calculas la media de los cuadrados de cada token, sobre el último eje (dim=-1)?"
)
RMS_BIAS = "RMSNorm no tiene bias: su único parámetro es weight."
KEEPS_WITH_P = "¿Conservas con probabilidad p en lugar de 1 - p?"
NO_RESCALE = "¿Falta dividir entre 1 - p?"
OVER_P = "Se divide entre 1 - p, no entre p."
TIMES_KEEP = "¿Multiplicas por 1 - p? Los elementos conservados se dividen entre 1 - p."
ALSO_IN_EVAL = "En evaluación el dropout es la identidad: ¿miras self.training?"
SEEDED = "¿Fijas la semilla dentro de forward? Cada llamada debe sortear una máscara nueva."
NO_VALIDATION = "Dropout(p=1.0) debería lanzar ValueError: p tiene que estar en [0, 1)."
REJECTS_ZERO = "p = 0 es válido (no anula nada): el intervalo es [0, 1)."
SWAPPED = "¿Están cambiadas las formas? norm_first=True es pre-norm: x + subcapa(norm(x))."
NO_RESIDUAL = "¿Falta sumar el residuo x?"
NORMALISED_RESIDUAL = "En pre-norm el residuo es x sin normalizar, no norm(x)."
POST_NORM_ON_SUBLAYER = (
    "En post-norm se normaliza la suma x + subcapa(x), no solo la salida de la subcapa."
)
NO_DROPOUT = "No se anula nada: ¿aplicas self.dropout a la salida de la subcapa?"
DROPOUT_ON_SUM = "El dropout va sobre la salida de la subcapa, no sobre el residuo."


# --- ejercicio 1: LayerNorm -------------------------------------------------------------


# Dos errores de una variante son la otra variante a medias: la misma cuenta sirve de
# mutante en los ejercicios 1 (LayerNorm) y 2 (AnnotatedLayerNorm).


def _unbiased_eps_inside_root(self, x):
    """Varianza insesgada (entre D - 1) y ε dentro de la raíz."""
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True)
    return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


def _biased_eps_outside_root(self, x):
    """Desviación típica sesgada (entre D) y ε sumado fuera de la raíz."""
    mean = x.mean(dim=-1, keepdim=True)
    std = x.std(dim=-1, unbiased=False, keepdim=True)
    return self.weight * (x - mean) / (std + self.eps) + self.bias


class LayerNormUnbiased(ref.LayerNorm):
    forward = _unbiased_eps_inside_root


class LayerNormEpsOutsideRoot(ref.LayerNorm):
    forward = _biased_eps_outside_root


class LayerNormWithoutAffine(ref.LayerNorm):
    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, unbiased=False, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps)


class LayerNormOverEverything(ref.LayerNorm):
    def forward(self, x):
        return (
            self.weight * (x - x.mean()) / torch.sqrt(x.var(unbiased=False) + self.eps) + self.bias
        )


class LayerNormOverVariance(ref.LayerNorm):
    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, unbiased=False, keepdim=True)
        return self.weight * (x - mean) / (var + self.eps) + self.bias


class LayerNormPlainTensors(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = torch.ones(d_model)
        self.bias = torch.zeros(d_model)

    fused = False  # ref.LayerNorm.forward lo consulta
    forward = ref.LayerNorm.forward


# --- ejercicio 2: la variante de The Annotated Transformer ------------------------------


class AnnotatedBiased(ref.AnnotatedLayerNorm):
    forward = _biased_eps_outside_root


class AnnotatedEpsInsideRoot(ref.AnnotatedLayerNorm):
    forward = _unbiased_eps_inside_root


class AnnotatedAsLayerNorm(ref.AnnotatedLayerNorm):
    fused = False  # ref.LayerNorm.forward lo consulta
    forward = ref.LayerNorm.forward


class AnnotatedWithoutAffine(ref.AnnotatedLayerNorm):
    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        return (x - mean) / (x.std(dim=-1, keepdim=True) + self.eps)


class AnnotatedOverEverything(ref.AnnotatedLayerNorm):
    def forward(self, x):
        return self.weight * (x - x.mean()) / (x.std() + self.eps) + self.bias


# --- ejercicio 3: RMSNorm ---------------------------------------------------------------


class RMSNormCentred(ref.RMSNorm):
    def forward(self, x):
        centred = x - x.mean(dim=-1, keepdim=True)
        return (
            self.weight
            * centred
            * torch.rsqrt(centred.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        )


class RMSNormSumOfSquares(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).sum(dim=-1, keepdim=True) + self.eps)


class RMSNormEpsOutsideRoot(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x / (x.pow(2).mean(dim=-1, keepdim=True).sqrt() + self.eps)


class RMSNormWithoutWeight(ref.RMSNorm):
    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)


class RMSNormWithoutRoot(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x / (x.pow(2).mean(dim=-1, keepdim=True) + self.eps)


class RMSNormOverEverything(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean() + self.eps)


class RMSNormWithBias(ref.RMSNorm):
    def __init__(self, d_model, eps=1e-5):
        super().__init__(d_model, eps)
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        return super().forward(x) + self.bias


# --- ejercicio 4: dropout invertido -----------------------------------------------------


class DropoutKeepsWithP(ref.Dropout):
    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        keep = torch.rand_like(x) < self.p
        return x * keep / (1.0 - self.p)


class DropoutWithoutRescale(ref.Dropout):
    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        return x * (torch.rand_like(x) >= self.p)


class DropoutOverP(ref.Dropout):
    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        return x * (torch.rand_like(x) >= self.p) / self.p


class DropoutTimesKeep(ref.Dropout):
    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        return x * (torch.rand_like(x) >= self.p) * (1.0 - self.p)


class DropoutAlsoInEval(ref.Dropout):
    def forward(self, x):
        if self.p == 0.0:
            return x
        return x * (torch.rand_like(x) >= self.p) / (1.0 - self.p)


class DropoutSeededInForward(ref.Dropout):
    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        torch.manual_seed(0)
        return x * (torch.rand_like(x) >= self.p) / (1.0 - self.p)


class DropoutWithoutValidation(ref.Dropout):
    def __init__(self, p=0.1):
        nn.Module.__init__(self)
        self.p = p


class DropoutRejectsZero(ref.Dropout):
    def __init__(self, p=0.1):
        nn.Module.__init__(self)
        if not 0.0 < p < 1.0:
            raise ValueError(f"p={p} debe estar en (0, 1)")
        self.p = p


# --- la misma idea en otras formas ---------------------------------------------------------


class LayerNormUnbiasedStd(ref.LayerNorm):
    def forward(self, x):
        centred = x - x.mean(dim=-1, keepdim=True)
        return (
            self.weight * centred / (x.std(dim=-1, keepdim=True) ** 2 + self.eps).sqrt() + self.bias
        )


class RMSNormOverNorm(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x / x.norm(dim=-1, keepdim=True)


# --- ejercicio 5: la subcapa residual ---------------------------------------------------


class ResidualSwapped(ref.ResidualConnection):
    def forward(self, x, sublayer):
        if not self.norm_first:
            return x + self.dropout(sublayer(self.norm(x)))
        return self.norm(x + self.dropout(sublayer(x)))


class ResidualWithoutResidual(ref.ResidualConnection):
    def forward(self, x, sublayer):
        if self.norm_first:
            return self.dropout(sublayer(self.norm(x)))
        return self.norm(self.dropout(sublayer(x)))


class ResidualNormalisedInPreNorm(ref.ResidualConnection):
    def forward(self, x, sublayer):
        if self.norm_first:
            h = self.norm(x)
            return h + self.dropout(sublayer(h))
        return self.norm(x + self.dropout(sublayer(x)))


class ResidualPostNormOnSublayer(ref.ResidualConnection):
    def forward(self, x, sublayer):
        if self.norm_first:
            return x + self.dropout(sublayer(self.norm(x)))
        return x + self.norm(self.dropout(sublayer(x)))


class ResidualWithoutDropout(ref.ResidualConnection):
    def forward(self, x, sublayer):
        if self.norm_first:
            return x + sublayer(self.norm(x))
        return self.norm(x + sublayer(x))


class ResidualDropoutOnSum(ref.ResidualConnection):
    def forward(self, x, sublayer):
        if self.norm_first:
            return self.dropout(x + sublayer(self.norm(x)))
        return self.norm(self.dropout(x + sublayer(x)))


# --- más formas de cada idea (otra API, otro lugar, el mismo efecto) ---------------------


class LayerNormTorchVar(ref.LayerNorm):
    def forward(self, x):
        mean = torch.mean(x, dim=-1, keepdim=True)
        return (
            self.weight * (x - mean) / torch.sqrt(torch.var(x, -1, keepdim=True) + self.eps)
            + self.bias
        )


class LayerNormUnbiasedByHand(ref.LayerNorm):
    def forward(self, x):
        centred = x - x.mean(dim=-1, keepdim=True)
        var = centred.pow(2).sum(dim=-1, keepdim=True) / (x.size(-1) - 1)
        return self.weight * centred / torch.sqrt(var + self.eps) + self.bias


class LayerNormEpsAfterSqrt(ref.LayerNorm):
    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, unbiased=False, keepdim=True)
        return self.weight * (x - mean) / (torch.sqrt(var) + self.eps) + self.bias


class LayerNormEpsAddedToStd(ref.LayerNorm):
    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
        return self.weight * (x - mean) / var.sqrt().add(self.eps) + self.bias


class LayerNormWithoutAffineRsqrt(ref.LayerNorm):
    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        return (x - mean) * torch.rsqrt(x.var(dim=-1, unbiased=False, keepdim=True) + self.eps)


class LayerNormWithoutAffineVarMean(ref.LayerNorm):
    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps)


class LayerNormOverEverythingTorch(ref.LayerNorm):
    def forward(self, x):
        mean, var = torch.mean(x), torch.var(x, unbiased=False)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class LayerNormOverEverythingFlat(ref.LayerNorm):
    def forward(self, x):
        flat = x.flatten()
        normalized = (flat - flat.mean()) / (flat.var(unbiased=False) + self.eps).sqrt()
        return self.weight * normalized.view_as(x) + self.bias


class LayerNormOverStdSquared(ref.LayerNorm):
    def forward(self, x):
        std = x.std(dim=-1, unbiased=False, keepdim=True)
        return self.weight * (x - x.mean(dim=-1, keepdim=True)) / (std**2 + self.eps) + self.bias


class LayerNormTimesInverseVariance(ref.LayerNorm):
    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
        return self.weight * (x - mean) * (var + self.eps).reciprocal() + self.bias


class LayerNormRequiresGradTensors(ref.LayerNorm):
    def __init__(self, d_model, eps=1e-5):
        nn.Module.__init__(self)
        self.eps = eps
        self.weight = torch.ones(d_model, requires_grad=True)
        self.bias = torch.zeros(d_model, requires_grad=True)


class LayerNormBuffers(ref.LayerNorm):
    def __init__(self, d_model, eps=1e-5):
        nn.Module.__init__(self)
        self.eps = eps
        self.register_buffer("weight", torch.ones(d_model))
        self.register_buffer("bias", torch.zeros(d_model))


class LayerNormWithoutEps(ref.LayerNorm):
    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        return (
            self.weight * (x - mean) / torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True))
            + self.bias
        )


class LayerNormFixedEps(ref.LayerNorm):
    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, unbiased=False, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + 1e-5) + self.bias


class LayerNormStdWithoutEps(ref.LayerNorm):
    def forward(self, x):
        std = x.std(dim=-1, unbiased=False, keepdim=True)
        return self.weight * (x - x.mean(dim=-1, keepdim=True)) / std + self.bias


class LayerNormNotCentred(ref.LayerNorm):
    def forward(self, x):
        var = x.var(dim=-1, unbiased=False, keepdim=True)
        return self.weight * x / torch.sqrt(var + self.eps) + self.bias


class LayerNormNotCentredRsqrt(ref.LayerNorm):
    def forward(self, x):
        var, _ = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
        return self.weight * x * torch.rsqrt(var + self.eps) + self.bias


class AnnotatedBiasedCorrection(ref.AnnotatedLayerNorm):
    def forward(self, x):
        std = x.std(dim=-1, correction=0, keepdim=True)
        return self.weight * (x - x.mean(dim=-1, keepdim=True)) / (std + self.eps) + self.bias


class AnnotatedBiasedSqrtVar(ref.AnnotatedLayerNorm):
    def forward(self, x):
        std = torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True))
        return self.weight * (x - x.mean(dim=-1, keepdim=True)) / (std + self.eps) + self.bias


class AnnotatedEpsInsideRootStd(ref.AnnotatedLayerNorm):
    def forward(self, x):
        std = x.std(dim=-1, keepdim=True)
        return (
            self.weight * (x - x.mean(dim=-1, keepdim=True)) / (std**2 + self.eps).sqrt()
            + self.bias
        )


class AnnotatedEpsInsideRootRsqrt(ref.AnnotatedLayerNorm):
    def forward(self, x):
        centred = x - x.mean(dim=-1, keepdim=True)
        return (
            self.weight * centred * torch.rsqrt(torch.var(x, -1, keepdim=True) + self.eps)
            + self.bias
        )


class AnnotatedAsLayerNormInline(ref.AnnotatedLayerNorm):
    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class AnnotatedWithoutAffineTorchStd(ref.AnnotatedLayerNorm):
    def forward(self, x):
        return (x - torch.mean(x, -1, keepdim=True)) / (torch.std(x, -1, keepdim=True) + self.eps)


class AnnotatedWithoutAffineReciprocal(ref.AnnotatedLayerNorm):
    def forward(self, x):
        std = x.std(dim=-1, keepdim=True)
        return (x - x.mean(dim=-1, keepdim=True)) * (std + self.eps).reciprocal()


class AnnotatedOverEverythingTorch(ref.AnnotatedLayerNorm):
    def forward(self, x):
        return self.weight * (x - torch.mean(x)) / (torch.std(x) + self.eps) + self.bias


class AnnotatedWithoutEps(ref.AnnotatedLayerNorm):
    def forward(self, x):
        std = x.std(dim=-1, keepdim=True)
        return self.weight * (x - x.mean(dim=-1, keepdim=True)) / std + self.bias


class AnnotatedFixedEps(ref.AnnotatedLayerNorm):
    def forward(self, x):
        std = torch.std(x, -1, keepdim=True)
        return self.weight * (x - torch.mean(x, -1, keepdim=True)) / (std + 1e-6) + self.bias


class AnnotatedNotCentred(ref.AnnotatedLayerNorm):
    def forward(self, x):
        return self.weight * x / (x.std(dim=-1, keepdim=True) + self.eps) + self.bias


class AnnotatedNotCentredReciprocal(ref.AnnotatedLayerNorm):
    def forward(self, x):
        return (
            self.weight * x * (torch.std(x, -1, keepdim=True) + self.eps).reciprocal() + self.bias
        )


class RMSNormCentredVar(ref.RMSNorm):
    def forward(self, x):
        centred = x - x.mean(dim=-1, keepdim=True)
        return (
            self.weight
            * centred
            * torch.rsqrt(x.var(dim=-1, unbiased=False, keepdim=True) + self.eps)
        )


class RMSNormSumOfSquaresTorch(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x / torch.sqrt(torch.sum(x**2, dim=-1, keepdim=True) + self.eps)


class RMSNormEpsOutsideRootTorch(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x / (torch.sqrt(torch.mean(x**2, dim=-1, keepdim=True)) + self.eps)


class RMSNormEpsAddedToRms(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x / x.square().mean(dim=-1, keepdim=True).sqrt().add(self.eps)


class RMSNormWithoutWeightSqrt(ref.RMSNorm):
    def forward(self, x):
        return x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)


class RMSNormWithoutWeightSquare(ref.RMSNorm):
    def forward(self, x):
        return x * (x * x).mean(dim=-1, keepdim=True).add(self.eps).rsqrt()


class RMSNormWithoutRootReciprocal(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x * (torch.mean(x**2, dim=-1, keepdim=True) + self.eps).reciprocal()


class RMSNormOverEverythingTorch(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x / torch.sqrt(torch.mean(x**2) + self.eps)


class RMSNormOverEverythingSquare(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x * (x.square().mean() + self.eps).rsqrt()


class RMSNormWithBiasParameter(ref.RMSNorm):
    def __init__(self, d_model, eps=1e-5):
        super().__init__(d_model, eps)
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        rms = torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return self.weight * x / rms + self.bias


class RMSNormWithoutEps(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True))


class RMSNormFixedEps(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x / torch.sqrt(torch.mean(x**2, dim=-1, keepdim=True) + 1e-5)


class RMSNormOverRmsWithoutEps(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x / x.square().mean(dim=-1, keepdim=True).sqrt()


class LayerNormWithoutAffineByHand(ref.LayerNorm):
    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps)


class LayerNormWithoutAffinePower(ref.LayerNorm):
    def forward(self, x):
        centred = x - torch.mean(x, dim=-1, keepdim=True)
        return centred / (torch.var(x, dim=-1, unbiased=False, keepdim=True) + self.eps) ** 0.5


class LayerNormNotCentredByHand(ref.LayerNorm):
    def forward(self, x):
        var = ((x - x.mean(dim=-1, keepdim=True)) ** 2).mean(dim=-1, keepdim=True)
        return self.weight * x / torch.sqrt(var + self.eps) + self.bias


class LayerNormNotCentredPower(ref.LayerNorm):
    def forward(self, x):
        var = torch.var(x, dim=-1, unbiased=False, keepdim=True)
        return self.weight * x / (var + self.eps) ** 0.5 + self.bias


class AnnotatedBiasedTorchStd(ref.AnnotatedLayerNorm):
    def forward(self, x):
        std = torch.std(x, dim=-1, unbiased=False, keepdim=True)
        return (
            self.weight * (x - torch.mean(x, dim=-1, keepdim=True)) / (std + self.eps) + self.bias
        )


class AnnotatedBiasedByHand(ref.AnnotatedLayerNorm):
    def forward(self, x):
        centred = x - x.mean(dim=-1, keepdim=True)
        std = centred.pow(2).mean(dim=-1, keepdim=True).sqrt()
        return self.weight * centred / (std + self.eps) + self.bias


class AnnotatedNotCentredTorchStd(ref.AnnotatedLayerNorm):
    def forward(self, x):
        std = torch.std(x, dim=-1, keepdim=True)
        return self.weight * x / (std + self.eps) + self.bias


class AnnotatedNotCentredByHand(ref.AnnotatedLayerNorm):
    def forward(self, x):
        centred = x - x.mean(dim=-1, keepdim=True)
        std = torch.sqrt(centred.pow(2).sum(dim=-1, keepdim=True) / (x.size(-1) - 1))
        return self.weight * x / (std + self.eps) + self.bias


class ResidualSwappedIfElse(ref.ResidualConnection):
    def forward(self, x, sublayer):
        if self.norm_first:
            out = self.norm(x + self.dropout(sublayer(x)))
        else:
            out = x + self.dropout(sublayer(self.norm(x)))
        return out


class ResidualSwappedConditionalNorm(ref.ResidualConnection):
    def forward(self, x, sublayer):
        h = x if self.norm_first else self.norm(x)
        out = x + self.dropout(sublayer(h))
        return self.norm(out) if self.norm_first else out


class LayerNormMeanWithoutKeepdim(ref.LayerNorm):
    def forward(self, x):
        mean = x.mean(dim=-1)
        var = x.var(dim=-1, unbiased=False, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class LayerNormVarWithoutKeepdim(ref.LayerNorm):
    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, correction=0)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class LayerNormWithoutBias(ref.LayerNorm):
    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps)


class LayerNormWithoutWeight(ref.LayerNorm):
    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) + self.bias


class LayerNormOverFirstAxis(ref.LayerNorm):
    def forward(self, x):
        mean = x.mean(dim=0, keepdim=True)
        var = x.var(dim=0, unbiased=False, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class LayerNormOverTokens(ref.LayerNorm):
    def forward(self, x):
        mean = x.mean(dim=-2, keepdim=True)
        var = x.var(dim=-2, unbiased=False, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class AnnotatedStdWithoutKeepdim(ref.AnnotatedLayerNorm):
    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        return self.weight * (x - mean) / (x.std(dim=-1) + self.eps) + self.bias


class AnnotatedMeanWithoutKeepdim(ref.AnnotatedLayerNorm):
    def forward(self, x):
        std = torch.std(x, dim=-1, keepdim=True)
        return self.weight * (x - torch.mean(x, dim=-1)) / (std + self.eps) + self.bias


class AnnotatedWithoutBias(ref.AnnotatedLayerNorm):
    def forward(self, x):
        std = x.std(dim=-1, keepdim=True)
        return self.weight * (x - x.mean(dim=-1, keepdim=True)) / (std + self.eps)


class AnnotatedOverTokens(ref.AnnotatedLayerNorm):
    def forward(self, x):
        mean, std = x.mean(dim=-2, keepdim=True), x.std(dim=-2, keepdim=True)
        return self.weight * (x - mean) / (std + self.eps) + self.bias


class RMSNormMeanSquareWithoutKeepdim(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(dim=-1) + self.eps)


class RMSNormNormWithoutKeepdim(ref.RMSNorm):
    def forward(self, x):
        rms = x.norm(dim=-1) / x.size(-1) ** 0.5
        return self.weight * x / (rms**2 + self.eps).sqrt()


class RMSNormOverFirstAxis(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(dim=0, keepdim=True) + self.eps)


class RMSNormOverTokens(ref.RMSNorm):
    def forward(self, x):
        return self.weight * x / torch.sqrt(torch.mean(x**2, dim=-2, keepdim=True) + self.eps)


def _dropped(self, x, keep, scale):
    """``x * keep * scale`` en entrenamiento con p > 0; ``x`` tal cual si no."""
    if not self.training or self.p == 0.0:
        return x
    return x * keep(x) * scale(self.p)


class DropoutKeepsWithPBernoulli(ref.Dropout):
    def forward(self, x):
        return _dropped(
            self, x, lambda x: torch.bernoulli(torch.full_like(x, self.p)), lambda p: 1 / (1 - p)
        )


class DropoutWithoutRescaleBernoulli(ref.Dropout):
    def forward(self, x):
        return _dropped(
            self, x, lambda x: torch.bernoulli(torch.full_like(x, 1 - self.p)), lambda p: 1.0
        )


class DropoutWithoutRescaleMaskedFill(ref.Dropout):
    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        return x.masked_fill(torch.rand_like(x) < self.p, 0.0)


class DropoutOverPBernoulli(ref.Dropout):
    def forward(self, x):
        return _dropped(
            self, x, lambda x: torch.bernoulli(torch.full_like(x, 1 - self.p)), lambda p: 1 / p
        )


class DropoutOverPMaskedFill(ref.Dropout):
    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        return x.masked_fill(torch.rand_like(x) < self.p, 0.0) / self.p


class DropoutTimesKeepBernoulli(ref.Dropout):
    def forward(self, x):
        return _dropped(
            self, x, lambda x: torch.bernoulli(torch.full_like(x, 1 - self.p)), lambda p: 1 - p
        )


class DropoutTimesKeepMaskedFill(ref.Dropout):
    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        return x.masked_fill(torch.rand_like(x) < self.p, 0.0) * (1 - self.p)


class DropoutAlsoInEvalBernoulli(ref.Dropout):
    def forward(self, x):
        if self.p == 0.0:
            return x
        return x * torch.bernoulli(torch.full_like(x, 1 - self.p)) / (1 - self.p)


class DropoutWithoutTrainingCheck(ref.Dropout):
    def forward(self, x):
        keep = (torch.rand_like(x) >= self.p).float()
        return x * keep / (1.0 - self.p)


class DropoutFixedGenerator(ref.Dropout):
    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        generator = torch.Generator().manual_seed(42)
        keep = torch.rand(x.shape, generator=generator) >= self.p
        return x * keep / (1.0 - self.p)


class DropoutAcceptsOne(ref.Dropout):
    def __init__(self, p=0.1):
        nn.Module.__init__(self)
        if p < 0 or p > 1:
            raise ValueError(f"p={p} debe estar en [0, 1]")
        self.p = p


class DropoutAssertsRange(ref.Dropout):
    def __init__(self, p=0.1):
        nn.Module.__init__(self)
        assert 0.0 <= p < 1.0, "p debe estar en [0, 1)"
        self.p = p


class DropoutRejectsZeroOrOne(ref.Dropout):
    def __init__(self, p=0.1):
        nn.Module.__init__(self)
        if p <= 0.0 or p >= 1.0:
            raise ValueError(f"p={p} debe estar en (0, 1)")
        self.p = p


class ResidualSwappedCondition(ref.ResidualConnection):
    def forward(self, x, sublayer):
        if self.norm_first:
            return self.norm(x + self.dropout(sublayer(x)))
        return x + self.dropout(sublayer(self.norm(x)))


class ResidualSwappedOneLine(ref.ResidualConnection):
    def forward(self, x, sublayer):
        pre = self.norm_first is False
        return (
            x + self.dropout(sublayer(self.norm(x)))
            if pre
            else self.norm(x + self.dropout(sublayer(x)))
        )


class ResidualWithoutResidualSeparate(ref.ResidualConnection):
    def forward(self, x, sublayer):
        if self.norm_first:
            h = self.norm(x)
            return self.dropout(sublayer(h))
        h = self.dropout(sublayer(x))
        return self.norm(h)


class ResidualWithoutResidualOverwritten(ref.ResidualConnection):
    def forward(self, x, sublayer):
        if self.norm_first:
            x = self.dropout(sublayer(self.norm(x)))
            return x
        x = self.dropout(sublayer(x))
        return self.norm(x)


class ResidualNormalisedReassigned(ref.ResidualConnection):
    def forward(self, x, sublayer):
        if self.norm_first:
            x = self.norm(x)
            return x + self.dropout(sublayer(x))
        return self.norm(x + self.dropout(sublayer(x)))


class ResidualNormalisedTwice(ref.ResidualConnection):
    def forward(self, x, sublayer):
        if self.norm_first:
            return self.norm(x) + self.dropout(sublayer(self.norm(x)))
        return self.norm(x + self.dropout(sublayer(x)))


class ResidualPostNormOnSublayerSeparate(ref.ResidualConnection):
    def forward(self, x, sublayer):
        if self.norm_first:
            return x + self.dropout(sublayer(self.norm(x)))
        out = self.dropout(sublayer(x))
        return x + self.norm(out)


class ResidualPostNormOnDroppedOutput(ref.ResidualConnection):
    def forward(self, x, sublayer):
        if self.norm_first:
            return x + self.dropout(sublayer(self.norm(x)))
        return self.norm(self.dropout(sublayer(x))) + x


class ResidualWithoutDropoutPreOnly(ref.ResidualConnection):
    def forward(self, x, sublayer):
        if self.norm_first:
            return x + sublayer(self.norm(x))
        return self.norm(x + self.dropout(sublayer(x)))


class ResidualDropoutDiscarded(ref.ResidualConnection):
    def forward(self, x, sublayer):
        out = sublayer(self.norm(x) if self.norm_first else x)
        self.dropout(out)  # noqa: B018 (el error: la salida del dropout no se usa)
        return x + out if self.norm_first else self.norm(x + out)


class ResidualDropoutOnSumSeparate(ref.ResidualConnection):
    def forward(self, x, sublayer):
        if self.norm_first:
            out = x + sublayer(self.norm(x))
            return self.dropout(out)
        return self.norm(self.dropout(x + sublayer(x)))


MISTAKES = [
    *for_exercise(
        "ej1_layernorm",
        "LayerNorm",
        (LayerNormUnbiased, UNBIASED),
        (LayerNormEpsOutsideRoot, EPS_OUTSIDE),
        (LayerNormWithoutAffine, NO_AFFINE),
        (LayerNormOverEverything, OVER_EVERYTHING),
        (LayerNormOverVariance, OVER_VARIANCE),
        (LayerNormPlainTensors, PLAIN_TENSORS),
        (LayerNormUnbiasedStd, UNBIASED),
        (LayerNormTorchVar, UNBIASED),
        (LayerNormUnbiasedByHand, UNBIASED),
        (LayerNormEpsAfterSqrt, EPS_OUTSIDE),
        (LayerNormEpsAddedToStd, EPS_OUTSIDE),
        (LayerNormWithoutAffineRsqrt, NO_AFFINE),
        (LayerNormWithoutAffineVarMean, NO_AFFINE),
        (LayerNormOverEverythingTorch, OVER_EVERYTHING),
        (LayerNormOverEverythingFlat, OVER_EVERYTHING),
        (LayerNormOverStdSquared, OVER_VARIANCE),
        (LayerNormTimesInverseVariance, OVER_VARIANCE),
        (LayerNormRequiresGradTensors, PLAIN_TENSORS),
        (LayerNormBuffers, PLAIN_TENSORS),
        (LayerNormWithoutEps, EPS_IGNORED),
        (LayerNormFixedEps, EPS_IGNORED),
        (LayerNormStdWithoutEps, EPS_IGNORED),
        (LayerNormNotCentred, NOT_CENTRED),
        (LayerNormNotCentredRsqrt, NOT_CENTRED),
        (LayerNormWithoutAffineByHand, NO_AFFINE),
        (LayerNormWithoutAffinePower, NO_AFFINE),
        (LayerNormNotCentredByHand, NOT_CENTRED),
        (LayerNormNotCentredPower, NOT_CENTRED),
        (LayerNormMeanWithoutKeepdim, KEEPDIM),
        (LayerNormVarWithoutKeepdim, KEEPDIM),
        (LayerNormWithoutBias, NO_AFFINE),
        (LayerNormWithoutWeight, NO_AFFINE),
        (LayerNormOverFirstAxis, OVER_EVERYTHING),
        (LayerNormOverTokens, OVER_EVERYTHING),
    ),
    *for_exercise(
        "ej2_annotated",
        "AnnotatedLayerNorm",
        (AnnotatedBiased, BIASED),
        (AnnotatedEpsInsideRoot, EPS_INSIDE),
        (AnnotatedAsLayerNorm, AS_LAYERNORM),
        (AnnotatedWithoutAffine, NO_AFFINE),
        (AnnotatedOverEverything, OVER_EVERYTHING_STD),
        (AnnotatedBiasedCorrection, BIASED),
        (AnnotatedBiasedSqrtVar, BIASED),
        (AnnotatedEpsInsideRootStd, EPS_INSIDE),
        (AnnotatedEpsInsideRootRsqrt, EPS_INSIDE),
        (AnnotatedAsLayerNormInline, AS_LAYERNORM),
        (AnnotatedWithoutAffineTorchStd, NO_AFFINE),
        (AnnotatedWithoutAffineReciprocal, NO_AFFINE),
        (AnnotatedOverEverythingTorch, OVER_EVERYTHING_STD),
        (AnnotatedWithoutEps, EPS_IGNORED),
        (AnnotatedFixedEps, EPS_IGNORED),
        (AnnotatedNotCentred, NOT_CENTRED),
        (AnnotatedNotCentredReciprocal, NOT_CENTRED),
        (AnnotatedBiasedTorchStd, BIASED),
        (AnnotatedBiasedByHand, BIASED),
        (AnnotatedNotCentredTorchStd, NOT_CENTRED),
        (AnnotatedNotCentredByHand, NOT_CENTRED),
        (AnnotatedStdWithoutKeepdim, KEEPDIM),
        (AnnotatedMeanWithoutKeepdim, KEEPDIM),
        (AnnotatedWithoutBias, NO_AFFINE),
        (AnnotatedOverTokens, OVER_EVERYTHING_STD),
    ),
    *for_exercise(
        "ej3_rmsnorm",
        "RMSNorm",
        (RMSNormCentred, RMS_CENTRED),
        (RMSNormSumOfSquares, RMS_SUM),
        (RMSNormEpsOutsideRoot, RMS_EPS_OUTSIDE),
        (RMSNormWithoutWeight, RMS_NO_WEIGHT),
        (RMSNormWithoutRoot, RMS_NO_ROOT),
        (RMSNormOverEverything, RMS_OVER_EVERYTHING),
        (RMSNormWithBias, RMS_BIAS),
        (RMSNormOverNorm, RMS_SUM),
        (RMSNormCentredVar, RMS_CENTRED),
        (RMSNormSumOfSquaresTorch, RMS_SUM),
        (RMSNormEpsOutsideRootTorch, RMS_EPS_OUTSIDE),
        (RMSNormEpsAddedToRms, RMS_EPS_OUTSIDE),
        (RMSNormWithoutWeightSqrt, RMS_NO_WEIGHT),
        (RMSNormWithoutWeightSquare, RMS_NO_WEIGHT),
        (RMSNormWithoutRootReciprocal, RMS_NO_ROOT),
        (RMSNormOverEverythingTorch, RMS_OVER_EVERYTHING),
        (RMSNormOverEverythingSquare, RMS_OVER_EVERYTHING),
        (RMSNormWithBiasParameter, RMS_BIAS),
        (RMSNormWithoutEps, EPS_IGNORED),
        (RMSNormFixedEps, EPS_IGNORED),
        (RMSNormOverRmsWithoutEps, EPS_IGNORED),
        (RMSNormMeanSquareWithoutKeepdim, KEEPDIM),
        (RMSNormNormWithoutKeepdim, KEEPDIM),
        (RMSNormOverFirstAxis, RMS_OVER_EVERYTHING),
        (RMSNormOverTokens, RMS_OVER_EVERYTHING),
    ),
    *for_exercise(
        "ej4_dropout",
        "Dropout",
        (DropoutKeepsWithP, KEEPS_WITH_P),
        (DropoutWithoutRescale, NO_RESCALE),
        (DropoutOverP, OVER_P),
        (DropoutTimesKeep, TIMES_KEEP),
        (DropoutAlsoInEval, ALSO_IN_EVAL),
        (DropoutSeededInForward, SEEDED),
        (DropoutWithoutValidation, NO_VALIDATION),
        (DropoutRejectsZero, REJECTS_ZERO),
        (DropoutKeepsWithPBernoulli, KEEPS_WITH_P),
        (DropoutWithoutRescaleBernoulli, NO_RESCALE),
        (DropoutWithoutRescaleMaskedFill, NO_RESCALE),
        (DropoutOverPBernoulli, OVER_P),
        (DropoutOverPMaskedFill, OVER_P),
        (DropoutTimesKeepBernoulli, TIMES_KEEP),
        (DropoutTimesKeepMaskedFill, TIMES_KEEP),
        (DropoutAlsoInEvalBernoulli, ALSO_IN_EVAL),
        (DropoutWithoutTrainingCheck, ALSO_IN_EVAL),
        (DropoutFixedGenerator, SEEDED),
        (DropoutAcceptsOne, NO_VALIDATION),
        (DropoutAssertsRange, NO_VALIDATION),
        (DropoutRejectsZeroOrOne, REJECTS_ZERO),
    ),
    *for_exercise(
        "ej5_residual",
        "ResidualConnection",
        (ResidualSwapped, SWAPPED),
        (ResidualWithoutResidual, NO_RESIDUAL),
        (ResidualNormalisedInPreNorm, NORMALISED_RESIDUAL),
        (ResidualPostNormOnSublayer, POST_NORM_ON_SUBLAYER),
        (ResidualWithoutDropout, NO_DROPOUT),
        (ResidualDropoutOnSum, DROPOUT_ON_SUM),
        (ResidualSwappedCondition, SWAPPED),
        (ResidualSwappedOneLine, SWAPPED),
        (ResidualWithoutResidualSeparate, NO_RESIDUAL),
        (ResidualWithoutResidualOverwritten, NO_RESIDUAL),
        (ResidualNormalisedReassigned, NORMALISED_RESIDUAL),
        (ResidualNormalisedTwice, NORMALISED_RESIDUAL),
        (ResidualPostNormOnSublayerSeparate, POST_NORM_ON_SUBLAYER),
        (ResidualPostNormOnDroppedOutput, POST_NORM_ON_SUBLAYER),
        (ResidualWithoutDropoutPreOnly, NO_DROPOUT),
        (ResidualDropoutDiscarded, NO_DROPOUT),
        (ResidualDropoutOnSumSeparate, DROPOUT_ON_SUM),
        (ResidualSwappedIfElse, SWAPPED),
        (ResidualSwappedConditionalNorm, SWAPPED),
    ),
]
