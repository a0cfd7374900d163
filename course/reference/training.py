"""Laboratorio 6: entrenamiento (Vaswani et al., 2017, §5.3-5.4).

Entropía cruzada con suavizado de etiquetas, AdamW con los β y ε del artículo, los
factores de tasa de aprendizaje (Noam y coseno con calentamiento) para
``torch.optim.lr_scheduler.LambdaLR``, y la tarea de copia que un Transformer pequeño
aprende en segundos en CPU.

Convención de pasos: el paso ``step`` cuenta las actualizaciones desde 1. ``LambdaLR``
llama a su función con 0, 1, 2...; las funciones ``*_lambda`` suman 1, de modo que la
actualización número ``n`` usa el factor del paso ``n`` y nunca se evalúa el paso 0.
"""

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn

from course.reference.model import Transformer, make_src_mask, make_tgt_mask

PAD_IDX, BOS_IDX, EOS_IDX = 0, 1, 2  # tokens especiales de la tarea de copia
NUM_SPECIAL = 3  # los símbolos que se copian son 3, 4, ..., V - 1


def label_smoothed_cross_entropy(
    logits: Tensor, target: Tensor, smoothing: float = 0.0, ignore_index: int = -100
) -> Tensor:
    """Entropía cruzada con suavizado de etiquetas (Szegedy et al., 2016; §5.4), a mano.

    .. math::
        \\mathcal{L} = (1 - \\varepsilon)(-\\log p_y) + \\frac{\\varepsilon}{V} \\sum_c (-\\log p_c)

    Media sobre las posiciones cuyo objetivo no es ``ignore_index``. Coincide con
    ``nn.CrossEntropyLoss(label_smoothing=ε, ignore_index=...)``, que reparte ε entre las V
    clases, incluidas la correcta y la de relleno (*The Annotated Transformer* reparte
    ε / (V - 2) sin ellas, y su pérdida no coincide con esta).

    Args:
        logits: puntuaciones sin normalizar.
        target: índice de la clase correcta en cada posición.
        smoothing: ε en [0, 1).
        ignore_index: valor de ``target`` que no cuenta (el relleno).

    Forma:
        logits (..., V); target (...), int64 -> escalar
    """
    V = logits.size(-1)
    log_probs = logits.reshape(-1, V).log_softmax(dim=-1)  # (N, V)
    target = target.reshape(-1)  # (N,)
    keep = target != ignore_index  # (N,)
    safe_target = target.masked_fill(~keep, 0).unsqueeze(1)  # (N, 1), índice válido en gather
    nll = -log_probs.gather(1, safe_target).squeeze(1)  # (N,)
    uniform = -log_probs.mean(dim=-1)  # (N,)
    loss = (1.0 - smoothing) * nll + smoothing * uniform  # (N,)
    return (loss * keep).sum() / keep.sum()


def make_optimizer(model: nn.Module, lr: float, weight_decay: float = 0.0) -> torch.optim.AdamW:
    """AdamW con β = (0.9, 0.98) y ε = 1e-9 (§5.3).

    Con ``weight_decay=0`` es el Adam del artículo. Para el esquema Noam usa ``lr=1``:
    el factor de :func:`noam_factor` ya es la tasa de aprendizaje.
    """
    return torch.optim.AdamW(
        model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9, weight_decay=weight_decay
    )


