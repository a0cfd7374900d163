"""La tercera mitad apartada: errores escritos leyendo solo los cuadernos del estudiante.

Cada caso es un error que un estudiante podría cometer al seguir el enunciado de
``release/``, escrito a partir del cuaderno y de la firma de la función, no a partir de un
mutante del catálogo. ``accepted`` son trozos de mensaje que nombrarían su causa, decididos
antes de ejecutarlo. La prueba exige que la prueba visible lo detecte y que su mensaje no
nombre la idea de otro error del catálogo (una causa que la salida contradice); cuántos se
nombran se cuenta y se imprime al final, no se exige. Una sola:
``python -m pytest -q tests/test_mistakes_notebooks.py``.
"""

import math
from collections import Counter

import pytest
import torch

from course import mistakes
from course.mistakes import model_forms as forms
from course.reference import attention as ra
from course.reference import layers as rl
from course.reference import normalization as rn
from course.reference import positional as rp
from course.student import checks

COUNTS: Counter = Counter()


# --- lab. 1 ---


def scores_over_time_axis(query, key):
    """Divide entre la raíz de la longitud (query.size(1)) en lugar de d_k."""
    return query @ key.transpose(-2, -1) / math.sqrt(query.size(1))


def softmax_without_max(x):
    """El enunciado pide restar el máximo; aquí no se resta."""
    return x.exp() / x.exp().sum(dim=-1, keepdim=True)


def padding_mask_without_axis(tokens, pad_idx):
    return tokens != pad_idx  # (B, T), sin el eje de las consultas


def attention_masking_with_zero(query, key, value, mask=None, dropout=None):
    """Pone 0 (no -inf) en las puntuaciones tapadas: siguen recibiendo peso."""
    scores = ra.attention_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)
    weights = ra.softmax(scores)
    dropped = dropout(weights) if dropout is not None else weights
    return dropped @ value, weights


# --- lab. 2 ---


class LayerNormEpsOutside(rn.LayerNorm):
    """ε sumado a la desviación típica, fuera de la raíz."""

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        std = x.var(dim=-1, unbiased=False, keepdim=True).sqrt()
        return self.weight * (x - mean) / (std + self.eps) + self.bias


class DropoutScaledByP(rn.Dropout):
    """Escala lo que conserva por 1 / p en lugar de 1 / (1 - p)."""

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        return x * (torch.rand_like(x) >= self.p) / self.p


# --- lab. 3 ---


def sinusoidal_from_position_one(max_len, d_model):
    """Cuenta las posiciones desde 1."""
    return rp.sinusoidal_encoding(max_len + 1, d_model)[1:]


# --- lab. 4 ---


