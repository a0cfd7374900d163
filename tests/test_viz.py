"""``course.student.viz``: cada figura se dibuja con datos pequeños, con título y ejes en español."""

import matplotlib
import pytest
import torch
from matplotlib.figure import Figure

from course.student import viz

matplotlib.use("Agg")


@pytest.mark.parametrize(
    "draw",
    [
        lambda: viz.attention_heatmap(torch.softmax(torch.randn(3, 3), -1), ["a", "b", "c"]),
        lambda: viz.token_statistics({"entrada": torch.randn(2, 3, 4)}),
        lambda: viz.positional_encoding_image(torch.rand(6, 4) * 2 - 1),
        lambda: viz.position_similarity(torch.randn(6, 4)),
        lambda: viz.training_curves([1, 2, 3], [3.0, 2.0, 1.5], [3], [1.8]),
        lambda: viz.attention_heads(torch.softmax(torch.randn(2, 3, 4), -1)),
        lambda: viz.head_heatmaps(torch.softmax(torch.randn(2, 3, 3), -1)),
        lambda: viz.residual_norms({"post-norm": [1.0, 1.0], "pre-norm": [1.5, 2.0]}),
        lambda: viz.loss_curve([3.0, 2.0, 1.0], total_steps=10),
    ],
)
def test_matplotlib_figures_have_spanish_labels(draw):
    fig = draw()
    assert isinstance(fig, Figure)
    labels = [ax.get_xlabel() + ax.get_ylabel() for ax in fig.axes]
    assert any(labels)
    assert not any(word in "".join(labels).lower() for word in ("position", "step", "loss"))


def test_lr_schedules_is_a_plotly_figure_with_one_trace_per_curve():
    shown = viz.lr_schedules(
        [1, 2, 3], {"Noam · warmup=2": [0.1, 0.2, 0.15], "coseno · warmup=2": [0.1, 0.2, 0.1]}
    )
    assert len(shown.figure.data) == 2
    assert shown.figure.layout.xaxis.title.text and shown.figure.layout.yaxis.title.text


def test_lr_schedules_carries_a_static_image_for_html_feedback():
    """JupyterLab dibuja el tipo MIME de plotly; nbconvert y la devolución, el PNG."""
    import base64
    import json

    shown = viz.lr_schedules([1, 2, 3], {"Noam · warmup=2": [0.1, 0.2, 0.15]}, title="Noam")
    import plotly.io as pio

    bundle = shown._repr_mimebundle_()
    assert bundle["application/vnd.plotly.v1+json"]["data"][0]["y"] == [0.1, 0.2, 0.15]
    plotly_own = pio.renderers["plotly_mimetype"].to_mimebundle(shown.figure.to_dict())
    assert json.loads(json.dumps(bundle["application/vnd.plotly.v1+json"])) == json.loads(
        json.dumps(plotly_own["application/vnd.plotly.v1+json"])
    )
    assert base64.b64decode(bundle["image/png"]).startswith(b"\x89PNG")
    assert "Noam" in bundle["text/plain"]


@pytest.mark.parametrize(
    "draw, wrong",
    [
        (viz.attention_heatmap, torch.rand(2, 3, 3)),
        (viz.positional_encoding_image, torch.rand(3)),
        (viz.attention_heads, torch.rand(3, 3)),
    ],
)
def test_wrong_number_of_axes_gets_a_spanish_error(draw, wrong):
    with pytest.raises(ValueError, match="espera forma .* y recibió"):
        draw(wrong)


@pytest.mark.parametrize("size", [1, 3, 10])
def test_attention_heatmap_is_readable_at_the_notebook_width(size):
    """Ni 280 × 260 px ni la etiqueta del eje y metida en el título (laboratorio 1, §9)."""
    fig = viz.attention_heatmap(torch.full((size, size), 1.0 / size), title="Frase 2: máscara")
    width, height = fig.get_size_inches() * fig.dpi
    assert width >= 450 and height >= 400
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    title, ylabel, xlabel = (
        t.get_window_extent(renderer) for t in (ax.title, ax.yaxis.label, ax.xaxis.label)
    )
    assert not ylabel.overlaps(title) and not xlabel.overlaps(title)
    inside = fig.bbox
    for box in (title, ylabel, xlabel):
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1
        assert inside.y0 <= box.y0 and box.y1 <= inside.y1


