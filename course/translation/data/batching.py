"""Conjunto de pares codificados, relleno de lotes y lotes por cubetas de longitud.

Los lotes se forman por presupuesto de *tokens*: frases de longitud parecida van juntas,
así que se rellena poco y cada lote ocupa una memoria parecida.
"""

import math
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import torch
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset, Sampler

from course.translation.data.tokenizer import PAD_IDX, SubwordTokenizer

DEFAULT_CHUNK_SIZE = 4096  # frases por trozo barajado que se ordena por longitud


class Batch(NamedTuple):
    """Lote relleno con ``PAD_IDX``.

    Forma:
        src (B, T_src); tgt_in (B, T_tgt - 1), empieza por ``<bos>``;
        tgt_out (B, T_tgt - 1), el mismo destino desplazado una posición, acaba en ``<eos>``;
        todos ``int64``.
    """

    src: Tensor
    tgt_in: Tensor
    tgt_out: Tensor

    def to(self, device: torch.device | str, non_blocking: bool = False) -> "Batch":
        """El mismo lote en ``device``."""
        return Batch(*(t.to(device, non_blocking=non_blocking) for t in self))


class PairDataset(Dataset):
    """Pares (origen, destino) ya codificados, cada uno con ``<bos>`` y ``<eos>``.

    Args:
        pairs: pares de texto (alemán, inglés), p. ej. de ``read_split``.
        tokenizer: el ``SubwordTokenizer`` compartido por los dos idiomas.

    Forma:
        ``dataset[i]`` devuelve (src (T_src,), tgt (T_tgt,)), ``int64``.
    """

    def __init__(self, pairs: Sequence[tuple[str, str]], tokenizer: SubwordTokenizer) -> None:
        self.src = tokenizer.encode_batch([de for de, _ in pairs])
        self.tgt = tokenizer.encode_batch([en for _, en in pairs])

    def __len__(self) -> int:
        return len(self.src)

    def __getitem__(self, index: int) -> tuple[Tensor, Tensor]:
        return torch.tensor(self.src[index]), torch.tensor(self.tgt[index])

    @property
    def lengths(self) -> list[int]:
        """Coste de cada par: ``max(T_src, T_tgt)``, la longitud que decide el relleno."""
        return [max(len(s), len(t)) for s, t in zip(self.src, self.tgt, strict=True)]


def collate(batch: Sequence[tuple[Tensor, Tensor]], pad_idx: int = PAD_IDX) -> Batch:
    """Rellena una lista de pares hasta la frase más larga y separa la entrada del decodificador.

    Forma:
        batch: B pares (src (T_src_i,), tgt (T_tgt_i,)) -> ``Batch`` (ver su docstring)
    """
    src = pad_sequence([s for s, _ in batch], batch_first=True, padding_value=pad_idx)  # (B, T_src)
    tgt = pad_sequence([t for _, t in batch], batch_first=True, padding_value=pad_idx)  # (B, T_tgt)
    return Batch(src, tgt[:, :-1], tgt[:, 1:])  # (B, T_src), (B, T_tgt - 1), (B, T_tgt - 1)


class TokenBucketSampler(Sampler[list[int]]):
    """Lotes de índices con a lo sumo ``max_tokens`` *tokens* contando el relleno.

    En cada época: baraja los índices, los corta en trozos de ``chunk_size``, ordena cada
    trozo por longitud, llena lotes mientras ``B * longitud_máxima <= max_tokens`` y
    baraja el orden de los lotes. Todo depende de ``seed`` y de la época
    (``set_epoch``), como ``DistributedSampler``.

    Args:
        lengths: coste de cada ejemplo (``PairDataset.lengths``).
        max_tokens: presupuesto por lote, relleno incluido (vale para src y para tgt).
        shuffle: si es ``False``, orden fijo: ordena todo por longitud y no baraja.
        seed: semilla del barajado.
        chunk_size: tamaño de los trozos que se ordenan; más grande = menos relleno y
            lotes menos aleatorios.
        rank, world_size: para ``DistributedDataParallel``: cada proceso recibe los lotes
            ``rank::world_size``; se descartan los sobrantes para que todos reciban
            el mismo número de lotes, disjuntos entre sí.
    """

    def __init__(
        self,
        lengths: Sequence[int],
        max_tokens: int,
        *,
        shuffle: bool = True,
        seed: int = 0,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        rank: int = 0,
        world_size: int = 1,
    ) -> None:
        if max(lengths, default=0) > max_tokens:
            raise ValueError(
                f"Hay una frase de {max(lengths)} tokens y max_tokens={max_tokens}: "
                f"sube max_tokens o filtra las frases largas."
            )
        if not 0 <= rank < world_size:
            raise ValueError(f"rank={rank} debe estar entre 0 y world_size - 1 = {world_size - 1}.")
        self.lengths, self.max_tokens, self.shuffle = list(lengths), max_tokens, shuffle
        self.seed, self.chunk_size, self.epoch = seed, chunk_size, 0
        self.rank, self.world_size = rank, world_size
        self._cache: tuple[int, list[list[int]]] | None = None

    def set_epoch(self, epoch: int) -> None:
        """Cambia el barajado; llámalo al principio de cada época."""
        self.epoch = epoch

    def _all_batches(self) -> list[list[int]]:
        generator = torch.Generator().manual_seed(self.seed + self.epoch)
        n = len(self.lengths)
        order = torch.randperm(n, generator=generator).tolist() if self.shuffle else range(n)
        chunk_size = self.chunk_size if self.shuffle else max(n, 1)
        batches = []
        for start in range(0, n, chunk_size):
            chunk = sorted(order[start : start + chunk_size], key=self.lengths.__getitem__)
            batches.extend(self._pack(chunk))
        if self.shuffle:
            batches = [batches[i] for i in torch.randperm(len(batches), generator=generator)]
        return batches

    def _pack(self, indices: list[int]) -> list[list[int]]:
        """Llena lotes en orden con índices ya ordenados por longitud."""
        batches, current, longest = [], [], 0
        for i in indices:
            longest_if_added = max(longest, self.lengths[i])
            if current and (len(current) + 1) * longest_if_added > self.max_tokens:
                batches.append(current)
                current, longest_if_added = [], self.lengths[i]
            current.append(i)
            longest = longest_if_added
        return batches + [current] if current else batches

    def _batches(self) -> list[list[int]]:
        """Lotes de este proceso en la época actual (se calculan una vez por época)."""
        if self._cache is None or self._cache[0] != self.epoch:
            batches = self._all_batches()
            usable = len(batches) - len(batches) % self.world_size
            self._cache = (self.epoch, batches[self.rank : usable : self.world_size])
        return self._cache[1]

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self._batches())

    def __len__(self) -> int:
        return len(self._batches())


