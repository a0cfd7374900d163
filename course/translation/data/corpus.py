"""Lectura de las particiones de Multi30k y un corpus paralelo de juguete para las pruebas."""

import gzip
import hashlib
import os
import random
from collections.abc import Mapping
from pathlib import Path

from course.translation.data.sources import LANGS, SPLITS, DataError, file_name, locate


def read_lines(path: Path) -> list[str]:
    """Líneas de un archivo ``.gz`` en UTF-8, sin espacios al principio ni al final."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.strip() for line in f]


def read_split(
    split: str, root: str | os.PathLike | None = None, *, sums: Mapping[str, str] | None = None
) -> list[tuple[str, str]]:
    """Pares (alemán, inglés) de una partición de Multi30k.

    Args:
        split: ``"train"`` (29 000 pares), ``"val"`` (1014) o ``"test_2016_flickr"`` (1000).
        root: carpeta con los datos; si es ``None``, se buscan como explica ``locate``.
        sums: sumas SHA-256 esperadas; por omisión, las de Multi30k.

    Lanza ``DataError`` si faltan archivos, no coinciden sus sumas o las dos partes no
    tienen el mismo número de líneas.
    """
    directory = locate(root, sums=sums)
    de_path, en_path = (directory / file_name(split, lang) for lang in LANGS)
    de, en = read_lines(de_path), read_lines(en_path)
    if len(de) != len(en):
        raise DataError(
            f"{de_path} tiene {len(de)} líneas y {en_path} tiene {len(en)}: las dos partes de "
            f"un corpus paralelo deben tener una frase por línea y el mismo número de líneas. "
            f"Vuelve a obtener los dos archivos de la misma fuente."
        )
    return list(zip(de, en, strict=True))


# (alemán, inglés) para el corpus de juguete; los verbos: (de sg., de pl., en sg., en pl.)
_SUBJECTS = [
    ("Ein Hund", "A dog", 0),
    ("Eine Frau", "A woman", 0),
    ("Ein Mädchen", "A girl", 0),
    ("Ein älterer Mann", "An older man", 0),
    ("Zwei Kinder", "Two children", 1),
    ("Drei Männer", "Three men", 1),
]
_VERBS = [
    ("läuft", "laufen", "runs", "run"),
    ("spielt", "spielen", "plays", "play"),
    ("sitzt", "sitzen", "sits", "sit"),
    ("springt", "springen", "jumps", "jump"),
]
_EXTRAS = [
    ("", ""),
    ("mit einem roten Ball ", "with a red ball "),
    ("fröhlich ", "happily "),
    ("mit einem Freund ", "with a friend "),
]
_PLACES = [
    ("im Park", "in the park"),
    ("auf der Straße", "on the street"),
    ("am Strand", "on the beach"),
    ("im Schnee", "in the snow"),
    ("vor einem großen Gebäude", "in front of a large building"),
]


def toy_pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n`` pares (alemán, inglés) de juguete, generados con plantillas y una semilla."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        subj_de, subj_en, plural = rng.choice(_SUBJECTS)
        verb = rng.choice(_VERBS)
        extra_de, extra_en = rng.choice(_EXTRAS)
        place_de, place_en = rng.choice(_PLACES)
        de = f"{subj_de} {verb[plural]} {extra_de}{place_de}."
        en = f"{subj_en} {verb[2 + plural]} {extra_en}{place_en}."
        pairs.append((de, en))
    return pairs


def write_gz(path: Path, lines: list[str]) -> str:
    """Escribe ``lines`` en ``path`` (gzip reproducible, sin fecha) y devuelve su SHA-256."""
    data = gzip.compress("".join(f"{line}\n" for line in lines).encode("utf-8"), mtime=0)
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def synthetic_corpus(directory: str | os.PathLike, n: int = 200, seed: int = 0) -> dict[str, str]:
    """Crea en ``directory`` un corpus de juguete con los nombres de archivo de Multi30k.

    ``train`` tiene ``n`` pares; ``val`` y ``test_2016_flickr``, ``max(n // 5, 1)`` cada una.
    Algunas líneas llevan espacios sobrantes, como el corpus real. Devuelve las sumas
    SHA-256 (nombre de archivo -> suma) para pasarlas como ``sums=`` a ``locate`` o
    ``read_split``.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    sizes = {"train": n, "val": max(n // 5, 1), "test_2016_flickr": max(n // 5, 1)}
    sums = {}
    for offset, split in enumerate(SPLITS):
        pairs = toy_pairs(sizes[split], seed=seed + offset)
        for side, lang in enumerate(LANGS):
            lines = [pair[side] + (" " if i % 7 == 3 else "") for i, pair in enumerate(pairs)]
            name = file_name(split, lang)
            sums[name] = write_gz(directory / name, lines)
    return sums
