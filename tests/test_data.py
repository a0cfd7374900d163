"""Pruebas de ``course.translation.data``: búsqueda y verificación de Multi30k, tokenizador y lotes.

Todas usan un corpus de juguete generado, salvo las marcadas con ``needs_multi30k``, que
leen la copia real (``MULTI30K_DIR`` o ``../shared/multi30k``) y se omiten si no está. Ninguna usa la red:
``urlopen`` se sustituye en cada prueba.
"""

import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import torch
from torch.utils.data import BatchSampler, RandomSampler

import course.translation.data.sources as sources
from course.student.examples import PAD_IDX as EXAMPLES_PAD_IDX
from course.translation import data
from course.translation.data.corpus import write_gz

REAL_DIR = Path(os.environ.get(data.ENV_VAR) or data.shared_dir())  # leída antes de aislar
REAL_PRESENT = all((REAL_DIR / name).is_file() for name in data.MULTI30K_SHA256)
needs_multi30k = pytest.mark.skipif(
    not REAL_PRESENT, reason=f"no está la copia real de Multi30k en {REAL_DIR}"
)


REAL_URLOPEN = urllib.request.urlopen


def _no_network(url, *args, **kwargs):
    raise urllib.error.URLError(f"red bloqueada en las pruebas ({url})")


