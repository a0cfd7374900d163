"""Tokenizador BPE conjunto alemán+inglés, entrenado con la partición de entrenamiento.

Usa la biblioteca ``tokenizers``: normalización NFC, pretokenizador Metaspace (los
espacios se vuelven ``▁``) seguido de separación de signos de puntuación, y BPE. Como
el espacio viaja dentro de los *tokens*, ``decode`` reconstruye el texto original, con
mayúsculas y puntuación pegada, listo para sacreBLEU.
"""

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from tokenizers.trainers import BpeTrainer

from course.translation.data.corpus import read_split
from course.translation.data.sources import MULTI30K_SHA256, cache_root

PAD_IDX, BOS_IDX, EOS_IDX, UNK_IDX = 0, 1, 2, 3  # PAD_IDX = course.student.examples.PAD_IDX
SPECIAL_TOKENS = ["<pad>", "<bos>", "<eos>", "<unk>"]  # en el orden de sus identificadores
DEFAULT_VOCAB_SIZE = 8000  # vocabulario conjunto; ~16 tokens por frase en Multi30k
RECIPE_VERSION = 1  # súbelo si cambia la receta, para no reutilizar cachés antiguas


class SubwordTokenizer:
    """Envoltorio mínimo de ``tokenizers.Tokenizer`` con ``<bos>``/``<eos>`` y relleno 0.

    Args:
        tokenizer: un ``tokenizers.Tokenizer`` creado por ``train_tokenizer`` o cargado.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        for idx, token in enumerate(SPECIAL_TOKENS):
            if tokenizer.token_to_id(token) != idx:
                raise ValueError(f"El token especial {token} debe tener el identificador {idx}.")
        self.tokenizer = tokenizer

    @property
    def vocab_size(self) -> int:
        """Tamaño V del vocabulario, especiales incluidos."""
        return self.tokenizer.get_vocab_size()

    def encode(self, text: str) -> list[int]:
        """Identificadores de ``text`` con ``<bos>`` al principio y ``<eos>`` al final."""
        return self.tokenizer.encode(text).ids

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """``encode`` para muchas frases a la vez (en paralelo, más rápido)."""
        return [e.ids for e in self.tokenizer.encode_batch(list(texts))]

    def decode(self, ids: Iterable[int]) -> str:
        """Texto de ``ids``: se detiene en el primer ``<eos>`` y omite los especiales.

        Acepta una lista o un tensor 1D (T,) de enteros.
        """
        ids = [int(i) for i in ids]
        if EOS_IDX in ids:
            ids = ids[: ids.index(EOS_IDX)]
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def tokens(self, text: str) -> list[str]:
        """Los *tokens* de ``text`` como cadenas (para rotular un mapa de atención)."""
        return self.tokenizer.encode(text).tokens

    def save(self, path: str | os.PathLike) -> None:
        """Guarda el tokenizador en JSON; escritura atómica (seguro con varios procesos)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.part")
        self.tokenizer.save(str(partial))
        partial.replace(path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "SubwordTokenizer":
        """Carga un tokenizador guardado con ``save``."""
        return cls(Tokenizer.from_file(str(path)))


def train_tokenizer(texts: Iterable[str], vocab_size: int = DEFAULT_VOCAB_SIZE) -> SubwordTokenizer:
    """Entrena un BPE sobre ``texts`` (frases alemanas e inglesas mezcladas).

    Los identificadores 0–3 son ``<pad>``, ``<bos>``, ``<eos>``, ``<unk>``. Si el corpus es
    pequeño, el vocabulario puede quedar por debajo de ``vocab_size``.
    """
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Metaspace(), pre_tokenizers.Punctuation()]
    )
    tokenizer.decoder = decoders.Metaspace()
    trainer = BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, show_progress=False)
    tokenizer.train_from_iterator(texts, trainer)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<bos> $A <eos>", special_tokens=[("<bos>", BOS_IDX), ("<eos>", EOS_IDX)]
    )
    return SubwordTokenizer(tokenizer)


def tokenizer_path(vocab_size: int, sums: Mapping[str, str]) -> Path:
    """Archivo de caché del tokenizador: depende del tamaño y de los datos de entrenamiento."""
    data = "".join(sums[f"train.{lang}.gz"] for lang in ("de", "en"))
    key = hashlib.sha256(f"v{RECIPE_VERSION}:{data}".encode()).hexdigest()[:16]
    return cache_root() / "tokenizers" / f"bpe-{vocab_size}-{key}.json"


def build_tokenizer(
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    root: str | os.PathLike | None = None,
    *,
    sums: Mapping[str, str] | None = None,
) -> SubwordTokenizer:
    """Tokenizador de la partición ``train``: lo carga de la caché o lo entrena (~2 s) y lo guarda.

    Args:
        vocab_size: tamaño del vocabulario conjunto.
        root, sums: como en ``read_split``.
    """
    sums = MULTI30K_SHA256 if sums is None else sums
    path = tokenizer_path(vocab_size, sums)
    if path.is_file():
        return SubwordTokenizer.load(path)
    pairs = read_split("train", root, sums=sums)
    tokenizer = train_tokenizer([text for pair in pairs for text in pair], vocab_size)
    tokenizer.save(path)
    return tokenizer
