"""Datos del laboratorio 7: Multi30k alemán→inglés.

Flujo habitual::

    from course.translation import data

    tokenizer = data.build_tokenizer()                   # entrena (~2 s) o lee la caché
    train = data.PairDataset(data.read_split("train"), tokenizer)
    loader = data.make_loader(train, max_tokens=4096)
    for epoch in range(num_epochs):
        loader.batch_sampler.set_epoch(epoch)
        for src, tgt_in, tgt_out in loader:              # (B, T_src), (B, T), (B, T)
            ...

Módulos: ``sources`` (buscar y verificar los archivos), ``corpus`` (leer pares y el
corpus de juguete), ``tokenizer`` (BPE conjunto) y ``batching`` (lotes por cubetas).
"""

from course.translation.data.batching import (
    Batch,
    PairDataset,
    TokenBucketSampler,
    collate,
    make_loader,
    padding_ratio,
)
from course.translation.data.corpus import read_split, synthetic_corpus, toy_pairs
from course.translation.data.sources import (
    BASE_URL,
    ENV_VAR,
    LANGS,
    MULTI30K_SHA256,
    SPLITS,
    DataError,
    cache_dir,
    cache_root,
    locate,
    shared_dir,
)
from course.translation.data.tokenizer import (
    BOS_IDX,
    DEFAULT_VOCAB_SIZE,
    EOS_IDX,
    PAD_IDX,
    SPECIAL_TOKENS,
    UNK_IDX,
    SubwordTokenizer,
    build_tokenizer,
    train_tokenizer,
)

__all__ = [
    "BASE_URL",
    "BOS_IDX",
    "DEFAULT_VOCAB_SIZE",
    "ENV_VAR",
    "EOS_IDX",
    "LANGS",
    "MULTI30K_SHA256",
    "PAD_IDX",
    "SPECIAL_TOKENS",
    "SPLITS",
    "UNK_IDX",
    "Batch",
    "DataError",
    "PairDataset",
    "SubwordTokenizer",
    "TokenBucketSampler",
    "build_tokenizer",
    "cache_dir",
    "cache_root",
    "collate",
    "locate",
    "make_loader",
    "padding_ratio",
    "read_split",
    "shared_dir",
    "synthetic_corpus",
    "toy_pairs",
    "train_tokenizer",
]
