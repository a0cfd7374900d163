"""Entradas de ejemplo con semilla, compartidas por los cuadernos y las pruebas.

Todas las funciones crean sus tensores con un ``torch.Generator`` propio, así que no
dependen del estado global ni del orden de ejecución: la cifra que imprime un cuaderno
es la cifra que comprueban las pruebas.

Convenciones: lote de 2 secuencias de 3 *tokens*; la segunda secuencia lleva relleno
(``PAD_IDX``) en su última posición; ``d_model`` pequeño (2 o 4).
"""

import functools

import torch
from torch import Tensor

PAD_IDX = 0
BATCH, SEQ, D_MODEL = 2, 3, 4
SEED = 0


def randn(*shape: int, seed: int = SEED) -> Tensor:
    """Tensor normal estándar ``float32`` con la forma dada y su propia semilla."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator)


def qkv(
    batch: int = BATCH,
    seq_q: int = SEQ,
    seq_k: int | None = None,
    d_k: int = D_MODEL,
    seed: int = SEED,
) -> tuple[Tensor, Tensor, Tensor]:
    """Consultas, claves y valores aleatorios.

    Forma:
        devuelve query (B, T_q, d_k), key (B, T_k, d_k), value (B, T_k, d_k)
    """
    seq_k = seq_q if seq_k is None else seq_k
    query = randn(batch, seq_q, d_k, seed=seed)
    key = randn(batch, seq_k, d_k, seed=seed + 1)
    value = randn(batch, seq_k, d_k, seed=seed + 2)
    return query, key, value


def tokens(batch: int = BATCH, seq: int = SEQ, vocab: int = 10, seed: int = SEED) -> Tensor:
    """Identificadores de *tokens* en ``[1, vocab)``; la última secuencia acaba en relleno.

    Forma:
        devuelve (B, T), ``int64``; ``tokens[-1, -1] == PAD_IDX``.
    """
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, vocab, (batch, seq), generator=generator)
    ids[-1, -1] = PAD_IDX
    return ids


def toy_qkv() -> tuple[Tensor, Tensor, Tensor]:
    """Ejemplo de juguete para hacer a mano: 4 *tokens* con vectores de 3 componentes.

    Los valores son enteros pequeños, de modo que ``Q Kᵀ`` se calcula de cabeza.

    Forma:
        devuelve query, key, value, cada uno (4, 3)
    """
    query = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    key = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0], [1.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
    value = torch.tensor([[1.0, 2.0, 0.0], [0.0, 1.0, 3.0], [2.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
    return query, key, value


# Laboratorio 7: corpus de juguete, tokenizador y Transformer diminuto (sin datos reales).
TOY_VOCAB = 200  # vocabulario BPE del corpus de juguete


@functools.lru_cache(maxsize=4)
def toy_tokenizer(n: int = 300, vocab_size: int = TOY_VOCAB, seed: int = SEED):
    """Tokenizador BPE entrenado con ``n`` pares de ``course.translation.data.toy_pairs`` (se guarda en memoria).

    Devuelve un ``course.translation.data.SubwordTokenizer`` (relleno 0, ``<bos>`` 1, ``<eos>`` 2).
    """
    from course.translation import data

    pairs = data.toy_pairs(n, seed=seed)
    return data.train_tokenizer([text for pair in pairs for text in pair], vocab_size)


def tiny_transformer(
    vocab_size: int,
    seed: int = SEED,
    dropout: float = 0.0,
    d_model: int = 32,
    num_heads: int = 4,
    num_layers: int = 1,
):
    """``course.reference.model.Transformer`` diminuto con pesos fijados por ``seed``.

    Vocabulario compartido de tamaño ``vocab_size``; ``d_ff = 2 * d_model``.
    """
    from course.reference.model import Transformer
    from course.translation.config import ModelConfig

    config = ModelConfig(
        vocab_size,
        vocab_size,
        d_model=d_model,
        num_heads=num_heads,
        num_encoder_layers=num_layers,
        num_decoder_layers=num_layers,
        d_ff=2 * d_model,
        dropout=dropout,
        max_len=128,
    )
    state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        return Transformer(config)
    finally:
        torch.random.set_rng_state(state)


def toy_batches(tokenizer, n: int = 32, seed: int = 1, max_tokens: int = 300) -> list:
    """Lotes fijos (sin barajar, por longitud) de ``n`` pares de juguete: lista de ``Batch``.

    Rellena aquí mismo en lugar de llamar a ``course.translation.data.collate``: esa función es el
    ejercicio 1 del laboratorio 7 y no está en la copia de ``course`` del núcleo calificado
    ni en la del zip, y las pruebas visibles de ese laboratorio necesitan estos lotes.
    """
    from torch.nn.utils.rnn import pad_sequence

    from course.translation import data

    dataset = data.PairDataset(data.toy_pairs(n, seed=seed), tokenizer)
    batches = []
    for indices in data.TokenBucketSampler(dataset.lengths, max_tokens, shuffle=False):
        src, tgt = zip(*(dataset[i] for i in indices), strict=True)
        src = pad_sequence(src, batch_first=True, padding_value=data.PAD_IDX)  # (B, S)
        tgt = pad_sequence(tgt, batch_first=True, padding_value=data.PAD_IDX)  # (B, T + 1)
        batches.append(data.Batch(src, tgt[:, :-1], tgt[:, 1:]))
    return batches
