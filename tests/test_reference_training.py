"""Referencia del laboratorio 6: pérdida, optimizador, planificadores y tarea de copia."""

import math

import pytest
import torch
from torch import nn

from course.reference.model import Transformer, greedy_decode, make_src_mask
from course.reference.training import (
    BOS_IDX,
    EOS_IDX,
    PAD_IDX,
    copy_task_batch,
    cosine_warmup_factor,
    cosine_warmup_lambda,
    label_smoothed_cross_entropy,
    make_optimizer,
    noam_factor,
    noam_lambda,
    train_copy_task,
)
from course.student import checks, examples
from course.translation.config import ModelConfig


def _logits_and_target(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    logits = examples.randn(2, 5, 7, seed=seed) * 3
    target = torch.randint(1, 7, (2, 5), generator=torch.Generator().manual_seed(seed))
    target[1, 3:] = PAD_IDX  # relleno al final de la segunda frase
    return logits, target


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.3])
def test_label_smoothed_loss_matches_torch_cross_entropy(smoothing):
    logits, target = _logits_and_target(seed=int(smoothing * 10))
    logits.requires_grad_()
    loss = label_smoothed_cross_entropy(logits, target, smoothing, ignore_index=PAD_IDX)
    criterion = nn.CrossEntropyLoss(label_smoothing=smoothing, ignore_index=PAD_IDX)
    expected = criterion(logits.reshape(-1, 7), target.reshape(-1))
    checks.close("pérdida", loss, expected)
    (grad,) = torch.autograd.grad(loss, logits)
    (expected_grad,) = torch.autograd.grad(expected, logits)
    checks.close("gradiente", grad, expected_grad)


def test_label_smoothed_loss_ignores_padding_positions():
    logits, target = _logits_and_target(seed=4)
    edited = logits.clone()
    edited[1, 3:] += 50.0  # cambiar los logits del relleno no cambia la pérdida
    loss = label_smoothed_cross_entropy(logits, target, 0.1, ignore_index=PAD_IDX)
    checks.close("pérdida", label_smoothed_cross_entropy(edited, target, 0.1, PAD_IDX), loss)


def test_label_smoothed_loss_default_ignore_index_is_torch_default():
    logits, target = _logits_and_target(seed=5)
    target[0, 0] = -100
    expected = nn.CrossEntropyLoss(label_smoothing=0.2)(logits.reshape(-1, 7), target.reshape(-1))
    checks.close("pérdida", label_smoothed_cross_entropy(logits, target, 0.2), expected)


def test_optimizer_is_adamw_with_paper_betas_and_eps():
    model = nn.Linear(3, 2)
    optimizer = make_optimizer(model, lr=0.5)
    assert isinstance(optimizer, torch.optim.AdamW)
    group = optimizer.param_groups[0]
    assert group["betas"] == (0.9, 0.98) and group["eps"] == 1e-9
    assert group["lr"] == 0.5 and group["weight_decay"] == 0.0


@pytest.mark.parametrize(("d_model", "warmup"), [(512, 4000), (32, 10)])
def test_noam_peaks_at_warmup_and_decays_monotonically(d_model, warmup):
    factors = [noam_factor(step, d_model, warmup) for step in range(1, 3 * warmup + 1)]
    assert max(range(len(factors)), key=factors.__getitem__) + 1 == warmup
    assert all(a < b for a, b in zip(factors[: warmup - 1], factors[1:warmup], strict=True))
    assert all(a > b for a, b in zip(factors[warmup - 1 : -1], factors[warmup:], strict=True))
    assert math.isclose(factors[warmup - 1], 1 / math.sqrt(d_model * warmup))
    assert math.isclose(factors[0], 1 / (math.sqrt(d_model) * warmup**1.5))


def test_cosine_warmup_rises_linearly_then_decays_to_zero():
    warmup, total = 10, 110
    factors = [cosine_warmup_factor(step, warmup, total) for step in range(1, total + 1)]
    assert factors[:warmup] == pytest.approx([s / warmup for s in range(1, warmup + 1)])
    assert max(factors) == factors[warmup - 1] == 1.0
    assert all(a > b for a, b in zip(factors[warmup - 1 : -1], factors[warmup:], strict=True))
    assert factors[warmup - 1 + 50] == pytest.approx(0.5)  # mitad de la caída: cos(π/2)
    assert factors[-1] == pytest.approx(0.0, abs=1e-12)
    assert cosine_warmup_factor(total + 5, warmup, total) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("factor", [noam_factor, cosine_warmup_factor])
def test_schedules_reject_step_zero(factor):
    with pytest.raises(ValueError, match="desde 1"):
        factor(0, 16, 4)


def test_lambdas_drive_lambda_lr_from_step_one():
    model = nn.Linear(2, 2)
    for lam, expected in [
        (noam_lambda(16, 4), lambda n: 16**-0.5 * min(n**-0.5, n * 4**-1.5)),
        (
            cosine_warmup_lambda(4, 20),
            lambda n: min(n / 4, 0.5 * (1 + math.cos(math.pi * (n - 4) / 16))),
        ),
    ]:
        optimizer = make_optimizer(model, lr=1.0)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lam)
        for n in range(1, 12):  # la actualización n usa el factor del paso n
            assert optimizer.param_groups[0]["lr"] == pytest.approx(expected(n))
            optimizer.step()
            scheduler.step()


def test_copy_task_batch_wraps_source_between_bos_and_eos():
    src, tgt = copy_task_batch(4, 6, 10, torch.Generator().manual_seed(0))
    checks.shape("src", src, (4, 6), "(B, T)")
    checks.shape("tgt", tgt, (4, 8), "(B, T + 2)")
    assert (tgt[:, 0] == BOS_IDX).all() and (tgt[:, -1] == EOS_IDX).all()
    assert torch.equal(tgt[:, 1:-1], src)
    assert src.min() >= 3 and src.max() < 10
    again, _ = copy_task_batch(4, 6, 10, torch.Generator().manual_seed(0))
    assert torch.equal(again, src)


@pytest.fixture
def one_thread():
    """Un solo hilo: con tensores diminutos, dos hilos solo añaden esperas (y con la CPU
    compartida, muchas)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_greedy_decode_reproduces_input_after_short_copy_training(one_thread):
    vocab, seq_len = 10, 5
    config = ModelConfig(
        vocab, vocab, d_model=32, num_heads=2, num_encoder_layers=1, num_decoder_layers=1,
        d_ff=64, dropout=0.0, pad_idx=PAD_IDX, max_len=16,
    )  # fmt: skip
    torch.manual_seed(0)
    model = Transformer(config)
    losses = train_copy_task(model, 250, 64, seq_len, 1e-2, torch.Generator().manual_seed(0))
    assert losses[-1] < 0.1 * losses[0]
    model.eval()
    src, tgt = copy_task_batch(16, seq_len, vocab, torch.Generator().manual_seed(123))
    out = greedy_decode(model, src, make_src_mask(src, PAD_IDX), seq_len + 2, BOS_IDX, EOS_IDX)
    checks.close("copia", out, tgt)
