"""Las relaciones de ``checks`` entre la salida del estudiante y la esperada.

Cada una se comprueba en los tres sentidos: nombra el error para el que existe (escrito
aquí como lo escribiría un estudiante, no copiado de un catálogo), no dice nada cuando la
salida es la esperada (o lo es salvo la tolerancia) y no aparece con salidas al azar.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from course.student import checks

NEW = [
    checks.MASK_NUMBERS,
    checks.DIAGONAL,
    checks.SUMS_ELSEWHERE,
    checks.PRECISION,
    checks.DROPOUT,
    checks.SOME_POSITIONS,
    checks.FUTURE,
    checks.SHIFTED,
    checks.BROADCAST,
    checks.ONE_MINUS,
    checks.NEGATED,
    checks.OFFSET,
    checks.ROW_OFFSET,
    checks.SQUARED,
    checks.COLUMNS,
    checks.REARRANGED,
    checks.PERCENT,
]


def _angles(positions: int, size: int, dtype: torch.dtype) -> torch.Tensor:
    """Ángulos ``pos / 10000^(2i/D)`` de la codificación posicional, ``(T, D/2)``."""
    position = torch.arange(positions, dtype=dtype)[:, None]
    rate = torch.exp(-math.log(10000.0) * torch.arange(0, size, 2, dtype=dtype) / size)
    return position * rate


def _interleaved(angles: torch.Tensor) -> torch.Tensor:
    """``(T, D)``: seno en las columnas pares y coseno en las impares."""
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2)


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _examples() -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    """``(relación, salida con el error, salida esperada)``."""
    g = _generator(0)
    x = torch.randn(4, 6, generator=g)
    probs = torch.rand(3, 5, generator=g)
    tokens = torch.randperm(40, generator=g)[:14].reshape(2, 7) + 3
    table = torch.randn(10, 4, generator=g)
    with_pad = torch.tensor([4, 5, 6, 0, 7, 8, 0, 9])
    no_pad_embedding = F.embedding(with_pad, table)
    pad_row_zero = torch.cat([torch.zeros(1, 4), table[1:]])  # nn.Embedding(padding_idx=0)
    heads = torch.randn(2, 3, 4, 5, generator=g)  # (B, h, T, d_k)
    sentences = torch.randn(3, 4, 5, generator=g)
    encoding = _interleaved(_angles(2000, 8, torch.float64))
    causal = torch.ones(5, 5).tril().bool()
    logits = torch.randn(2, 3, 4, generator=g)
    q, k, v = (torch.randn(2, 4, 3, generator=g) for _ in range(3))
    scores = q @ k.transpose(-2, -1)
    future = torch.ones(4, 4).triu(1).bool()
    return [
        (checks.FUTURE, scores.softmax(-1) @ v, scores.masked_fill(future, -math.inf).softmax(-1) @ v),
        (checks.DROPOUT, x, x * (torch.rand(4, 6, generator=g) > 0.3) / 0.7),  # falta
        (checks.MASK_NUMBERS, torch.ones(5, 5).tril(), causal),
        (checks.DIAGONAL, torch.ones(5, 5).tril(-1).bool(), causal),
        (checks.DIAGONAL, torch.ones(2, 5, 5).tril(1).bool(), causal.expand(2, 5, 5)),
        (checks.SUMS_ELSEWHERE, logits.softmax(dim=1), logits.softmax(dim=-1)),
        (checks.SUMS_ELSEWHERE, logits.exp() / logits.exp().sum(), logits.softmax(dim=-1)),
        (checks.PRECISION, _interleaved(_angles(2000, 8, torch.float32)).double(), encoding),
        (checks.PRECISION, _interleaved(_angles(2000, 8, torch.float32).double()), encoding),
        (checks.DROPOUT, x * (torch.rand(4, 6, generator=g) > 0.3) / 0.7, x),  # F.dropout
        (checks.DROPOUT, x * (torch.rand(4, 6, generator=g) > 0.25), x),
        (checks.SOME_POSITIONS, F.embedding(with_pad, pad_row_zero), no_pad_embedding),
        (checks.SHIFTED, tokens[:, :-1], tokens[:, 1:]),
        (checks.SHIFTED, _interleaved(_angles(2001, 8, torch.float64))[1:], encoding),
        (checks.BROADCAST, sentences[:1].expand(3, 4, 5), sentences),
        (checks.BROADCAST, sentences[:, :1].expand(3, 4, 5), sentences),
        (checks.ONE_MINUS, 1.0 - probs, probs),
        (checks.NEGATED, -x, x),
        (checks.OFFSET, x + 0.5, x),
        (checks.ROW_OFFSET, x, F.log_softmax(x, dim=-1)),
        (checks.ROW_OFFSET, x / x.std(-1, keepdim=True), (x - x.mean(-1, keepdim=True)) / x.std(-1, keepdim=True)),
        (checks.SQUARED, x.var(-1), x.std(-1)),
        (checks.SQUARED, x.var(-1).sqrt().sqrt(), x.var(-1).sqrt()),
        (checks.COLUMNS, torch.cat([_angles(2000, 8, torch.float64).sin(), _angles(2000, 8, torch.float64).cos()], -1), encoding),
        (checks.PERCENT, torch.tensor(0.4127), torch.tensor(41.27)),  # BLEU en tanto por uno
        (checks.PERCENT, x * 100.0, x),
        (checks.REARRANGED, heads.reshape(2, 4, 15), heads.transpose(1, 2).reshape(2, 4, 15)),
    ]  # fmt: skip


def _message(actual: torch.Tensor, expected: torch.Tensor) -> str:
    with pytest.raises(AssertionError) as error:
        checks.close("relación", actual, expected)
    return str(error.value)


@pytest.mark.parametrize(("message", "actual", "expected"), _examples())
def test_each_relation_names_the_mistake_it_is_meant_for(message, actual, expected):
    assert _message(actual, expected).endswith(message)


def test_every_new_relation_has_an_example_and_a_message_without_values():
    assert {message for message, _, _ in _examples()} == set(NEW)
    for message in NEW:
        assert message in checks.RELATIONS
        words = message.replace("float32", "").replace("float64", "")  # nombres, no valores
        assert not any(c.isdigit() for c in words) and message.count("¿") == 1


@pytest.mark.parametrize(("message", "actual", "expected"), _examples())
def test_no_relation_when_the_output_is_right_or_within_tolerance(message, actual, expected):
    checks.close("relación", expected.clone(), expected)
    assert checks._related({"actual": expected.clone(), "expected": expected}) is None
    if expected.is_floating_point():
        nudged = expected * (1.0 + 1e-12)  # el redondeo de otro orden de operaciones
        assert checks._related({"actual": nudged, "expected": expected}) is None


@pytest.mark.parametrize("shape", [(), (7,), (3, 4), (4, 4), (2, 3, 4), (2, 2, 3, 4)])
@pytest.mark.parametrize("kind", ["normal", "uniform", "integer", "double", "bool"])
def test_random_wrong_outputs_get_no_relation(shape, kind):
    for seed in range(40):
        g = _generator(seed)
        if kind == "bool":
            actual, expected = (torch.rand(shape, generator=g) > 0.5 for _ in range(2))
        elif kind == "integer":
            actual, expected = (torch.randint(0, 50, shape, generator=g) for _ in range(2))
        elif kind == "uniform":
            actual, expected = (torch.rand(shape, generator=g) for _ in range(2))
        else:
            dtype = torch.float64 if kind == "double" else torch.float32
            actual, expected = (torch.randn(shape, generator=g, dtype=dtype) for _ in range(2))
        if torch.equal(actual, expected):
            continue  # (con un solo número entero o booleano, a veces aciertan)
        text = _message(actual, expected)
        assert not any(relation in text for relation in checks.RELATIONS), (seed, text)
