"""Errores típicos del laboratorio 2 (normalización, conexiones residuales y *dropout*).

Cada mutante es la referencia con un solo error. Nunca llega al estudiante.
"""

import torch
from torch import nn

from course.mistakes import for_exercise
from course.reference import normalization as ref

LAB = "02_normalizacion"


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


MISTAKES = [
    *for_exercise(
        "ej1_layernorm",
        "LayerNorm",
        (
            LayerNormUnbiased,
            "¿Usas la varianza insesgada? LayerNorm divide entre D (unbiased=False).",
        ),
        (LayerNormEpsOutsideRoot, "eps va dentro de la raíz: sqrt(var + eps)."),
        (LayerNormWithoutAffine, "¿Olvidas multiplicar por weight y sumar bias?"),
        (
            LayerNormOverEverything,
            "¿Calculas la media y la varianza de cada token, sobre el último eje (dim=-1)?",
        ),
        (LayerNormOverVariance, "¿Divides entre la varianza? Se divide entre su raíz."),
        (LayerNormPlainTensors, "¿Creas weight y bias con nn.Parameter?"),
    ),
    *for_exercise(
        "ej2_annotated",
        "AnnotatedLayerNorm",
        (AnnotatedBiased, "Aquí la desviación típica es la insesgada (divide entre D - 1)."),
        (
            AnnotatedEpsInsideRoot,
            "En esta variante eps se suma a la desviación típica, fuera de la raíz.",
        ),
        (AnnotatedAsLayerNorm, "Esto es LayerNorm del ejercicio 1, no la variante."),
        (AnnotatedWithoutAffine, "¿Olvidas multiplicar por weight y sumar bias?"),
        (
            AnnotatedOverEverything,
            "¿Calculas la media y la desviación típica de cada token, sobre el último eje (dim=-1)?",
        ),
    ),
    *for_exercise(
        "ej3_rmsnorm",
        "RMSNorm",
        (RMSNormCentred, "RMSNorm no resta la media."),
        (RMSNormSumOfSquares, "Divide entre la raíz de la MEDIA de los cuadrados, no de la suma."),
        (RMSNormEpsOutsideRoot, "eps va dentro de la raíz."),
        (RMSNormWithoutWeight, "¿Olvidas multiplicar por weight?"),
        (
            RMSNormWithoutRoot,
            "¿Falta la raíz? Se divide entre la raíz de la media de los cuadrados.",
        ),
        (
            RMSNormOverEverything,
            "¿Calculas la media de los cuadrados de cada token, sobre el último eje (dim=-1)?",
        ),
        (RMSNormWithBias, "RMSNorm no tiene bias: su único parámetro es weight."),
    ),
    *for_exercise(
        "ej4_dropout",
        "Dropout",
        (DropoutKeepsWithP, "¿Conservas con probabilidad p en lugar de 1 - p?"),
        (DropoutWithoutRescale, "¿Falta dividir entre 1 - p?"),
        (DropoutOverP, "Se divide entre 1 - p, no entre p."),
        (
            DropoutTimesKeep,
            "¿Multiplicas por 1 - p? Los elementos conservados se dividen entre 1 - p.",
        ),
        (DropoutAlsoInEval, "En evaluación el dropout es la identidad: ¿miras self.training?"),
        (
            DropoutSeededInForward,
            "¿Fijas la semilla dentro de forward? Cada llamada debe sortear una máscara nueva.",
        ),
        (
            DropoutWithoutValidation,
            "Dropout(p=1.0) debería lanzar ValueError: p tiene que estar en [0, 1).",
        ),
        (DropoutRejectsZero, "p = 0 es válido (no anula nada): el intervalo es [0, 1)."),
    ),
    *for_exercise(
        "ej5_residual",
        "ResidualConnection",
        (
            ResidualSwapped,
            "¿Están cambiadas las formas? norm_first=True es pre-norm: x + subcapa(norm(x)).",
        ),
        (ResidualWithoutResidual, "¿Falta sumar el residuo x?"),
        (ResidualNormalisedInPreNorm, "En pre-norm el residuo es x sin normalizar, no norm(x)."),
        (
            ResidualPostNormOnSublayer,
            "En post-norm se normaliza la suma x + subcapa(x), no solo la salida de la subcapa.",
        ),
        (
            ResidualWithoutDropout,
            "No se anula nada: ¿aplicas self.dropout a la salida de la subcapa?",
        ),
        (ResidualDropoutOnSum, "El dropout va sobre la salida de la subcapa, no sobre el residuo."),
    ),
    *for_exercise(
        "ej1_layernorm",
        "LayerNorm",
        (
            LayerNormUnbiasedStd,
            "¿Usas la varianza insesgada? LayerNorm divide entre D (unbiased=False).",
        ),
    ),
    *for_exercise(
        "ej3_rmsnorm",
        "RMSNorm",
        (RMSNormOverNorm, "Divide entre la raíz de la MEDIA de los cuadrados, no de la suma."),
    ),
]