def split_heads_without_transpose(x, num_heads):
    B, T, D = x.shape
    return x.reshape(B, num_heads, T, D // num_heads)


# --- lab. 5 ---


class EncoderLayerNormOnSublayer(rl.EncoderLayer):
    """Post-norm que normaliza solo la salida de la subcapa y después suma x."""

    def forward(self, x, mask=None):
        if self.norm_first:
            return super().forward(x, mask)
        x = x + self.norm1(self.dropout(self.self_attn(x, x, x, mask)[0]))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncoderLayerFeedForwardOnOriginal(rl.EncoderLayer):
    """La FFN recibe la x de la entrada de la capa, no la que sale de la atención."""

    def forward(self, x, mask=None):
        if not self.norm_first:
            return super().forward(x, mask)
        h = self.norm1(x)
        attended = x + self.dropout(self.self_attn(h, h, h, mask)[0])
        return attended + self.dropout(self.feed_forward(self.norm2(x)))


class EncoderLayerInvertedMask(rl.EncoderLayer):
    """Máscara con el convenio de src_key_padding_mask (True = tapado), como en la sección 11."""

    def forward(self, x, mask=None):
        return super().forward(x, mask if mask is None else mask.logical_not())


class EncoderEveryLayerOnInput(rl.Encoder):
    def forward(self, x, mask=None):
        outputs = [layer(x, mask) for layer in self.layers]
        return self.norm(outputs[-1])


# --- lab. 6 ---


def tgt_mask_padding_on_rows(tgt, pad_idx):
    """El relleno tapa filas (consultas) en lugar de columnas (claves)."""
    return (tgt != pad_idx).unsqueeze(-1) & ra.causal_mask(tgt.size(1), device=tgt.device)


def train_scheduler_before_backward(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    return forms._ordered_loop(model, steps, batch_size, seq_len, lr, generator, on_step,
                               order=("zero_grad", "scheduler", "backward", "step"))  # fmt: skip


def train_zero_grad_after_step_before_backward(
    model, steps, batch_size, seq_len, lr, generator, on_step=None
):
    """zero_grad justo antes de step: borra lo que acaba de calcular backward."""
    return forms._ordered_loop(model, steps, batch_size, seq_len, lr, generator, on_step,
                               order=("backward", "zero_grad", "step", "scheduler"))  # fmt: skip


def smoothing_over_other_classes(logits, target, smoothing=0.0, ignore_index=-100):
    """Reparte ε entre las V - 1 clases que no son la correcta."""
    log_probs = logits.log_softmax(dim=-1)
    V = logits.size(-1)
    nll = -log_probs.gather(-1, target.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    others = (-log_probs.sum(dim=-1) - nll) / (V - 1)
    loss = (1 - smoothing) * nll + smoothing * others
    keep = target != ignore_index
    return loss[keep].mean()


CASES = [
    ("01_atencion", "ej1_puntuaciones", "attention_scores", scores_over_time_axis,
     ("√d_k", "d_k es el último eje")),
    ("01_atencion", "ej2_softmax", "softmax", softmax_without_max, ("máximo",)),
    ("01_atencion", "ej3_relleno", "padding_mask", padding_mask_without_axis, ("eje",)),
    ("01_atencion", "ej5_atencion", "scaled_dot_product_attention", attention_masking_with_zero,
     ("-inf", "infinito")),
    ("02_normalizacion", "ej1_layernorm", "LayerNorm", LayerNormEpsOutside, ("ε", "eps")),
    ("02_normalizacion", "ej4_dropout", "Dropout", DropoutScaledByP, ("1 − p", "1 - p")),
    ("03_posicional", "ej2_senoidal", "sinusoidal_encoding", sinusoidal_from_position_one,
     (checks.SHIFTED, "posición 0", "desde 0", "empiezan en 0")),
    ("04_multicabeza", "ej1_split_heads", "split_heads", split_heads_without_transpose,
     ("transpose", "view o reshape", "directamente a (B, H, T, d_k)")),
    ("05_capas", "ej2_encoder_layer", "EncoderLayer", EncoderLayerNormOnSublayer,
     ("post-norm", "LayerNorm")),
    ("05_capas", "ej2_encoder_layer", "EncoderLayer", EncoderLayerFeedForwardOnOriginal,
     ("norm1(x)", "la x que sale de la subcapa anterior")),
    ("05_capas", "ej2_encoder_layer", "EncoderLayer", EncoderLayerInvertedMask, ("al revés",)),
    ("05_capas", "ej4_encoder", "Encoder", EncoderEveryLayerOnInput, ("no se encadenan",)),
    ("06_transformer", "ej4_mascara_destino", "make_tgt_mask", tgt_mask_padding_on_rows,
     ("relleno", checks.TRANSPOSED)),
    ("06_transformer", "ej11_entrenamiento", "train_copy_task", train_scheduler_before_backward,
     (checks.TRAIN_SCHEDULER_EARLY,)),
    ("06_transformer", "ej11_entrenamiento", "train_copy_task",
     train_zero_grad_after_step_before_backward, (checks.TRAIN_ZERO_GRAD_LATE,)),
    ("06_transformer", "ej7_perdida", "label_smoothed_cross_entropy", smoothing_over_other_classes,
     ("ε", "las V")),
]  # fmt: skip


@pytest.fixture(scope="module")
def measured(solutions, request):
    yield solutions
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled():
        if COUNTS["total"]:
            print(
                f"\nerrores escritos desde los cuadernos: {COUNTS['total']} · la visible detecta"
                f" {COUNTS['caught']} y nombra la causa en {COUNTS['named']}"
            )


@pytest.mark.parametrize(
    ("lab_id", "exercise", "replaces", "mutant", "accepted"),
    CASES,
    ids=[f"{case[0]}-{case[3].__name__}" for case in CASES],
)
def test_a_mistake_written_from_the_notebook_is_caught_without_a_wrong_cause(
    measured, lab_id, exercise, replaces, mutant, accepted
):
    solution = measured(lab_id)
    with solution.substituted(replaces, mutant):
        try:
            solution.test(f"{exercise}_prueba")
        except Exception as error:  # noqa: BLE001 (cualquier fallo cuenta como detectado)
            failure = error
        else:
            failure = None
    text = str(failure) if failure is not None else ""
    COUNTS["total"] += 1
    COUNTS["caught"] += failure is not None
    COUNTS["named"] += any(fragment in text for fragment in accepted)
    assert failure is not None, "la prueba visible no lo detecta"
    others = {m.message for m in mistakes.catalogue(lab_id)}
    wrong = [m for m in others if m in text and not any(a in m for a in accepted)]
    assert not wrong, f"nombra una causa que no es la suya: {text}"
