"""Figuras del curso: mapas de atención, codificación posicional y curvas.

Cada función recibe tensores y devuelve una figura (``matplotlib`` o ``plotly``) con los
ejes rotulados en español; el cuaderno decide si la muestra.
"""

import base64
import io

import matplotlib.pyplot as plt
import numpy as np
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
    values = _matrix(weights, "attention_heatmap", "(T_q, T_k)", True)
    t_q, t_k = values.shape
    # al menos 4,5 × 4 pulgadas (450 × 400 px): con 3 × 3 celdas, las etiquetas de los ejes
    # caben junto al mapa sin pisar el título
    fig, ax = plt.subplots(figsize=(max(4.5, 2.0 + 0.6 * t_k), max(4.0, 1.6 + 0.6 * t_q)))
    image = ax.imshow(values, cmap="viridis", vmin=0.0, vmax=1.0)
    ax.set_xlabel("clave (posición atendida)")
    ax.set_ylabel("consulta\n(posición que atiende)")
    ax.set_xticks(range(values.shape[1]), keys or range(values.shape[1]))
    ax.set_yticks(range(values.shape[0]), queries or range(values.shape[0]))
    for (i, j), value in _cells(values):
        ax.text(j, i, f"{value:.2f}", ha="center", va="center", color="w" if value < 0.5 else "k")
    ax.set_title(title)
    fig.colorbar(image, ax=ax, fraction=0.046)
    fig.tight_layout()
    return fig


def _matrix(tensor: Tensor, function: str, dims: str, pick_example: bool = False) -> np.ndarray:
    """Comprueba que ``tensor`` tiene los ejes ``dims`` y lo devuelve como arreglo ``float32``."""
    if tensor.dim() != dims.count(",") + 1:
        hint = " Elige un ejemplo del lote, p. ej. pesos[0]." if pick_example else ""
        raise ValueError(f"{function} espera forma {dims} y recibió {tuple(tensor.shape)}.{hint}")
    return tensor.detach().float().cpu().numpy()


def _cells(values):
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            yield (i, j), float(value)


def token_moments(values: Tensor) -> dict[str, Tensor]:
    """Media, desviación típica (sesgada) y RMS de cada *token*: lo que dibuja :func:`token_statistics`.

    Forma:
        values (..., D) -> cada estadístico (N,), con N *tokens* (los ejes anteriores a D aplanados).
    """
    rows = values.detach().float().cpu().reshape(-1, values.shape[-1])  # (N, D)
    return {
        "mean": rows.mean(dim=-1),
        "std": rows.std(dim=-1, unbiased=False),
        "rms": rows.pow(2).mean(dim=-1).sqrt(),
    }


_MOMENT_TITLES = {
    "mean": "media por token",
    "std": "desviación típica por token",
    "rms": "RMS por token",
}
_LINE_STYLES = [("o", "-"), ("s", "--"), ("^", "-."), ("D", ":"), ("v", "-"), ("P", "--")]


