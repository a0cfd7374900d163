"""Las puertas de archivos (issue 20, puntos 3 y 8): quién entregó, qué archivo, qué hora.

Por las mismas puertas que usa un instructor (``grade``, ``grade --zip``, ``grade
--merge-only``, ``export`` y ``export --excel``, ``feedback`` y ``nbgrader collect`` con un
intercambio de verdad en una carpeta temporal):

- mallory sube ``ana_01_atencion.ipynb``: la nota de ana no cambia; un cuaderno suelto
  en la raíz del zip no se califica;
- dos cuadernos o dos entregas para el mismo estudiante y laboratorio: error que nombra
  los dos, no se elige ninguno;
- un ``timestamp.txt`` que no es una fecha: aviso para esa entrega, los demás se unen;
- un cuaderno que es enlace simbólico a ``source/``, enlace duro, FIFO, o una carpeta de
  entrega enlazada: error en español para esa entrega, sin puntos ni soluciones en su
  devolución;
- nombres con secuencias de escape impresos escapados; identificadores como ``+A1+1``
  nunca llegan como fórmula a la hoja de cálculo.

Cada prueba comprueba además que las notas de los demás no cambian.
"""

import contextlib
import csv
import io
import os
import pwd
import shutil
import zipfile
from pathlib import Path
from unittest import mock

import classroom
import nbformat
import pytest
from leaks import secret_lines

from course import labs
from course.commands import export, feedback, grade
from course.grading import batch, results, sandbox

LAB = labs.get("01_atencion")
ESCAPE = "\x1b[2J\x1b[32m"
FORMULAS = ("+A1+1", "=1+1", "-2+3", "@SUM(1)")


def _cell(points: float, grade_id: str = "ej1_puntuaciones_prueba") -> dict:
    return {"grade_id": grade_id, "points": points, "max_points": 10, "message": ""}


# --- identidad: del zip ------------------------------------------------------------------