class DeviceBatches:
    """Los lotes de un ``TokenBucketSampler`` formados en ``device``, sin ``collate`` por lote.

    ``collate`` rellena una sola vez todos los pares, hasta la frase más larga del
    conjunto, y el resultado vive en ``device``; cada lote selecciona sus filas y las
    recorta a su frase más larga. Sale el mismo ``Batch`` que daría ``collate`` con esas
    frases. Con un modelo pequeño en GPU, formar cada lote en Python y copiarlo costaba
    más que el paso de entrenamiento.

    Se usa como el ``DataLoader`` de :func:`make_loader`: ``len``, iteración, ``dataset``
    y ``batch_sampler`` (con ``set_epoch``).

    Forma:
        cada lote: src (B, T_src), tgt_in (B, T_tgt - 1), tgt_out (B, T_tgt - 1), en ``device``
    """

    def __init__(
        self, dataset: PairDataset, batch_sampler: TokenBucketSampler, device: torch.device | str
    ) -> None:
        self.dataset, self.batch_sampler, self.device = dataset, batch_sampler, torch.device(device)
        everything = collate([dataset[i] for i in range(len(dataset))])
        self.padded = everything.to(self.device)  # cada tensor (N, la más larga del conjunto)
        self.src_len = [len(s) for s in dataset.src]
        self.tgt_len = [len(t) - 1 for t in dataset.tgt]  # columnas de tgt_in y tgt_out

    def __len__(self) -> int:
        return len(self.batch_sampler)

    def __iter__(self) -> Iterator[Batch]:
        for indices in self.batch_sampler:
            rows = torch.tensor(indices).to(self.device, non_blocking=True)
            src_width = max(self.src_len[i] for i in indices)
            tgt_width = max(self.tgt_len[i] for i in indices)
            src, tgt_in, tgt_out = self.padded
            yield Batch(src[rows, :src_width], tgt_in[rows, :tgt_width], tgt_out[rows, :tgt_width])


def padding_ratio(batches: Sequence[Sequence[int]], dataset: PairDataset) -> float:
    """Fracción de posiciones de relleno en src y tgt si se agrupa ``dataset`` en ``batches``.

    Se calcula con las longitudes, sin construir tensores: para cada lote,
    ``1 - tokens_reales / (B * T_max)``, sumado sobre src y tgt.
    """
    real = padded = 0
    for side in (dataset.src, dataset.tgt):
        for batch in batches:
            sizes = [len(side[i]) for i in batch]
            real, padded = real + sum(sizes), padded + len(sizes) * max(sizes)
    return 1.0 - real / padded if padded else math.nan


def make_loader(
    dataset: PairDataset,
    max_tokens: int,
    *,
    shuffle: bool = True,
    seed: int = 0,
    rank: int = 0,
    world_size: int = 1,
    **loader_kwargs,
) -> DataLoader:
    """``DataLoader`` de ``Batch`` con ``TokenBucketSampler`` y ``collate``.

    ``loader_kwargs`` pasa a ``DataLoader`` (p. ej. ``num_workers``, ``pin_memory`` o
    ``collate_fn``, que sustituye a ``collate``).
    Recuerda llamar a ``loader.batch_sampler.set_epoch(epoca)`` en cada época.
    """
    sampler = TokenBucketSampler(
        dataset.lengths, max_tokens, shuffle=shuffle, seed=seed, rank=rank, world_size=world_size
    )
    loader_kwargs.setdefault("collate_fn", collate)
    return DataLoader(dataset, batch_sampler=sampler, **loader_kwargs)