def test_token_statistics_keeps_equal_series_apart_and_draws_the_rms():
    """Dos series iguales (la media 0 de LayerNorm y de la variante) no se tapan (laboratorio 2, §7)."""
    x = torch.randn(2, 3, 4)
    centred = x - x.mean(dim=-1, keepdim=True)
    fig = viz.token_statistics({"a": centred, "b": centred.clone()})
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["media por token", "desviación típica por token", "RMS por token"]
    for ax in fig.axes:
        first, second = ax.get_lines()
        assert first.get_marker() != second.get_marker()
        assert first.get_linestyle() != second.get_linestyle()
        assert (abs(first.get_xdata() - second.get_xdata()) > 0.05).all()
        assert list(first.get_ydata()) == list(second.get_ydata())
    rms = fig.axes[2].get_lines()[0].get_ydata()
    assert torch.allclose(torch.tensor(rms), centred.pow(2).mean(dim=-1).sqrt().flatten())


def test_token_moments_square_rms_is_square_mean_plus_variance():
    moments = viz.token_moments(3.0 * torch.randn(5, 7) + 2.0)
    assert moments["mean"].shape == moments["std"].shape == moments["rms"].shape == (5,)
    assert torch.allclose(
        moments["rms"] ** 2, moments["mean"] ** 2 + moments["std"] ** 2, atol=1e-4
    )


def test_position_similarity_writes_the_dot_product_with_subscripts():
    """Laboratorio 3: «PE_i · PE_j» se ve con subíndices (mathtext), no literal ni «PE[i]»."""
    fig = viz.position_similarity(torch.randn(6, 4))
    colorbar = fig.axes[-1]
    assert colorbar.get_ylabel() == r"$PE_i \cdot PE_j$"


def test_attention_heads_is_readable_with_a_colorbar_and_no_overlap():
    """Laboratorio 7, §12: rótulos legibles, barra de color y el título sin pisar las cabezas."""
    tokens = [f"tok{i}" for i in range(14)]
    fig = viz.attention_heads(
        torch.softmax(torch.randn(3, 14, 14), -1), tokens, tokens, title="Atención cruzada"
    )
    panels = [ax for ax in fig.axes if ax.get_title().startswith("cabeza")]
    assert len(panels) == 3
    bars = [ax for ax in fig.axes if ax.get_ylabel() == "peso de atención"]
    assert len(bars) == 1, "falta la barra de color"
    for ax in panels:
        sizes = [t.get_fontsize() for t in ax.get_xticklabels() + ax.get_yticklabels()]
        assert min(sizes) >= 9, sizes
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    title = fig._suptitle.get_window_extent(renderer)
    for ax in panels:
        assert not title.overlaps(ax.title.get_window_extent(renderer)), ax.get_title()
        assert not title.overlaps(ax.get_window_extent(renderer))
    assert fig.bbox.y0 <= title.y0 and title.y1 <= fig.bbox.y1


def test_training_curves_legend_says_what_the_moving_average_averages():
    fig = viz.training_curves(list(range(1, 101)), [3.0] * 100, [100], [2.5])
    labels = [text.get_text() for text in fig.axes[0].get_legend().get_texts()]
    assert "entrenamiento (media móvil de los últimos 5 lotes)" in labels, labels


def test_residual_norms_draws_the_value_after_the_final_layernorm():
    """Laboratorio 5, §10: el texto habla del RMS «tras self.norm»; la figura lo dibuja."""
    fig = viz.residual_norms(
        {"post-norm": [2.0, 1.0, 1.0], "pre-norm": [2.0, 2.2, 2.5]}, {"pre-norm": 1.0}
    )
    ax = fig.axes[0]
    assert ax.get_xticklabels()[-1].get_text() == "tras\nself.norm"
    star = ax.get_lines()[-1]
    assert star.get_label() == "pre-norm, tras self.norm"
    assert list(star.get_xdata()) == [2, 3] and list(star.get_ydata()) == [2.5, 1.0]
