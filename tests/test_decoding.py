"""Decodificación incremental (caché de claves y valores) y búsqueda en haz exacta en miniatura."""

import itertools

import pytest
import torch

from course.reference.attention import causal_mask
from course.reference.model import Transformer, make_src_mask, use_fused_kernels
from course.translation import incremental
from course.translation.config import ModelConfig
from course.translation.decoding import beam_search, gnmt_length_penalty

BOS, EOS, PAD = 1, 2, 0


def _model(norm_first: bool, vocab: int = 40, seed: int = 0, tie: bool = True) -> Transformer:
    torch.manual_seed(seed)
    config = ModelConfig(vocab, vocab, d_model=32, num_heads=4, num_encoder_layers=2,
                         num_decoder_layers=3, d_ff=64, dropout=0.1,
                         norm_first=norm_first, tie_weights=tie)  # fmt: skip
    return Transformer(config).eval()


def _sources(vocab: int = 40):
    src = torch.randint(3, vocab, (4, 9), generator=torch.Generator().manual_seed(1))
    src[1, 5:] = PAD
    src[3, 2:] = PAD
    return src, make_src_mask(src, PAD)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_each_cached_step_matches_decoding_the_whole_prefix(norm_first):
    model, (src, mask) = _model(norm_first), _sources()
    tgt = torch.randint(3, 40, (4, 8), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        memory = model.encode(src, mask)
        full, _ = model.decode(memory, mask, tgt, causal_mask(8))  # (B, T, D)
        cache = incremental.start(model, memory, mask)
        steps = [incremental.step(model, cache, tgt[:, t], t) for t in range(8)]
    torch.testing.assert_close(torch.stack(steps, dim=1), full, atol=1e-5, rtol=1e-5)
    assert cache.self_k[0].shape == (4, 4, 8, 8)


def test_reorder_moves_each_hypothesis_history_with_it():
    """Como en el haz: varias hipótesis de la misma frase; unas se repiten y otras se pierden."""
    model, (src, mask) = _model(True), _sources()
    memory = model.encode(src[:1], mask[:1]).expand(4, -1, -1)  # (4, S, D), una sola frase
    memory_mask = mask[:1].expand(4, -1, -1)  # (4, 1, S)
    tgt = torch.randint(3, 40, (4, 5), generator=torch.Generator().manual_seed(3))
    rows = torch.tensor([2, 2, 0, 1])
    with torch.no_grad():
        cache = incremental.start(model, memory, memory_mask)
        for t in range(4):
            incremental.step(model, cache, tgt[:, t], t)
        cache.reorder(rows)
        got = incremental.step(model, cache, tgt[rows, 4], 4)  # (4, D)
        want, _ = model.decode(memory, memory_mask, tgt[rows], causal_mask(5))  # (4, 5, D)
    torch.testing.assert_close(got, want[:, -1], atol=1e-5, rtol=1e-5)


def test_fused_kernels_do_not_change_the_cached_steps():
    model, (src, mask) = _model(True), _sources()
    with torch.no_grad():
        plain = beam_search(model, src, mask, 3, 10, BOS, EOS, PAD)
        fused = beam_search(use_fused_kernels(model), src, mask, 3, 10, BOS, EOS, PAD)
    assert torch.equal(plain, fused)


def _brute_force(model, src, mask, max_len, alpha):
    """La mejor salida según la puntuación del haz, enumerando todas las secuencias posibles."""
    V = model.config.tgt_vocab_size
    best, best_score = None, float("-inf")
    for body in itertools.product(range(V), repeat=max_len - 1):
        if EOS in body:
            end = body.index(EOS)
            if any(t != PAD for t in body[end + 1 :]):
                continue  # tras <eos> solo hay relleno
            scored = end + 1
        else:
            scored = max_len - 1
        ys = torch.tensor([[BOS, *body]])
        with torch.no_grad():
            memory = model.encode(src, mask)
            out, _ = model.decode(memory, mask, ys[:, :-1], causal_mask(max_len - 1))
            log_probs = model.generator(out).log_softmax(-1)[0]  # (T, V)
        total = sum(log_probs[t, body[t]].item() for t in range(scored))
        length = torch.tensor([end if EOS in body else max_len - 1])
        score = total / gnmt_length_penalty(length, alpha).item()
        if score > best_score:
            best, best_score = ys, score
    return best


@pytest.mark.parametrize("seed", range(4))
def test_a_beam_wide_enough_finds_the_exact_best_sequence(seed):
    """Con K >= V^(T-1) el haz no poda nada: debe devolver el óptimo de la búsqueda exhaustiva."""
    V, max_len, alpha = 4, 5, 1.0
    model = _model(True, vocab=V, seed=seed, tie=False)
    model.generator.bias.data[EOS] += seed - 1.5  # unas semillas terminan pronto, otras tarde
    src = torch.tensor([[3, 2, 3, 3]])
    mask = make_src_mask(src, PAD)
    beam = beam_search(model, src, mask, V ** (max_len - 1), max_len, BOS, EOS, PAD, alpha)
    want = _brute_force(model, src, mask, max_len, alpha)
    got = beam[:, : want.size(1)]
    assert torch.equal(got, want), (got, want)
    assert (beam[:, want.size(1) :] == PAD).all()


def test_cached_decoding_keeps_the_autocast_dtype():
    """Bajo autocast (bfloat16 en CUDA; aquí en CPU) la caché guarda el tipo reducido."""
    model, (src, mask) = _model(True), _sources()
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        memory = model.encode(src, mask)
        cache = incremental.start(model, memory, mask)
        out = incremental.step(model, cache, torch.full((4,), BOS), 0)
        ys = beam_search(model, src, mask, 3, 10, BOS, EOS, PAD)
    assert cache.self_k[0].dtype == cache.cross_k[0].dtype == torch.bfloat16
    assert out.shape == (4, 32) and torch.isfinite(out.float()).all()
    assert ys.shape[0] == 4 and (ys[:, 0] == BOS).all()