def _zip(path: Path, entries: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as bundle:
        for name, text in entries.items():
            bundle.writestr(name, text)
    return path


def test_an_uploaded_file_name_never_says_who_submitted(tmp_path, capsys):
    archive = _zip(
        tmp_path / "aula.zip",
        {
            "ana_01_atencion.ipynb": "{}",  # suelto: ¿de quién? no se califica
            "mallory/ana_01_atencion.ipynb": "{}",  # subido por mallory
            "ana/01_atencion/01_atencion.ipynb": "{}",
        },
    )
    tasks = batch._unzip(archive, tmp_path / "out", None)
    assert [(t.student, t.lab, t.notebook.name) for t in tasks] == [
        ("ana", LAB.id, f"{LAB.id}.ipynb"),
        ("mallory", LAB.id, "ana_01_atencion.ipynb"),
    ]
    err = capsys.readouterr().err
    assert "se ignora «ana_01_atencion.ipynb» en aula.zip" in err
    assert "<estudiante>/<lab>/<cuaderno>.ipynb" in err and "nunca dice quién" in err


def test_two_notebooks_for_one_student_are_reported_not_chosen(tmp_path):
    archive = _zip(
        tmp_path / "aula.zip",
        {
            "ana/01_atencion.ipynb": "{}",
            "ana/01_atencion/01_atencion.ipynb": "{}",  # iría al mismo sitio
            "beto/01_atencion (1).ipynb": "{}",
            "beto/copia_01_atencion.ipynb": "{}",
            "carla/01_atencion.ipynb": "{}",
        },
    )
    ana, beto, carla = batch._unzip(archive, tmp_path / "out", None)
    assert ana.notebook is None and beto.notebook is None
    assert "«ana/01_atencion.ipynb» y «ana/01_atencion/01_atencion.ipynb»" in ana.problem
    assert "«01_atencion (1).ipynb», «copia_01_atencion.ipynb»" in beto.problem
    assert "deja solo uno" in beto.problem
    assert carla.notebook.read_text() == "{}" and not carla.problem


def test_the_same_submission_from_two_doors_is_an_error_naming_both(tmp_path):
    folder = tmp_path / "submitted" / "ana" / LAB.id
    folder.mkdir(parents=True)
    (folder / f"{LAB.id}.ipynb").write_text("{}")
    first = _zip(tmp_path / "a.zip", {"beto/01_atencion.ipynb": "{}"})
    second = _zip(tmp_path / "b.zip", {"ana/01_atencion.ipynb": "{}"})
    tasks = batch.find_submissions(tmp_path / "submitted")
    tasks += batch._unzip(first, tmp_path / "0", None) + batch._unzip(second, tmp_path / "1", None)
    ana, beto = batch._one_per_submission(tasks)
    assert ana.notebook is None and "hay 2 entregas" in ana.problem
    assert "«submitted/ana/01_atencion/01_atencion.ipynb»" in ana.problem
    assert "«b.zip: ana/01_atencion.ipynb»" in ana.problem
    assert beto.notebook is not None and not beto.problem


# --- timestamp.txt -----------------------------------------------------------------------


@pytest.fixture
def gradebook_course(tmp_path, one_cell_gradebook) -> Path:
    """Un curso con el laboratorio 1 en gradebook.db y las notas de ana y beto unidas."""
    one_cell_gradebook(tmp_path, LAB.id, "ej1_puntuaciones_prueba")
    for student, points in (("ana", 10), ("beto", 4)):
        stamp = "2026-01-01 10:00:00.000000 UTC"
        result = results.Result(student, LAB.id, cells=[_cell(points)], timestamp=stamp)
        results.write(tmp_path / "autograded", result)
    return tmp_path


def _scores(root: Path) -> dict[str, tuple]:
    rows = export.rows(root)
    return {r["student_id"]: (r["score"], r["timestamp"], r["error"]) for r in rows}


@pytest.mark.parametrize("stamp", ["mañana a las cinco", "9" * 40, "2026-13-45 99:99"])
def test_merge_only_with_a_bad_timestamp_merges_everyone(gradebook_course, capsys, stamp):
    bad = results.Result("mallory", LAB.id, cells=[_cell(3)], timestamp=stamp)
    results.write(gradebook_course / "autograded", bad)
    assert grade.run(root=gradebook_course, merge_only=True) == 0
    captured = capsys.readouterr()
    assert "3 entregas en gradebook.db; 0 sin calificar." in captured.out
    assert "mallory · 01_atencion: la hora de entrega" in captured.err
    scores = _scores(gradebook_course)
    assert scores["mallory"] == ("3", "", "")
    assert scores["ana"][:1] == ("10",) and scores["beto"][:1] == ("4",)
    assert str(scores["ana"][1]).startswith("2026-01-01 10:00:00")


@pytest.mark.parametrize(
    ("text", "warned"),
    [
        ("2026-01-01 10:00:00.000000 UTC", ""),
        ("nbgrader submit dijo: ayer", "no es una fecha"),
        ("", ""),
    ],
)
def test_grading_reads_timestamp_as_nbgrader_does(tmp_path, text, warned):
    (tmp_path / "timestamp.txt").write_text(text)
    warnings = []
    stamp = batch._timestamp(tmp_path, warnings)
    assert (stamp == "2026-01-01 10:00:00") == (text.startswith("2026")), stamp
    assert warned in " ".join(warnings) and bool(warnings) == bool(warned)


def test_a_linked_or_special_timestamp_is_not_read(tmp_path, alarm):
    os.mkfifo(tmp_path / "timestamp.txt")  # leerla bloquearía al calificador
    warnings = []
    assert batch._timestamp(tmp_path, warnings) == ""
    assert warnings == [
        "se ignora timestamp.txt: no es un archivo normal; se califica sin hora de entrega"
    ]


# --- terminal y hoja de cálculo ----------------------------------------------------------


def _with_students(root: Path, names: list[str]) -> None:
    """Estudiantes con esos nombres en ``autograded/`` y en ``gradebook.db``, como los habría
    unido una versión del curso anterior a la regla de los nombres (``course.names``)."""
    found = [results.Result(name, LAB.id, cells=[_cell(7)]) for name in names]
    for result in found:
        results.write(root / "autograded", result)
    with mock.patch.object(results, "_admitted", lambda student: True):
        results.merge(found, root / "gradebook.db")


def test_names_from_outside_are_printed_escaped(gradebook_course, tmp_path, capsys):
    hostile = f"eve{ESCAPE}"
    _with_students(gradebook_course, [hostile])
    broken = results.Result("zed", LAB.id, error=f"NameError: {ESCAPE}verde")
    results.write(gradebook_course / "autograded", broken)
    grade.run(root=gradebook_course, merge_only=True)
    archive = _zip(tmp_path / "aula.zip", {f"{ESCAPE}/01_atencion.ipynb": "{}"})
    batch._unzip(archive, tmp_path / "out", None)
    with pytest.raises(labs.CourseError) as error:
        feedback.run(students=[f"x{ESCAPE}"], root=gradebook_course)
    captured = capsys.readouterr()
    for text in (captured.out, captured.err, str(error.value)):
        assert "\x1b" not in text
    assert "eve\\x1b[2J\\x1b[32m" in captured.out
    assert "zed · 01_atencion: NameError: \\x1b[2J" in captured.out
    assert "aula.zip: \\x1b[2J\\x1b[32m/: se rechaza la carpeta" in captured.err


@pytest.mark.parametrize("excel", [False, True])
def test_export_never_writes_a_formula(gradebook_course, tmp_path, excel):
    _with_students(gradebook_course, list(FORMULAS))
    broken = results.Result("zed", LAB.id, error='=HYPERLINK("http://x";"ver")')
    results.write(gradebook_course / "autograded", broken)
    assert grade.run(root=gradebook_course, merge_only=True) == 1
    out = tmp_path / "notas.csv"
    assert export.run(str(out), root=gradebook_course, excel=excel) == 0
    text = out.read_text(encoding="utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text), delimiter=";" if excel else ","))
    ids = {row["student_id"] for row in rows}
    assert ids == {"ana", "beto", "zed", *(f"'{name}" for name in FORMULAS)}
    for row in rows:
        for column, value in row.items():
            assert not value.startswith(export.FORMULA_START), (column, value)
    zed = next(row for row in rows if row["student_id"] == "zed")
    assert zed["error"].startswith("'=HYPERLINK")
    scores = {row["student_id"]: (row["score"], row["max_score"]) for row in rows}
    assert scores["ana"] == ("10", "10") and scores["'+A1+1"] == ("7", "10")


# --- por la puerta de verdad: grade --zip con enlaces, FIFO y mallory ---------------------


needs_bwrap = pytest.mark.skipif(
    bool(sandbox.available()), reason=f"sin aislamiento aquí: {sandbox.available()}"
)


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """Una clase del laboratorio 1 calificada una vez con ``grade --zip``.

    ana entrega la solución (80 automáticos) y beto la versión en blanco con un
    ``timestamp.txt`` que no es fecha; eve enlaza su cuaderno a ``source/``, hugo entrega
    un enlace duro a una copia de la solución, fifi una FIFO y lia una carpeta de entrega
    que es un enlace a la de ana. Desde el zip: mallory sube ``ana_01_atencion.ipynb`` en
    blanco en su carpeta, un cuaderno suelto con el mismo nombre, y ``+A1+1`` su entrega
    (que se rechaza por el nombre).
    """
    root = tmp_path_factory.mktemp("curso-puertas")
    submitted = root / "submitted"

    def folder(student: str) -> Path:
        return classroom.submission(root, student, LAB)

    folder("ana").write_text(LAB.source.read_text())
    folder("beto").write_text(LAB.release.read_text())
    (submitted / "beto" / LAB.id / "timestamp.txt").write_text("cuando me dio la gana")
    folder("eve").symlink_to(LAB.source)
    copy = root / "copia_de_la_solucion.ipynb"
    shutil.copyfile(LAB.source, copy)
    os.link(copy, folder("hugo"))
    os.mkfifo(folder("fifi"))
    (submitted / "lia").mkdir()
    (submitted / "lia" / LAB.id).symlink_to(submitted / "ana" / LAB.id)
    archive = _zip(
        root / "aula.zip",
        {
            "mallory/ana_01_atencion.ipynb": LAB.release.read_text(),
            "ana_01_atencion.ipynb": LAB.release.read_text(),
            "+A1+1/01_atencion.ipynb": LAB.release.read_text(),
        },
    )
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = grade.run(root=root, zips=[str(archive)], jobs=2, timeout=30, progress=False)
        feedback.run(root=root)
    return root, status, out.getvalue(), err.getvalue()


def _found(root: Path) -> dict[str, results.Result]:
    return {r.student: r for r in results.read_all(root / "autograded")}


def _page(root: Path, student: str) -> str:
    page = root / "feedback" / student / LAB.id / f"{LAB.id}.html"
    return page.read_text() if page.exists() else ""


SECRET = secret_lines(c.source for c in nbformat.read(LAB.source, 4).cells)


@pytest.mark.slow
@needs_bwrap
def test_links_fifos_and_uploads_named_after_others_gain_nothing(graded_class):
    root, status, out, err = graded_class
    found = _found(root)
    assert status == 1  # eve, hugo, fifi y lia no se califican
    # ana: su nota, en calificacion.json y en gradebook.db, no la cambia nadie
    assert found["ana"].auto_points == 80 and not found["ana"].error
    scores = {row["student_id"]: row for row in export.rows(root)}
    assert scores["ana"]["raw_score"] == "80" and not scores["ana"]["error"]
    # mallory: su subida cuenta como suya (en blanco: 0), el cuaderno suelto no cuenta
    assert found["mallory"].auto_points == 0 and not found["mallory"].error
    assert "se ignora «ana_01_atencion.ipynb» en aula.zip" in err
    assert "+A1+1" not in found  # la regla de los nombres: ni se califica ni se une
    assert "aula.zip: +A1+1/: se rechaza la carpeta: «+A1+1» no vale como nombre" in out
    # enlaces y archivos especiales: error en español, sin puntos ni soluciones
    expected = {
        "eve": "es un enlace simbólico",
        "hugo": "es un enlace duro",
        "fifi": "no es un archivo normal",
        "lia": "«lia/01_atencion» es un enlace simbólico",
    }
    for student, reason in expected.items():
        result = found[student]
        assert reason in result.error and "se rechaza" in result.error, (student, result.error)
        assert not result.cells and str(scores[student]["raw_score"]) == "0"
        assert not (root / "autograded" / student / LAB.id / f"{LAB.id}.ipynb").exists()
        page = _page(root, student)
        assert page and not [line for line in SECRET if line in page], student
        assert f"✘ {student} · {LAB.id}: se rechaza" in out
    # beto: una hora que no es fecha solo le cuesta un aviso; se unió como los demás
    assert (
        found["beto"].auto_points == 0 and not found["beto"].error and not found["beto"].timestamp
    )
    assert "beto · 01_atencion: timestamp.txt no es una fecha" in out
    assert scores["beto"]["timestamp"] == "" and not scores["beto"]["error"]
    assert "3 entregas en gradebook.db; 4 sin calificar." in out  # +A1+1, rechazado


# --- nbgrader collect con un intercambio de verdad -----------------------------------------

STAMP = "2026-01-01 10:00:00.000000 UTC"


def _inbound(exchange: Path, name: str, notebook: str | None = None) -> Path:
    folder = exchange / "transformer-es" / "inbound" / name
    folder.mkdir(parents=True)
    if notebook is not None:
        (folder / f"{LAB.id}.ipynb").write_text(notebook)
        (folder / "timestamp.txt").write_text(STAMP)
    return folder


@pytest.mark.slow
def test_collect_copies_no_link_special_file_or_bad_timestamp(tmp_path):
    exchange, course = tmp_path / "intercambio", tmp_path / "curso"
    exchange.mkdir(mode=0o777)
    course.mkdir()
    blank = LAB.release.read_text()
    _inbound(exchange, f"dani+{LAB.id}+{STAMP}", blank)  # honesta
    eve = _inbound(exchange, f"eve+{LAB.id}+{STAMP}")
    (eve / f"{LAB.id}.ipynb").symlink_to(LAB.source)
    (eve / "timestamp.txt").write_text(STAMP)
    hugo = _inbound(exchange, f"hugo+{LAB.id}+{STAMP}", blank)
    shutil.copyfile(LAB.source, tmp_path / "solucion.ipynb")
    (hugo / f"{LAB.id}.ipynb").unlink()
    os.link(tmp_path / "solucion.ipynb", hugo / f"{LAB.id}.ipynb")
    os.mkfifo(hugo / "tuberia")
    beto = _inbound(exchange, f"beto+{LAB.id}+{STAMP}", blank)
    (beto / "timestamp.txt").write_text("cuando quise")
    _inbound(exchange, f"carla+{LAB.id}+no es una hora", blank)
    done = classroom.collect(LAB, exchange, course, "--ExchangeCollect.check_owner=False")
    assert done.returncode == 0, done.stderr
    submitted = course / "submitted"
    assert (submitted / "dani" / LAB.id / f"{LAB.id}.ipynb").read_text() == blank
    assert (submitted / "dani" / LAB.id / "timestamp.txt").read_text() == STAMP
    assert not (submitted / "eve" / LAB.id / f"{LAB.id}.ipynb").exists()
    assert not (submitted / "hugo" / LAB.id / f"{LAB.id}.ipynb").exists()
    assert not (submitted / "hugo" / LAB.id / "tuberia").exists()
    assert (submitted / "beto" / LAB.id / f"{LAB.id}.ipynb").read_text() == blank
    assert not (submitted / "beto" / LAB.id / "timestamp.txt").exists()
    assert not (submitted / "carla" / LAB.id).exists()
    assert "es un enlace simbólico" in done.stderr and "es un enlace duro" in done.stderr
    assert "«timestamp.txt»: no es una fecha" in done.stderr
    assert "la hora del nombre no es una fecha" in done.stderr
    solution = LAB.source.read_bytes()
    for path in submitted.rglob("*"):
        assert path.is_dir() or (not path.is_symlink() and path.read_bytes() != solution)


@pytest.mark.slow
def test_collect_refuses_a_folder_that_claims_someone_else(tmp_path):
    exchange, course = tmp_path / "intercambio", tmp_path / "curso"
    exchange.mkdir(mode=0o777)
    course.mkdir()
    me = pwd.getpwuid(os.getuid()).pw_name
    _inbound(exchange, f"{me}+{LAB.id}+{STAMP}", LAB.release.read_text())
    _inbound(exchange, f"ana+{LAB.id}+{STAMP}", "{}")  # de mallory (de este usuario)
    done = classroom.collect(LAB, exchange, course)
    assert done.returncode == 0, done.stderr
    assert (course / "submitted" / me / LAB.id / f"{LAB.id}.ipynb").exists()
    assert not (course / "submitted" / "ana" / LAB.id).exists()
    assert f"dice ser de «ana» pero su dueño es «{me}»" in done.stderr
