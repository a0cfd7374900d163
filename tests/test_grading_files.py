"""Lo que llega de una entrega no se cree: zips, carpetas de ejecución y el libro de notas.

Rápidas: no se ejecuta ningún cuaderno con nbgrader.
"""

import contextlib
import os
import sqlite3
import stat
import struct
import time
import zipfile
import zlib
from datetime import datetime
from pathlib import Path

import pytest

from course.grading import batch, files, results
from course.labs import CourseError

RUN = "ana/07_multi30k/runs/07_multi30k/completa"


def _everything(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir())


def _extract(archive: Path, target: Path) -> list[files.Entry]:
    return list(files.extract_zip(archive, target, lambda parts: Path(*parts)))


def _raw_zip(path: Path, name: str, deflated: bytes, size: int) -> None:
    """Un zip de una entrada escrito a mano: el tamaño declarado es el que se diga."""
    encoded = name.encode()
    fields = (20, 0, zipfile.ZIP_DEFLATED, 0, 0, 0, len(deflated), size, len(encoded))
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, *fields, 0) + encoded + deflated
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, *fields, 0, 0, 0, 0, 0, 0)
    central += encoded
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local), 0)
    path.write_bytes(local + central + end)


def _zeros_deflated(mebibytes: int) -> bytes:
    """``mebibytes`` MiB de ceros comprimidos (unos 1000 veces menos) sin comprimirlos todos."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(bytes(files.MIB)) + compressor.flush(zlib.Z_FULL_FLUSH)
    return block * mebibytes + compressor.flush()


# --- extract_zip --------------------------------------------------------------------------


def test_a_zip_bomb_is_refused_at_once_without_filling_the_disk(tmp_path, alarm):
    archive = tmp_path / "bomba.zip"
    _raw_zip(archive, f"{RUN}/best.pt", _zeros_deflated(2048), 2 * files.GIB)
    assert archive.stat().st_size < 3 * files.MIB
    start = time.perf_counter()
    (entry,) = _extract(archive, tmp_path / "out")
    assert time.perf_counter() - start < 2
    assert entry.refused == "se descomprime más de 100 veces (¿una bomba zip?)"
    assert _everything(tmp_path / "out") == []


def test_a_zip_that_lies_about_its_size_is_refused_and_leaves_nothing(tmp_path, monkeypatch, alarm):
    monkeypatch.setattr(files, "MAX_RATIO", 10_000)
    archive = tmp_path / "mentira.zip"
    _raw_zip(archive, f"{RUN}/best.pt", _zeros_deflated(2048), 4 * files.MIB)  # dice 4 MiB
    (entry,) = _extract(archive, tmp_path / "out")
    assert entry.refused.startswith("no se puede extraer")
    assert _everything(tmp_path / "out") == []


def test_an_entry_that_expands_too_much_is_refused_as_a_bomb(tmp_path):
    archive = tmp_path / "aula.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr(f"{RUN}/traducciones.txt", bytes(30 * files.MIB))
        bundle.writestr(f"{RUN}/metricas.json", b'{"bleu": 37.9}')
    bomb, fine = _extract(archive, tmp_path / "out")
    assert "bomba zip" in bomb.refused and not fine.refused
    assert _everything(tmp_path / "out") == [f"{RUN}/metricas.json"]


def test_the_whole_zip_has_a_cap_too(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "ZIP_EXTRA_BYTES", 5 * files.MIB // 2)
    monkeypatch.setattr(files, "MAX_RATIO", 10_000)
    archive = tmp_path / "aula.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name in "abc":
            bundle.writestr(f"{RUN}/{name}.txt", bytes(6 * files.MIB // 5))
    refused = [e.refused for e in _extract(archive, tmp_path / "out")]
    assert refused == ["", "", "el zip entero ocupa demasiado al descomprimirlo"]
    assert _everything(tmp_path / "out") == [f"{RUN}/a.txt", f"{RUN}/b.txt"]


@pytest.mark.parametrize(
    ("kind", "reason"),
    [(stat.S_IFLNK, "es un enlace simbólico"), (stat.S_IFIFO, "no es un archivo normal")],
)
def test_links_and_special_entries_are_refused(tmp_path, kind, reason):
    archive = tmp_path / "aula.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        info = zipfile.ZipInfo(f"{RUN}/best.pt")
        info.external_attr = (kind | 0o777) << 16
        bundle.writestr(info, "/etc/passwd")
    (entry,) = _extract(archive, tmp_path / "out")
    assert entry.refused == reason
    assert not entry.path.exists() and not entry.path.is_symlink()


@pytest.mark.parametrize("name", ["../fuera.txt", "ana/../../fuera.txt", "/tmp/fuera.txt"])
def test_paths_that_leave_the_target_are_refused(tmp_path, name):
    archive = tmp_path / "aula.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr(zipfile.ZipInfo("ana/07_multi30k/07_multi30k.ipynb"), "{}")
        bundle.writestr(zipfile.ZipInfo(name), "x")  # ZipInfo guarda el nombre tal cual
    good, bad = _extract(archive, tmp_path / "a" / "b" / "out")
    assert not good.refused and (bad.path, bad.refused) == (
        None,
        "la ruta sale de la carpeta de destino",
    )
    assert _everything(tmp_path) == ["a/b/out/ana/07_multi30k/07_multi30k.ipynb", "aula.zip"]
    assert not Path("/tmp/fuera.txt").exists()


def test_an_entry_that_clashes_with_an_earlier_one_is_refused_not_a_crash(tmp_path):
    archive = tmp_path / "aula.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr(f"{RUN}/best.pt", "pesos")
        bundle.writestr(f"{RUN}/best.pt/otro.pt", "x")
    first, second = _extract(archive, tmp_path / "out")
    assert not first.refused and second.refused.startswith("no se puede extraer")
    assert _everything(tmp_path / "out") == [f"{RUN}/best.pt"]


def test_a_refused_notebook_is_that_students_error_and_the_others_are_graded(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(files, "NOTEBOOK_MAX_BYTES", files.MIB)
    archive = tmp_path / "aula.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("ana/01_atencion.ipynb", os.urandom(2 * files.MIB))
        bundle.writestr("beto/01_atencion.ipynb", "{}")
    ana, beto = batch._unzip(archive, tmp_path / "out", None)
    assert (ana.student, ana.notebook) == ("ana", None)
    assert ana.problem == "se rechaza «ana/01_atencion.ipynb»: ocupa más de 1 MiB al descomprimir"
    assert beto.notebook.read_text() == "{}" and not beto.problem
    assert f"aviso: ana · 01_atencion: {ana.problem}" in capsys.readouterr().err


# --- copy_regular_files -------------------------------------------------------------------


@pytest.fixture
def run_folder(tmp_path) -> Path:
    run = tmp_path / "completa"
    (run / "decodificado").mkdir(parents=True)
    (run / "best.pt").write_bytes(b"pesos")
    (run / "decodificado" / "test.en").write_text("A dog.\n")
    (run / "last.pt").write_bytes(b"estado para reanudar")
    (run / "cero.pt").symlink_to("/dev/zero")
    (run / "traducciones.txt").symlink_to("/etc/passwd")
    (run / "sistema").symlink_to("/etc", target_is_directory=True)
    os.mkfifo(run / "tuberia")
    return run


def test_only_regular_files_are_copied_and_nothing_hangs(run_folder, tmp_path, alarm):
    notes = files.copy_regular_files(run_folder, tmp_path / "copia", ignore=("last.pt",))
    assert _everything(tmp_path / "copia") == ["best.pt", "decodificado/test.en"]
    assert sorted(notes) == [
        "se omite «completa/cero.pt»: es un enlace simbólico",
        "se omite «completa/sistema»: es un enlace simbólico",
        "se omite «completa/traducciones.txt»: es un enlace simbólico",
        "se omite «completa/tuberia»: no es un archivo normal",
    ]


def test_a_linked_run_folder_is_not_followed(run_folder, tmp_path):
    (tmp_path / "enlace").symlink_to(run_folder, target_is_directory=True)
    notes = files.copy_regular_files(tmp_path / "enlace", tmp_path / "copia")
    assert notes == ["se omite «enlace»: es un enlace simbólico"]
    assert not (tmp_path / "copia").exists()


def test_a_hard_link_is_not_copied_nor_read(run_folder, tmp_path, alarm):
    os.link(run_folder / "best.pt", run_folder / "average.pt")
    notes = files.copy_regular_files(run_folder, tmp_path / "copia", ignore=("last.pt",))
    assert (
        "se omite «completa/average.pt»: es un enlace duro (el mismo archivo tiene 2 nombres)"
        in notes
    )
    assert (
        "se omite «completa/best.pt»: es un enlace duro (el mismo archivo tiene 2 nombres)" in notes
    )
    assert _everything(tmp_path / "copia") == ["decodificado/test.en"]
    for name, reason in (("best.pt", "enlace duro"), ("cero.pt", "enlace simbólico"),
                         ("tuberia", "no es un archivo normal")):  # fmt: skip
        with pytest.raises(files.Refused, match=reason):
            files.read_regular(run_folder / name, files.MIB)
    assert files.read_regular(run_folder / "decodificado" / "test.en", 7) == b"A dog.\n"
    with pytest.raises(files.Refused, match="ocupa más de"):
        files.read_regular(run_folder / "decodificado" / "test.en", 6)


def test_a_linked_folder_on_the_way_is_named(tmp_path):
    (tmp_path / "real" / "b").mkdir(parents=True)
    (tmp_path / "a").symlink_to(tmp_path / "real", target_is_directory=True)
    assert files.linked_folder(tmp_path, Path("a/b/c")) == "«a» es un enlace simbólico"
    assert files.linked_folder(tmp_path, Path("real/b/c")) == ""


def test_copying_stops_at_the_size_cap(tmp_path):
    run = tmp_path / "completa"
    run.mkdir()
    for name in ("a.pt", "b.pt", "c.txt"):
        (run / name).write_bytes(os.urandom(600 * 1024 if name != "c.txt" else 10))
    notes = files.copy_regular_files(run, tmp_path / "copia", max_bytes=files.MIB)
    assert notes == ["se omite «completa/b.pt»: la carpeta pasa de 1 MiB"]
    assert _everything(tmp_path / "copia") == ["a.pt", "c.txt"]


# --- gradebook.db: copias y cerrojo -------------------------------------------------------

LAB = "01_atencion"


@pytest.fixture
def gradebook(tmp_path, one_cell_gradebook) -> Path:
    return one_cell_gradebook(tmp_path, LAB, "ej1")


def _merge(db: Path, points: float) -> int:
    cell = {"grade_id": "ej1", "points": points, "max_points": 10, "message": ""}
    return results.merge([results.Result("ana", LAB, cells=[cell])], db)


def _scores(db: Path) -> list:
    with contextlib.closing(sqlite3.connect(db)) as connection:
        return connection.execute("SELECT auto_score FROM grade").fetchall()


def test_two_merges_in_the_same_second_keep_two_backups(gradebook, monkeypatch):
    class SameSecond:
        @staticmethod
        def now() -> datetime:
            return datetime.now().replace(2026, 11, 24, 14, 23, 1)

    monkeypatch.setattr(results, "datetime", SameSecond)
    assert _merge(gradebook, 3) == 1 and _merge(gradebook, 4) == 1
    backups = list(gradebook.parent.glob("gradebook.db.20261124-142301-*.bak"))
    assert len(backups) == 2
    assert _scores(gradebook) == [(4.0,)]


def test_only_the_last_five_backups_are_kept(gradebook):
    old = [gradebook.with_name(f"gradebook.db.2000010{i}-120000-000000.bak") for i in range(1, 8)]
    for path in old:
        path.write_text("copia vieja")
    new = results.backup(gradebook)
    kept = sorted(gradebook.parent.glob("gradebook.db.*.bak"))
    assert kept == [*old[-4:], new]
    assert new.read_bytes() == gradebook.read_bytes()


@pytest.mark.parametrize("held", ["BEGIN EXCLUSIVE", "BEGIN; SELECT * FROM grade"])
def test_a_locked_gradebook_says_what_to_do_and_changes_nothing(gradebook, monkeypatch, held):
    _merge(gradebook, 3)
    monkeypatch.setattr(results, "LOCK_TIMEOUT_S", 0.2)
    formgrader = sqlite3.connect(gradebook, isolation_level=None)
    formgrader.executescript(held)
    try:
        with pytest.raises(CourseError, match="Cierra Formgrader o espera") as error:
            _merge(gradebook, 9)
    finally:
        formgrader.close()
    assert "no se ha cambiado ninguna nota" in str(error.value)
    assert _scores(gradebook) == [(3.0,)]
    assert not list(gradebook.parent.glob("*.tmp"))
