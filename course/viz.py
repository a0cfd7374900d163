"""Figuras del curso: mapas de atención, codificación posicional y curvas.

Cada función recibe tensores y devuelve una figura (``matplotlib`` o ``plotly``) con los
ejes rotulados en español; el cuaderno decide si la muestra.
"""

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from torch import Tensor


def attention_heatmap(
    weights: Tensor,
    queries: list[str] | None = None,
    keys: list[str] | None = None,
    title: str = "Pesos de atención",
) -> Figure:
    """Mapa de calor de una matriz de pesos de atención.

    Forma:
        weights (T_q, T_k); ``queries`` y ``keys`` rotulan filas y columnas.
    """
    if weights.dim() != 2:
        raise ValueError(
            f"attention_heatmap espera una matriz (T_q, T_k) y recibió forma {tuple(weights.shape)};"
            " elige un ejemplo del lote (y una cabeza), p. ej. pesos[0]."
        )
    values = weights.detach().float().cpu().numpy()
    fig, ax = plt.subplots(figsize=(1.0 + 0.6 * values.shape[1], 0.8 + 0.6 * values.shape[0]))
    image = ax.imshow(values, cmap="viridis", vmin=0.0, vmax=1.0)
    ax.set_xlabel("clave (posición atendida)")
    ax.set_ylabel("consulta (posición que atiende)")
    ax.set_xticks(range(values.shape[1]), keys or range(values.shape[1]))
    ax.set_yticks(range(values.shape[0]), queries or range(values.shape[0]))
    for (i, j), value in _cells(values):
        ax.text(j, i, f"{value:.2f}", ha="center", va="center", color="w" if value < 0.5 else "k")
    ax.set_title(title)
    fig.colorbar(image, ax=ax, fraction=0.046)
    fig.tight_layout()
    return fig


def _cells(values):
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            yield (i, j), float(value)
