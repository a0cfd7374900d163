"""Pruebas de ``course.reference.translation`` con un corpus de juguete y modelos diminutos."""

import math

import pytest
import sacrebleu
import torch
import torch.nn.functional as F

from course.reference import translation
from course.reference.model import Transformer
from course.reference.training import make_optimizer
from course.translation import data
from course.translation.config import ModelConfig
from course.translation.decoding import translate_with_attention


@pytest.fixture(scope="module")
def tokenizer():
    pairs = data.toy_pairs(300, seed=0)
    return data.train_tokenizer([t for p in pairs for t in p], vocab_size=200)


def tiny_model(tokenizer, seed=0, dropout=0.0):
    torch.manual_seed(seed)
    V = tokenizer.vocab_size
    config = ModelConfig(
        V,
        V,
        d_model=32,
        num_heads=4,
        num_encoder_layers=1,
        num_decoder_layers=1,
        d_ff=64,
        dropout=dropout,
        max_len=64,
    )
    return Transformer(config)


def toy_batches(tokenizer, n=64, seed=1, max_tokens=400):
    dataset = data.PairDataset(data.toy_pairs(n, seed=seed), tokenizer)
    return list(data.make_loader(dataset, max_tokens=max_tokens, shuffle=False))


def test_batch_masks_shapes_and_values():
    src = torch.tensor([[5, 6, 7], [5, 6, 0]])
    tgt_in = torch.tensor([[1, 4, 4, 4], [1, 4, 0, 0]])
    src_mask, tgt_mask = translation.batch_masks(src, tgt_in, 0)
    assert src_mask.shape == (2, 1, 3) and src_mask.dtype == torch.bool
    assert tgt_mask.shape == (2, 4, 4) and tgt_mask.dtype == torch.bool
    assert src_mask[1, 0].tolist() == [True, True, False]
    assert tgt_mask[0].equal(torch.ones(4, 4, dtype=torch.bool).tril())
    assert tgt_mask[1, 3].tolist() == [True, True, False, False]


def test_train_step_lowers_loss_and_matches_manual(tokenizer):
    batches = toy_batches(tokenizer)
    model = tiny_model(tokenizer)
    optimizer = make_optimizer(model, lr=3e-3)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    before = translation.evaluate(model, batches, data.PAD_IDX)[0]
    src, tgt_in, tgt_out = batches[0]
    with torch.no_grad():
        expected = F.cross_entropy(
            model(src, tgt_in, *translation.batch_masks(src, tgt_in, data.PAD_IDX)).flatten(0, 1),
            tgt_out.flatten(),
            ignore_index=data.PAD_IDX,
        ).item()
    first = translation.train_step(model, batches[0], optimizer, scheduler, data.PAD_IDX, 0.0, 1.0)
    assert first == pytest.approx(expected, rel=1e-5)
    for _ in range(3):
        for batch in batches:
            loss = translation.train_step(
                model, batch, optimizer, scheduler, data.PAD_IDX, 0.1, 1.0
            )
            assert math.isfinite(loss)
    assert scheduler.last_epoch == 1 + 3 * len(batches)  # un paso del planificador por lote
    after = translation.evaluate(model, batches, data.PAD_IDX)[0]
    assert after < before - 0.5


def test_train_step_clips_gradient(tokenizer):
    batch = toy_batches(tokenizer)[0]
    model = tiny_model(tokenizer)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    translation.train_step(model, batch, optimizer, None, data.PAD_IDX, 0.0, 1e-3)
    norm = torch.linalg.vector_norm(
        torch.stack([p.grad.norm() for p in model.parameters() if p.grad is not None])
    )
    assert norm.item() == pytest.approx(1e-3, rel=1e-3)


def test_evaluate_is_token_weighted_and_restores_mode(tokenizer):
    batches = toy_batches(tokenizer, max_tokens=200)
    assert len(batches) > 1
    model = tiny_model(tokenizer, dropout=0.3)
    model.train()
    loss, ppl = translation.evaluate(model, batches, data.PAD_IDX)
    assert model.training
    model.eval()
    with torch.no_grad():
        total = count = 0
        for src, tgt_in, tgt_out in batches:
            masks = translation.batch_masks(src, tgt_in, data.PAD_IDX)
            logits = model(src, tgt_in, *masks)
            keep = tgt_out != data.PAD_IDX
            total += F.cross_entropy(logits[keep], tgt_out[keep], reduction="sum").item()
            count += keep.sum().item()
    assert loss == pytest.approx(total / count, rel=1e-5)
    assert ppl == pytest.approx(math.exp(loss), rel=1e-6)


def test_greedy_translate_batched_equals_one_by_one(tokenizer):
    model = tiny_model(tokenizer)
    sentences = [de for de, _ in data.toy_pairs(5, seed=7)]
    together = translation.greedy_translate(model, tokenizer, sentences, 20, "cpu", batch_size=3)
    alone = [translation.greedy_translate(model, tokenizer, [s], 20, "cpu")[0] for s in sentences]
    assert together == alone and all(isinstance(t, str) for t in together)
    assert not model.training


def test_translate_with_attention_shapes(tokenizer):
    model = tiny_model(tokenizer)
    src_tokens, out_tokens, weights = translate_with_attention(
        model, tokenizer, "Ein Hund läuft im Park.", 12, "cpu"
    )
    assert weights.shape == (4, len(out_tokens), len(src_tokens))
    assert torch.allclose(weights.sum(-1), torch.ones(4, len(out_tokens)), atol=1e-5)
    assert src_tokens[0] == "<bos>" and src_tokens[-1] == "<eos>"


def test_corpus_bleu():
    refs = ["A dog runs in the park.", "Two children play on the beach."]
    assert translation.corpus_bleu(refs, refs) == pytest.approx(100.0)
    hyps = ["a dog runs in a park .", "Two kids play at the beach."]
    expected = sacrebleu.corpus_bleu(hyps, [refs]).score
    assert translation.corpus_bleu(hyps, refs) == pytest.approx(expected)
    assert 0 < expected < 100
    with pytest.raises(ValueError):
        translation.corpus_bleu(hyps, refs[:1])


def test_collate_is_the_data_collate(tokenizer):
    dataset = data.PairDataset(data.toy_pairs(3, seed=2), tokenizer)
    items = [dataset[i] for i in range(3)]
    for got, want in zip(translation.collate(items, 0), data.collate(items), strict=True):
        assert got.equal(want)


def test_translate_test_set_writes_one_line_per_pair(tokenizer, tmp_path):
    model = tiny_model(tokenizer)
    pairs = data.toy_pairs(6, seed=3)
    path = tmp_path / "traducciones.txt"
    bleu = translation.translate_test_set(model, tokenizer, pairs, path, 12, "cpu")
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "" and len(lines) == 7
    expected = translation.greedy_translate(model, tokenizer, [de for de, _ in pairs], 12, "cpu")
    assert lines[:-1] == expected
    assert bleu == pytest.approx(translation.corpus_bleu(expected, [en for _, en in pairs]))
