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

Cada nombre se importa de su módulo la primera vez que se usa: buscar los archivos
(``sources``) no carga PyTorch ni ``tokenizers``, y el calificador lo hace antes de
arrancar el núcleo.
"""

import importlib

_NAMES = {
    "batching": ("Batch", "DeviceBatches", "PairDataset", "TokenBucketSampler", "collate",
                 "make_loader", "padding_ratio"),
    "corpus": ("read_split", "synthetic_corpus", "toy_pairs"),
    "sources": ("BASE_URL", "ENV_VAR", "LANGS", "MULTI30K_SHA256", "SPLITS", "DataError",
                "cache_dir", "cache_root", "locate", "shared_dir"),
    "tokenizer": ("BOS_IDX", "DEFAULT_VOCAB_SIZE", "EOS_IDX", "PAD_IDX", "SPECIAL_TOKENS",
                  "UNK_IDX", "SubwordTokenizer", "build_tokenizer", "train_tokenizer"),
}  # fmt: skip
_HOME = {name: module for module, names in _NAMES.items() for name in names}
__all__ = sorted(_HOME)


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value  # la próxima vez, sin pasar por aquí
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))