@pytest.fixture(autouse=True)
def private_env(monkeypatch, tmp_path):
    """Caché en una carpeta temporal, sin ``MULTI30K_DIR`` y sin red."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(data.ENV_VAR, raising=False)
    monkeypatch.setattr(urllib.request, "urlopen", _no_network)


@pytest.fixture
def no_shared(monkeypatch, tmp_path):
    """La copia compartida apunta a una carpeta que no existe."""
    shared = tmp_path / "shared" / "multi30k"
    monkeypatch.setattr(sources, "shared_dir", lambda: shared)
    return shared


@pytest.fixture(scope="session")
def toy(tmp_path_factory):
    """Corpus de juguete: (carpeta, sumas)."""
    directory = tmp_path_factory.mktemp("toy")
    return directory, data.synthetic_corpus(directory, n=600, seed=0)


@pytest.fixture(scope="session")
def toy_tokenizer(toy):
    pairs = data.read_split("train", toy[0], sums=toy[1])
    return data.train_tokenizer([text for pair in pairs for text in pair], vocab_size=300)


@pytest.fixture(scope="session")
def toy_dataset(toy, toy_tokenizer):
    return data.PairDataset(data.read_split("train", toy[0], sums=toy[1]), toy_tokenizer)


def _local_files_only(url, *args, **kwargs):
    assert url.startswith("file:"), url
    return REAL_URLOPEN(url, *args, **kwargs)


def _copy(toy, target: Path) -> Path:
    shutil.copytree(toy[0], target)
    return target


# --- búsqueda y verificación -------------------------------------------------------------


def test_locate_order_explicit_env_cache_shared_download(toy, no_shared, tmp_path, monkeypatch):
    sums = toy[1]
    explicit, env = _copy(toy, tmp_path / "explicit"), _copy(toy, tmp_path / "env")
    cache = _copy(toy, data.cache_dir())
    _copy(toy, no_shared)
    monkeypatch.setenv(data.ENV_VAR, str(env))
    assert data.locate(explicit, sums=sums) == explicit
    assert data.locate(sums=sums) == env
    monkeypatch.delenv(data.ENV_VAR)
    assert data.locate(sums=sums) == cache
    shutil.rmtree(cache)
    assert data.locate(sums=sums) == no_shared
    shutil.rmtree(no_shared)
    monkeypatch.setattr(urllib.request, "urlopen", _local_files_only)
    assert data.locate(sums=sums, base_url=toy[0].as_uri()) == cache  # descarga file://
    assert sorted(p.name for p in cache.iterdir()) == sorted(sums)


def test_explicit_dir_missing_file_is_reported_not_skipped(toy, tmp_path):
    explicit = _copy(toy, tmp_path / "explicit")
    (explicit / "val.en.gz").unlink()
    with pytest.raises(data.DataError, match=r"Falta el archivo .*val\.en\.gz.*argumento"):
        data.locate(explicit, sums=toy[1])  # la copia compartida real no lo sustituye


def test_env_dir_that_does_not_exist(toy, tmp_path, monkeypatch):
    monkeypatch.setenv(data.ENV_VAR, str(tmp_path / "nada"))
    with pytest.raises(data.DataError, match=r"La carpeta .*nada no existe.*MULTI30K_DIR"):
        data.locate(sums=toy[1])


def test_checksum_mismatch_in_cache_says_to_delete_it(toy, no_shared):
    cache = _copy(toy, data.cache_dir())
    (cache / "train.de.gz").write_bytes(b"no es gzip")
    with pytest.raises(data.DataError) as info:
        data.locate(sums=toy[1])
    message = str(info.value)
    assert "train.de.gz" in message and "SHA-256" in message and "no coincide" in message
    assert toy[1]["train.de.gz"] in message and "Borra ese archivo" in message


def test_download_verifies_each_file_and_uses_timeout(toy, no_shared, monkeypatch):
    calls = []

    def fake_urlopen(url, timeout):
        calls.append((url, timeout))
        return open(toy[0] / url.rsplit("/", 1)[1], "rb")

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    assert data.locate(sums=toy[1], timeout=5.0) == data.cache_dir()
    assert sorted(calls) == sorted((f"{data.BASE_URL}/{name}", 5.0) for name in toy[1])
    calls.clear()
    data.locate(sums=toy[1])
    assert calls == []  # segunda vez: de la caché


def test_corrupt_download_is_rejected_and_not_cached(toy, no_shared, monkeypatch):
    monkeypatch.setattr(
        urllib.request, "urlopen", lambda url, timeout: _Fake(b"<html>proxy</html>")
    )
    with pytest.raises(
        data.DataError, match=r"La descarga de .*\.gz no coincide .*No se ha guardado"
    ):
        data.locate(sums=toy[1])
    assert not data.cache_dir().exists() or not any(data.cache_dir().iterdir())


class _Fake:
    def __init__(self, payload: bytes) -> None:
        self.payload = payload

    def read(self) -> bytes:
        return self.payload

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


def test_all_sources_failing_lists_every_place(toy, no_shared):
    with pytest.raises(data.DataError) as info:
        data.locate(sums=toy[1])
    message = str(info.value)
    assert message.startswith("No se encuentran los datos de Multi30k")
    for expected in (
        "ruta explícita",
        data.ENV_VAR,
        str(data.cache_dir()),
        str(no_shared),
        "la descarga desde",
        "red bloqueada",
        "la carpeta no existe",
    ):
        assert expected in message


def test_allow_download_false_never_opens_a_url(toy, no_shared, monkeypatch):
    monkeypatch.setattr(urllib.request, "urlopen", pytest.fail)
    with pytest.raises(data.DataError, match="descarga está desactivada"):
        data.locate(sums=toy[1], allow_download=False)


# --- lectura ---------------------------------------------------------------------------------


def test_read_split_gives_stripped_aligned_pairs(toy):
    pairs = data.read_split("train", toy[0], sums=toy[1])
    assert len(pairs) == 600 and len(data.read_split("val", toy[0], sums=toy[1])) == 120
    assert pairs == data.toy_pairs(600, seed=0)  # sin los espacios sobrantes del archivo


def test_read_split_rejects_different_line_counts(tmp_path):
    sums = data.synthetic_corpus(tmp_path, n=20)
    sums["val.en.gz"] = write_gz(tmp_path / "val.en.gz", ["A dog runs."])
    with pytest.raises(data.DataError, match=r"val\.de\.gz tiene 4 líneas y .*val\.en\.gz tiene 1"):
        data.read_split("val", tmp_path, sums=sums)


def test_read_split_rejects_unknown_split(toy):
    with pytest.raises(ValueError, match="Partición desconocida 'test'"):
        data.read_split("test", toy[0], sums=toy[1])


def test_synthetic_corpus_is_reproducible(tmp_path):
    assert data.synthetic_corpus(tmp_path / "a", seed=3) == data.synthetic_corpus(
        tmp_path / "b", seed=3
    )


# --- tokenizador ---------------------------------------------------------------------------


def test_special_ids_match_course_pad(toy_tokenizer):
    assert data.PAD_IDX == EXAMPLES_PAD_IDX == 0
    for idx, token in enumerate(["<pad>", "<bos>", "<eos>", "<unk>"]):
        assert toy_tokenizer.tokenizer.token_to_id(token) == idx
    ids = toy_tokenizer.encode("Ein Hund läuft im Park.")
    assert ids[0] == data.BOS_IDX and ids[-1] == data.EOS_IDX and data.PAD_IDX not in ids


@pytest.mark.parametrize(
    "text",
    [
        "Ein älterer Mann springt fröhlich auf der Straße.",
        "Two children play with a red ball in the snow.",
        "A dog  runs in the park.",
    ],
)
def test_decode_inverts_encode(toy_tokenizer, text):
    assert toy_tokenizer.decode(toy_tokenizer.encode(text)) == text


def test_unseen_characters_become_unk(toy_tokenizer):
    assert data.UNK_IDX in toy_tokenizer.encode("A dog runs (in) the park!")


def test_decode_stops_at_eos_and_skips_specials(toy_tokenizer):
    ids = toy_tokenizer.encode("A dog runs.")
    noisy = [data.BOS_IDX, *ids[1:-1], data.PAD_IDX, data.EOS_IDX, *ids[1:]]
    assert toy_tokenizer.decode(torch.tensor(noisy)) == "A dog runs."


def test_build_tokenizer_is_cached_by_vocab_size_and_data(toy):
    directory, sums = toy
    first = data.build_tokenizer(200, directory, sums=sums)
    files = list((data.cache_root() / "tokenizers").glob("bpe-200-*.json"))
    assert len(files) == 1
    again = data.build_tokenizer(200, tmp := directory / "no-se-lee", sums=sums)  # de la caché
    assert not tmp.exists() and again.tokenizer.get_vocab() == first.tokenizer.get_vocab()
    data.build_tokenizer(150, directory, sums=sums)
    assert len(list((data.cache_root() / "tokenizers").glob("bpe-*.json"))) == 2


# --- lotes -------------------------------------------------------------------------------------


def test_collate_pads_with_zero_and_shifts_target(toy_tokenizer):
    pairs = [("Ein Hund läuft.", "A dog runs in the park."), ("Zwei Kinder spielen.", "Play.")]
    dataset = data.PairDataset(pairs, toy_tokenizer)
    src, tgt_in, tgt_out = data.collate([dataset[0], dataset[1]])
    long_tgt = toy_tokenizer.encode("A dog runs in the park.")
    short_src, short_tgt = (toy_tokenizer.encode(t) for t in pairs[1])
    T_src = max(len(dataset.src[0]), len(short_src))
    assert src.shape == (2, T_src) and tgt_in.shape == tgt_out.shape == (2, len(long_tgt) - 1)
    assert src.dtype == tgt_in.dtype == tgt_out.dtype == torch.int64
    assert tgt_in[0].tolist() == long_tgt[:-1] and tgt_out[0].tolist() == long_tgt[1:]
    assert tgt_out[1].tolist() == short_tgt[1:] + [0] * (len(long_tgt) - len(short_tgt))
    assert (src[1, len(short_src) :] == 0).all() and (src[1, : len(short_src)] != 0).all()


def test_sampler_respects_budget_and_covers_every_example(toy_dataset):
    lengths = toy_dataset.lengths
    batches = list(data.TokenBucketSampler(lengths, max_tokens=128, chunk_size=256))
    assert sorted(i for b in batches for i in b) == list(range(len(toy_dataset)))
    assert all(len(b) * max(lengths[i] for i in b) <= 128 for b in batches)


def test_bucketing_pads_less_than_random_batches(toy_dataset):
    sampler = data.TokenBucketSampler(toy_dataset.lengths, max_tokens=128, chunk_size=256)
    bucketed = list(sampler)
    batch_size = round(len(toy_dataset) / len(bucketed))
    generator = torch.Generator().manual_seed(0)
    random = list(BatchSampler(RandomSampler(toy_dataset, generator=generator), batch_size, False))
    assert data.padding_ratio(bucketed, toy_dataset) < 0.5 * data.padding_ratio(random, toy_dataset)


def test_sampler_is_deterministic_per_seed_and_epoch(toy_dataset):
    def batches(seed=0, epoch=0):
        sampler = data.TokenBucketSampler(toy_dataset.lengths, 128, seed=seed, chunk_size=256)
        sampler.set_epoch(epoch)
        return list(sampler)

    assert batches() == batches()
    assert batches() != batches(epoch=1) and batches() != batches(seed=1)


@pytest.mark.parametrize("world_size", [2, 3])
def test_sampler_shards_are_disjoint_and_equal(toy_dataset, world_size):
    shards = [
        list(data.TokenBucketSampler(toy_dataset.lengths, 128, rank=rank, world_size=world_size))
        for rank in range(world_size)
    ]
    full = list(data.TokenBucketSampler(toy_dataset.lengths, 128))
    seen = [i for shard in shards for batch in shard for i in batch]
    assert len(seen) == len(set(seen))
    assert len({len(shard) for shard in shards}) == 1
    assert len(full) - world_size < sum(len(s) for s in shards) <= len(full)


def test_sampler_rejects_examples_over_budget():
    with pytest.raises(ValueError, match="sube max_tokens"):
        data.TokenBucketSampler([3, 50, 4], max_tokens=40)


def test_make_loader_yields_batches(toy_dataset):
    loader = data.make_loader(toy_dataset, max_tokens=128)
    batch = next(iter(loader))
    assert isinstance(batch, data.Batch) and batch.src.size(0) == batch.tgt_in.size(0)
    assert len(loader) == len(loader.batch_sampler)


# --- datos reales --------------------------------------------------------------------------


@needs_multi30k
def test_device_batches_equal_the_loader_batches_every_epoch(toy_dataset):
    loader = data.make_loader(toy_dataset, max_tokens=96, seed=3)
    on_device = data.DeviceBatches(toy_dataset, loader.batch_sampler, "cpu")
    assert len(on_device) == len(loader) and on_device.dataset is toy_dataset
    for epoch in (0, 1):
        loader.batch_sampler.set_epoch(epoch)
        pairs = list(zip(loader, on_device, strict=True))
        assert len(pairs) > 2
        for expected, got in pairs:
            for name, a, b in zip(expected._fields, expected, got, strict=True):
                assert a.dtype == b.dtype and torch.equal(a, b), f"{name}, época {epoch}"


def test_embedded_sums_match_shared_sha256sums():
    if not (REAL_DIR / "SHA256SUMS").is_file():
        pytest.skip(f"no hay SHA256SUMS en {REAL_DIR}")
    listed = dict(
        reversed(line.split()) for line in (REAL_DIR / "SHA256SUMS").read_text().splitlines()
    )
    assert listed == data.MULTI30K_SHA256


@needs_multi30k
@pytest.mark.parametrize(
    "split, size", [("train", 29000), ("val", 1014), ("test_2016_flickr", 1000)]
)
def test_real_split_sizes(split, size):
    pairs = data.read_split(split, REAL_DIR)
    assert len(pairs) == size and all(de and en for de, en in pairs)


@needs_multi30k
def test_real_tokenizer_round_trips_validation_sentences():
    tokenizer = data.build_tokenizer(root=REAL_DIR)
    assert tokenizer.vocab_size == data.DEFAULT_VOCAB_SIZE
    sentences = [text for pair in data.read_split("val", REAL_DIR) for text in pair]
    assert [tokenizer.decode(ids) for ids in tokenizer.encode_batch(sentences)] == sentences


def test_finding_the_files_does_not_load_torch():
    """El calificador busca Multi30k antes de arrancar el núcleo: sin cargar PyTorch."""
    program = (
        "import sys\nfrom course.translation.data import sources\n"
        "from course.translation import data\ndata.locate\n"
        "print('torch' in sys.modules, 'tokenizers' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]