def noam_factor(step: int, d_model: int, warmup: int) -> float:
    """Tasa de aprendizaje del artículo (§5.3), «Noam» o raíz inversa con calentamiento.

    .. math::
        D^{-0.5} \\cdot \\min(step^{-0.5},\\; step \\cdot warmup^{-1.5})

    Crece linealmente hasta ``step = warmup`` (el máximo) y después decae como 1/√step.

    Args:
        step: número de actualización, desde 1.
        d_model: dimensión D.
        warmup: pasos de calentamiento (4000 en el artículo).
    """
    if step < 1:
        raise ValueError(f"los pasos se cuentan desde 1; se recibió step={step}")
    return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def cosine_warmup_factor(step: int, warmup: int, total_steps: int) -> float:
    """Calentamiento lineal hasta 1 en ``step = warmup`` y caída en coseno hasta 0.

    Multiplica la tasa base del optimizador, que es la tasa máxima.

    Args:
        step: número de actualización, desde 1.
        warmup: pasos de calentamiento.
        total_steps: paso en que el factor llega a 0 (y se queda en 0).
    """
    if step < 1:
        raise ValueError(f"los pasos se cuentan desde 1; se recibió step={step}")
    if step <= warmup:
        return step / warmup
    progress = min(1.0, (step - warmup) / max(1, total_steps - warmup))
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def noam_lambda(d_model: int, warmup: int) -> Callable[[int], float]:
    """:func:`noam_factor` para ``LambdaLR`` (que empieza a contar en 0)."""
    return lambda epoch: noam_factor(epoch + 1, d_model, warmup)


def cosine_warmup_lambda(warmup: int, total_steps: int) -> Callable[[int], float]:
    """:func:`cosine_warmup_factor` para ``LambdaLR`` (que empieza a contar en 0)."""
    return lambda epoch: cosine_warmup_factor(epoch + 1, warmup, total_steps)


def copy_task_batch(
    batch_size: int, seq_len: int, vocab_size: int, generator: torch.Generator
) -> tuple[Tensor, Tensor]:
    """Un lote de la tarea de copia: el destino repite el origen entre BOS y EOS.

    Args:
        batch_size: número de secuencias B.
        seq_len: símbolos por secuencia de origen T.
        vocab_size: V; los símbolos se toman de [3, V), fuera de PAD, BOS y EOS.
        generator: ``torch.Generator`` con semilla, para que el lote sea reproducible.

    Forma:
        devuelve src (B, T) y tgt (B, T + 2) = [BOS, src..., EOS], int64
    """
    src = torch.randint(NUM_SPECIAL, vocab_size, (batch_size, seq_len), generator=generator)
    bos = torch.full((batch_size, 1), BOS_IDX)  # (B, 1)
    eos = torch.full((batch_size, 1), EOS_IDX)  # (B, 1)
    return src, torch.cat([bos, src, eos], dim=1)  # (B, T), (B, T + 2)


def train_copy_task(
    model: Transformer,
    steps: int,
    batch_size: int,
    seq_len: int,
    lr: float,
    generator: torch.Generator,
) -> list[float]:
    """Entrena ``model`` en la tarea de copia con forzado del profesor; devuelve las pérdidas.

    El decodificador recibe ``tgt[:, :-1]`` y predice ``tgt[:, 1:]``. La tasa sigue
    :func:`cosine_warmup_factor` con un 10 % de calentamiento; el modelo queda en modo
    entrenamiento.

    Args:
        model: Transformer con ``src_vocab_size = tgt_vocab_size`` y ``pad_idx = PAD_IDX``.
        steps: número de actualizaciones.
        batch_size, seq_len: forma de cada lote de origen (B, T).
        lr: tasa de aprendizaje máxima.
        generator: ``torch.Generator`` con semilla para los lotes.
    """
    model.train()
    optimizer = make_optimizer(model, lr)
    warmup = max(1, steps // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, cosine_warmup_lambda(warmup, steps))
    vocab_size = model.generator.out_features
    losses = []
    for _ in range(steps):
        src, tgt = copy_task_batch(batch_size, seq_len, vocab_size, generator)
        tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]  # (B, T + 1) cada uno
        logits = model(src, tgt_in, make_src_mask(src, PAD_IDX), make_tgt_mask(tgt_in, PAD_IDX))
        loss = label_smoothed_cross_entropy(logits, tgt_out, ignore_index=PAD_IDX)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return losses