def token_statistics(tensors: dict[str, Tensor], title: str = "Estadísticos por token") -> Figure:
    """Media, desviación típica (sesgada) y RMS de cada *token* antes y después de normalizar.

    Cada serie tiene su marcador y su trazo y va un poco desplazada en horizontal, para que
    dos series iguales (la media 0 de dos normalizaciones) se vean las dos.

    Forma:
        cada tensor (..., D); se aplanan los ejes anteriores a D, un punto por *token*.
    """
    fig, axes = plt.subplots(1, 3, figsize=(11.0, 3.6))
    series = {label: token_moments(values) for label, values in tensors.items()}
    tokens = max((len(moments["mean"]) for moments in series.values()), default=0)
    width = 0.5 / max(len(series), 1)
    for i, (label, moments) in enumerate(series.items()):
        marker, line = _LINE_STYLES[i % len(_LINE_STYLES)]
        positions = np.arange(len(moments["mean"])) + (i - (len(series) - 1) / 2) * width
        for ax, key in zip(axes, _MOMENT_TITLES, strict=True):
            ax.plot(positions, moments[key].numpy(), marker=marker, linestyle=line, label=label)
    for ax, key in zip(axes, _MOMENT_TITLES, strict=True):
        ax.set_title(_MOMENT_TITLES[key])
        ax.set_xticks(range(tokens), range(1, tokens + 1))
        ax.set_xlabel("token (lote aplanado, desde 1)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("valor")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize="small")
    fig.suptitle(title)
    fig.tight_layout(rect=(0.0, 0.1, 1.0, 1.0))
    return fig


def positional_encoding_image(
    encoding: Tensor, title: str = "Codificación posicional sinusoidal"
) -> Figure:
    """Imagen de una matriz de codificación posicional: filas = posiciones, columnas = dimensiones.

    Forma:
        encoding (T, D), valores típicamente en [-1, 1].
    """
    values = _matrix(encoding, "positional_encoding_image", "(T, D)")
    fig, ax = plt.subplots(figsize=(7.0, 4.0))
    image = ax.imshow(values, cmap="RdBu", vmin=-1.0, vmax=1.0, aspect="auto")
    ax.set_xlabel("dimensión (columnas pares: seno; impares: coseno)")
    ax.set_ylabel("posición en la secuencia")
    ax.set_title(title)
    fig.colorbar(image, ax=ax, fraction=0.046, label="valor")
    fig.tight_layout()
    return fig


def position_similarity(
    encoding: Tensor, title: str = "Producto escalar entre posiciones"
) -> Figure:
    """Mapa de calor de ``encoding @ encoding.T``: similitud entre cada par de posiciones.

    Forma:
        encoding (T, D); la figura muestra una matriz (T, T).
    """
    values = _matrix(encoding, "position_similarity", "(T, D)")
    similarity = values @ values.T
    fig, ax = plt.subplots(figsize=(5.0, 4.2))
    image = ax.imshow(similarity, cmap="viridis")
    ax.set_xlabel("posición j")
    ax.set_ylabel("posición i")
    ax.set_title(title)
    fig.colorbar(image, ax=ax, fraction=0.046, label=r"$PE_i \cdot PE_j$")
    fig.tight_layout()
    return fig


def training_curves(
    steps: list[int],
    train_loss: list[float],
    val_steps: list[int],
    val_loss: list[float],
    title: str = "Curvas de entrenamiento y validación",
) -> Figure:
    """Pérdida de entrenamiento por paso (y su media móvil) y pérdida de validación.

    La media móvil promedia cada lote con los anteriores, hasta una ventana de un
    vigésimo de los pasos; la leyenda dice cuántos lotes son, porque cambia con la receta.

    Args:
        steps, train_loss: número de actualización y pérdida de cada lote.
        val_steps, val_loss: paso en que se evaluó (p. ej. al final de cada época) y
            pérdida media por *token* en validación.
    """
    fig, ax = plt.subplots(figsize=(7.0, 4.0))
    ax.plot(steps, train_loss, color="tab:blue", alpha=0.3, lw=1, label="entrenamiento (lote)")
    window = max(1, len(train_loss) // 20)
    if window > 1:
        smooth = [
            sum(train_loss[max(0, i - window + 1) : i + 1])
            / len(train_loss[max(0, i - window + 1) : i + 1])
            for i in range(len(train_loss))
        ]
        label = f"entrenamiento (media móvil de los últimos {window} lotes)"
        ax.plot(steps, smooth, color="tab:blue", lw=2, label=label)
    ax.plot(val_steps, val_loss, "o-", color="tab:orange", lw=2, label="validación")
    ax.set_xlabel("paso de optimización")
    ax.set_ylabel("entropía cruzada por token (nats)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    return fig


def attention_heads(
    weights: Tensor,
    queries: list[str] | None = None,
    keys: list[str] | None = None,
    title: str = "Atención cruzada por cabeza",
) -> Figure:
    """Un mapa de calor por cabeza, en una rejilla de hasta 4 columnas, con una barra de color.

    Los paneles crecen con el número de *tokens* para que sus rótulos se lean (cuerpo 9)
    y el diseño ``constrained`` reserva sitio al título general, a los de cada cabeza y a
    la barra de color común (pesos de 0 a 1), sin que se solapen.

    Forma:
        weights (H, T_q, T_k); ``queries`` (T_q) rotula las filas (*tokens* generados) y
        ``keys`` (T_k) las columnas (*tokens* de origen).
    """
    values = _matrix(weights, "attention_heads", "(H, T_q, T_k)", True)
    H, T_q, T_k = values.shape
    cols = min(H, 4)
    rows = (H + cols - 1) // cols
    size = (1.5 + max(2.5, 0.2 * T_k) * cols, 1.2 + max(2.5, 0.2 * T_q) * rows)
    fig, axes = plt.subplots(rows, cols, figsize=size, squeeze=False, layout="constrained")
    for h, ax in enumerate(axes.flat):
        if h >= H:
            ax.axis("off")
            continue
        image = ax.imshow(values[h], cmap="viridis", vmin=0.0, vmax=1.0)
        ax.set_title(f"cabeza {h + 1}", fontsize=10)
        ax.set_xticks(range(T_k), keys or range(T_k), rotation=90, fontsize=9)
        ax.set_yticks(range(T_q), queries or range(T_q), fontsize=9)
        ax.set_xlabel("origen (clave)")
        if h % cols == 0:
            ax.set_ylabel("salida (consulta)")
    fig.colorbar(image, ax=axes, shrink=0.8, label="peso de atención")
    fig.suptitle(title)
    return fig


def head_heatmaps(
    weights: Tensor,
    queries: list[str] | None = None,
    keys: list[str] | None = None,
    title: str = "Pesos de atención por cabeza",
) -> Figure:
    """Rejilla de mapas de calor, uno por cabeza, con el valor de cada peso escrito.

    Pensada para ejemplos pequeños (laboratorio 4): todas las cabezas comparten la
    escala [0, 1] y una sola barra de color, para que se comparen de un vistazo.

    Forma:
        weights (H, T_q, T_k); ``queries`` (T_q) rotula las filas y ``keys`` (T_k) las columnas.
    """
    values = _matrix(weights, "head_heatmaps", "(H, T_q, T_k)", True)
    H, T_q, T_k = values.shape
    cols = min(H, 4)
    rows = (H + cols - 1) // cols
    fig, axes = plt.subplots(
        rows,
        cols,
        figsize=(0.8 + (1.0 + 0.6 * T_k) * cols, 0.9 + (0.6 + 0.6 * T_q) * rows),
        squeeze=False,
        layout="constrained",
    )
    image = None
    for h, ax in enumerate(axes.flat):
        if h >= H:
            ax.axis("off")
            continue
        image = ax.imshow(values[h], cmap="viridis", vmin=0.0, vmax=1.0)
        for (i, j), value in _cells(values[h]):
            ax.text(
                j,
                i,
                f"{value:.2f}",
                ha="center",
                va="center",
                fontsize=8,
                color="w" if value < 0.5 else "k",
            )
        ax.set_title(f"cabeza {h + 1}")
        ax.set_xticks(range(T_k), keys or range(T_k))
        ax.set_yticks(range(T_q), queries or range(T_q))
        ax.set_xlabel("clave (posición atendida)")
        if h % cols == 0:
            ax.set_ylabel("consulta")
    fig.suptitle(title)
    fig.colorbar(image, ax=axes, fraction=0.046, label="peso")
    return fig


def residual_norms(
    norms: dict[str, list[float]],
    after_norm: dict[str, float] | None = None,
    title: str = "Tamaño del flujo residual capa a capa",
) -> Figure:
    """Norma media de los *tokens* a la salida de cada capa de una pila (laboratorio 5).

    Args:
        norms: para cada configuración (p. ej. "post-norm", "pre-norm"), la lista de
            valores RMS medios por *token*, ‖x‖ / √D: el primero es la entrada (capa 0)
            y el resto, la salida de cada capa.
        after_norm: el mismo valor tras la ``LayerNorm`` final de la pila (``self.norm``),
            para las configuraciones que la tienen: una estrella en una última columna,
            «tras self.norm», que es lo que devuelve la pila pre-norm.
    """
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    layers = max(len(values) for values in norms.values())
    for label, values in norms.items():
        (line,) = ax.plot(range(len(values)), values, marker="o", label=label)
        if after_norm and label in after_norm:
            ax.plot([len(values) - 1, layers], [values[-1], after_norm[label]], color=line.get_color(),
                    linestyle=":", marker="*", markersize=12, markevery=[1],
                    label=f"{label}, tras self.norm")  # fmt: skip
    ticks = [str(i) for i in range(layers)] + (["tras\nself.norm"] if after_norm else [])
    ax.set_xticks(range(len(ticks)), ticks)
    ax.set_xlabel("capa (0 = entrada de la pila)")
    ax.set_ylabel("RMS medio por token, ‖x‖ / √D")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    return fig


def loss_curve(
    losses: list[float],
    total_steps: int | None = None,
    title: str = "Pérdida de entrenamiento",
) -> Figure:
    """Pérdida por paso en escala logarítmica, con su media móvil (laboratorio 6).

    Pensada para redibujarse durante el entrenamiento: ``total_steps`` fija el eje x
    desde el principio, de modo que la curva avanza sobre unos ejes que no cambian.

    Args:
        losses: pérdida media por *token* de cada actualización, en orden.
        total_steps: número total de pasos previstos (por defecto, ``len(losses)``).
    """
    steps = range(1, len(losses) + 1)
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    ax.plot(steps, losses, color="tab:blue", alpha=0.35, lw=1, label="pérdida del lote")
    window = max(1, len(losses) // 20)
    if window > 1:
        smooth = [
            sum(losses[max(0, i - window + 1) : i + 1]) / (i + 1 - max(0, i - window + 1))
            for i in range(len(losses))
        ]
        ax.plot(steps, smooth, color="tab:blue", lw=2, label=f"media de {window} pasos")
    ax.set_xlim(0, max(total_steps or len(losses), 1))
    ax.set_yscale("log")
    ax.set_xlabel("paso de optimización")
    ax.set_ylabel("entropía cruzada por token (nats, escala log)")
    ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    fig.tight_layout()
    return fig


def lr_schedules(
    steps: list[int],
    curves: dict[str, list[float]],
    title: str = "Tasa de aprendizaje por paso",
) -> "InteractiveFigure":
    """Varias curvas de tasa de aprendizaje en una figura interactiva de ``plotly`` (laboratorio 6).

    El nombre de cada curva es ``"esquema · variante"``: las de un mismo esquema comparten
    trazo y las de una misma variante comparten color; con ``"Noam · warmup=4000"`` y
    ``"coseno · warmup=4000"`` se lee a la vez el esquema (trazo) y el calentamiento (color).
    La figura lleva una imagen fija de reserva para el HTML estático (:class:`InteractiveFigure`).

    Args:
        steps: pasos del eje x, comunes a todas las curvas.
        curves: nombre de la curva -> tasa de aprendizaje en cada paso de ``steps``.
    """
    import plotly.graph_objects as go  # solo quien dibuja con plotly paga su importación

    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    dashes = {"solid": "-", "dash": "--", "dot": ":", "dashdot": "-."}
    schemes, variants = {}, {}
    fig = go.Figure()
    image, ax = plt.subplots(figsize=(7.6, 4.2))
    for name, values in curves.items():
        scheme, _, variant = name.partition(" · ")
        color = palette[variants.setdefault(variant, len(variants)) % len(palette)]
        dash = list(dashes)[schemes.setdefault(scheme, len(schemes)) % len(dashes)]
        rounded = [float(f"{v:.4g}") for v in values]  # 4 cifras bastan y la figura pesa menos
        fig.add_trace(
            go.Scatter(
                x=list(steps),
                y=rounded,
                name=name,
                mode="lines",
                line={"color": color, "dash": dash},
            )
        )
        ax.plot(steps, rounded, color=color, linestyle=dashes[dash], label=name)
    fig.update_layout(
        title=title,
        xaxis_title="paso de optimización",
        yaxis_title="tasa de aprendizaje",
        hovermode="x unified",
        template="plotly_white",
        width=760,
        height=420,
    )
    ax.set_xlabel("paso de optimización")
    ax.set_ylabel("tasa de aprendizaje")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    image.tight_layout()
    return InteractiveFigure(fig, image)


class InteractiveFigure:
    """Una figura de ``plotly`` con una imagen fija de reserva, dibujada con matplotlib.

    Al mostrarse ofrece las dos: JupyterLab elige la interactiva; el HTML de la devolución
    y ``nbconvert``, que no ejecutan el JavaScript de plotly, muestran la imagen PNG.

    Attributes:
        figure: la figura de ``plotly``.
        image: el PNG de la imagen fija, en bytes.
    """

    def __init__(self, figure, image: Figure, dpi: int = 80):
        self.figure = figure
        buffer = io.BytesIO()
        image.savefig(buffer, format="png", dpi=dpi)
        plt.close(image)
        self.image = buffer.getvalue()

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, object]:
        # El mismo tipo MIME que el renderizador «plotly_mimetype», sin importar plotly.io
        # (varios segundos en el núcleo de calificación).
        return {
            "application/vnd.plotly.v1+json": self.figure.to_plotly_json(),
            "image/png": base64.b64encode(self.image).decode("ascii"),
            "text/plain": f"<figura interactiva: {self.figure.layout.title.text}>",
        }
