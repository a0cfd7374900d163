"""Referencia del laboratorio 3: *embeddings* y codificación posicional."""

import math

import pytest
import torch
from torch import nn

from course.reference.positional import (
    LearnedPositionalEmbedding,
    PositionalEncoding,
    TokenEmbedding,
    sinusoidal_encoding,
    sinusoidal_encoding_exp,
)
from course.student import checks, examples

SIZES = [(1, 2), (6, 4), (50, 16), (7, 5), (200, 64)]  # (T, D), incluido un D impar


def _encoding_by_hand(max_len: int, d_model: int) -> torch.Tensor:
    """La fórmula del artículo escrita con ``math``, elemento a elemento."""
    rows = []
    for pos in range(max_len):
        row = []
        for j in range(d_model):
            angle = pos / 10000 ** (2 * (j // 2) / d_model)
            row.append(math.sin(angle) if j % 2 == 0 else math.cos(angle))
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32)


@pytest.mark.parametrize(("max_len", "d_model"), SIZES)
@pytest.mark.parametrize("encoding", [sinusoidal_encoding, sinusoidal_encoding_exp])
def test_sinusoidal_encoding_matches_the_formula_by_hand(encoding, max_len, d_model):
    checks.close("codificación", encoding(max_len, d_model), _encoding_by_hand(max_len, d_model))


@pytest.mark.parametrize(("max_len", "d_model"), [*SIZES, (5000, 512)])
def test_closed_and_exponential_forms_agree(max_len, d_model):
    checks.close(
        "forma exponencial",
        sinusoidal_encoding_exp(max_len, d_model),
        sinusoidal_encoding(max_len, d_model),
    )


@pytest.mark.parametrize("encoding", [sinusoidal_encoding, sinusoidal_encoding_exp])
def test_encoding_is_accurate_at_large_positions(encoding):
    expected = torch.tensor(
        [
            [math.sin(p), math.cos(p), math.sin(p / 100), math.cos(p / 100)]
            for p in range(4990, 5000)
        ]
    )  # D = 4: frecuencias 1 y 1/10000^(2/4) = 1/100
    checks.close("posiciones 4990-4999", encoding(5000, 4)[4990:], expected)


def test_encoding_known_values():
    pe = sinusoidal_encoding(4, 6)
    checks.close("posición 0", pe[0], torch.tensor([0.0, 1.0, 0.0, 1.0, 0.0, 1.0]))
    checks.close(
        "dims 0 y 1", pe[:, :2], torch.tensor([[math.sin(p), math.cos(p)] for p in range(4)])
    )


@pytest.mark.parametrize(("max_len", "d_model"), [(50, 16), (100, 64)])
def test_each_frequency_pair_satisfies_sin2_plus_cos2_equal_one(max_len, d_model):
    pe = sinusoidal_encoding(max_len, d_model)
    squares = pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2  # (T, D/2)
    checks.close("sin² + cos²", squares, torch.ones_like(squares))


@pytest.mark.parametrize("encoding", [sinusoidal_encoding, sinusoidal_encoding_exp])
def test_encoding_values_lie_in_minus_one_one(encoding):
    pe = encoding(500, 32)
    assert pe.dtype == torch.float32
    assert pe.min() >= -1.0 and pe.max() <= 1.0


def test_token_embedding_is_scaled_by_sqrt_d_model():
    tokens = examples.tokens(vocab=10)
    module = TokenEmbedding(10, 4)
    expected = nn.functional.embedding(tokens, module.embedding.weight) * 2.0  # √4 = 2
    checks.close("embedding", module(tokens), expected)
    assert set(module.state_dict()) == {"embedding.weight"}


def test_positional_encoding_adds_the_table_and_keeps_it_out_of_state_dict():
    x = examples.randn(2, 3, 4, seed=1)
    module = PositionalEncoding(4, dropout=0.0, max_len=10)
    checks.close("salida", module(x), x + _encoding_by_hand(3, 4))
    assert "pe" in dict(module.named_buffers()) and module.state_dict() == {}


def test_positional_encoding_rejects_sequences_longer_than_max_len():
    with pytest.raises(ValueError, match="máximo"):
        PositionalEncoding(4, max_len=2)(torch.zeros(1, 3, 4))


def test_positional_encoding_applies_dropout_only_in_training():
    x = torch.ones(2, 50, 8)
    module = PositionalEncoding(8, dropout=0.5, max_len=50)
    checks.close("eval", module.eval()(x), x + _encoding_by_hand(50, 8))
    torch.manual_seed(0)
    assert (module.train()(x) == 0).any()


def test_learned_positional_embedding_adds_one_row_per_position():
    x = examples.randn(2, 3, 4, seed=2)
    module = LearnedPositionalEmbedding(4, max_len=8)
    checks.close("salida", module(x), x + module.embedding.weight[:3])
    assert set(module.state_dict()) == {"embedding.weight"}
    assert module.embedding.weight.shape == (8, 4)
