"""Laboratorio 2: normalización, conexiones residuales y *dropout*.

Tres normalizaciones por *token* (sobre el último eje, de tamaño D), el *dropout*
invertido y la subcapa residual en sus dos variantes (post-norm y pre-norm).
"""

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class LayerNorm(nn.Module):
    """Normalización de capa (Ba et al., 2016), la del Transformer (Vaswani et al., 2017, §3.1).

    .. math::
        y = \\frac{x - \\mathrm{E}[x]}{\\sqrt{\\mathrm{Var}[x] + \\epsilon}} \\cdot w + b

    La media y la varianza se calculan sobre el último eje. La varianza es la *sesgada*
    (divide entre D, no entre D - 1) y ε va *dentro* de la raíz: así coincide con
    ``nn.LayerNorm`` y ``F.layer_norm``, y los nombres ``weight``/``bias`` hacen que los
    ``state_dict`` sean intercambiables.

    Args:
        d_model: tamaño D del último eje.
        eps: constante que evita dividir entre cero.

    Forma:
        x (..., D) -> (..., D)
    """

    # Con ``fused = True`` (lo pone ``course.reference.model.use_fused_kernels`` para
    # entrenar), la misma cuenta la hace ``F.layer_norm`` en una sola pasada por memoria.
    fused: bool = False

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x: Tensor) -> Tensor:
        if self.fused:
            return F.layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)
        mean = x.mean(dim=-1, keepdim=True)  # (..., 1)
        var = x.var(dim=-1, unbiased=False, keepdim=True)  # (..., 1), varianza sesgada
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias

    def extra_repr(self) -> str:
        return f"{self.weight.numel()}, eps={self.eps}"


class AnnotatedLayerNorm(nn.Module):
    """Variante de *The Annotated Transformer*: desviación típica *insesgada* y ε sumado a ella.

    .. math::
        y = \\frac{x - \\mathrm{E}[x]}{\\mathrm{std}_{D-1}[x] + \\epsilon} \\cdot w + b

    No es equivalente a ``nn.LayerNorm``: con ε = 0 su salida es la de ``LayerNorm``
    multiplicada por √((D - 1) / D), una diferencia que con D pequeño se ve enseguida.

    Args:
        d_model: tamaño D del último eje.
        eps: constante sumada a la desviación típica (1e-6, como en el original).

    Forma:
        x (..., D) -> (..., D)
    """

    def __init__(self, d_model: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x: Tensor) -> Tensor:
        mean = x.mean(dim=-1, keepdim=True)  # (..., 1)
        std = x.std(dim=-1, keepdim=True)  # (..., 1), insesgada: divide entre D - 1
        return self.weight * (x - mean) / (std + self.eps) + self.bias


class RMSNorm(nn.Module):
    """Normalización por la raíz cuadrática media (Zhang y Sennrich, 2019).

    .. math::
        y = \\frac{x}{\\sqrt{\\mathrm{mean}(x^2) + \\epsilon}} \\cdot w

    No resta la media ni tiene sesgo. Coincide con ``nn.RMSNorm(D, eps=eps)``; ojo:
    si a ``nn.RMSNorm`` no se le da ``eps``, usa ``torch.finfo(x.dtype).eps``.

    Args:
        d_model: tamaño D del último eje.
        eps: constante dentro de la raíz.

    Forma:
        x (..., D) -> (..., D)
    """

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x: Tensor) -> Tensor:
        mean_square = x.pow(2).mean(dim=-1, keepdim=True)  # (..., 1)
        return self.weight * x * torch.rsqrt(mean_square + self.eps)


class Dropout(nn.Module):
    """*Dropout* invertido (Srivastava et al., 2014; Vaswani et al., 2017, §5.4).

    En entrenamiento anula cada elemento con probabilidad ``p`` y multiplica los que
    quedan por 1 / (1 - p), de modo que la esperanza de la salida es la entrada. En
    evaluación (``model.eval()``) es la identidad. Usa el generador global de PyTorch:
    ``torch.manual_seed`` fija qué elementos se anulan.

    Args:
        p: probabilidad de anular un elemento, en [0, 1).

    Forma:
        x (...) -> (...)
    """

    def __init__(self, p: float = 0.1) -> None:
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(
                f"p={p} no es una probabilidad de dropout válida: debe estar en [0, 1)"
            )
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        if not self.training or self.p == 0.0:
            return x
        keep = torch.rand_like(x) >= self.p  # (...), True con probabilidad 1 - p
        return x * keep / (1.0 - self.p)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class ResidualConnection(nn.Module):
    """Subcapa residual con normalización (Vaswani et al., 2017, §3.1 y §5.4).

    - post-norm (``norm_first=False``, el artículo): ``LayerNorm(x + Dropout(subcapa(x)))``
    - pre-norm (``norm_first=True``): ``x + Dropout(subcapa(LayerNorm(x)))``

    Pre-norm deja un camino residual sin normalizar de la entrada a la salida, lo que
    estabiliza el entrenamiento de pilas profundas; necesita una normalización final.

    Args:
        d_model: dimensión D.
        dropout: probabilidad de *dropout* sobre la salida de la subcapa.
        norm_first: ``True`` para pre-norm, ``False`` para post-norm.

    Forma:
        x (B, T, D); ``sublayer`` transforma (B, T, D) -> (B, T, D); devuelve (B, T, D)
    """

    def __init__(self, d_model: int, dropout: float = 0.0, norm_first: bool = False) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.norm = LayerNorm(d_model)
        self.dropout = Dropout(dropout)

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        if self.norm_first:
            return x + self.dropout(sublayer(self.norm(x)))
        return self.norm(x + self.dropout(sublayer(x)))

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}"
