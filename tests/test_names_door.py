"""La regla de los nombres por las puertas de verdad (issue 32, puntos 1 y 6).

- ``course grade --jobs 2`` de una clase con una carpeta ``submitted/`` cuyo nombre es
  JavaScript, dos carpetas ``Beto`` y ``beto``, y un zip de Moodle construido como lo
  nombra «Descargar todas las entregas» (nombres con espacios, tildes y apóstrofo, y la
  carpeta del texto en línea): la carpeta hostil se rechaza con el motivo en español y
  nunca llega a ``gradebook.db``; los de Moodle se califican con su número y su nombre.
- ``nbgrader collect`` con una carpeta de ``inbound/`` que se llama así.
- Formgrader en Chromium con un ``gradebook.db`` anterior a la regla (el estudiante hostil
  se añade con la API de nbgrader): su identificador y su nombre se ven como texto y no
  corren.
"""

import json
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import quote

import classroom
import live_server
import pytest

from course import labs
from course.commands import jupyter_es
from course.grading import sandbox

LAB = labs.get("01_atencion")
HOSTILE = 'x";window.__pwned=1;"'
TAG = '<img src=x onerror="window.__pwned=2">'
STAMP = "2026-01-01 10:00:00.000000 UTC"
MOODLE = {  # carpeta de Moodle (sin «_assignsubmission_file_») -> cuaderno
    "José Pérez_101": "source",
    "María Núñez Ávila_102": "release",
    "Zoë O'Neil_103": "release",
}


def _moodle_zip(path: Path) -> Path:
    """Como lo descarga Moodle ≥ 3.1 con «Descargar entregas en carpetas» (lo habitual):
    ``<nombre completo>_<participante>_assignsubmission_<tipo>_/<archivo>``."""
    with zipfile.ZipFile(path, "w") as bundle:
        for folder, which in MOODLE.items():
            text = getattr(LAB, which).read_text()
            bundle.writestr(f"{folder}_assignsubmission_file_/{LAB.id}.ipynb", text)
        bundle.writestr(
            "María Núñez Ávila_102_assignsubmission_onlinetext_/onlinetext.html", "<p>Listo</p>"
        )
    return path


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    if sandbox.available():
        pytest.skip(f"sin aislamiento: {sandbox.available()}")
    root = classroom.course_copy(tmp_path_factory.mktemp("curso-nombres"))
    for student, which in (("ana", "source"), (HOSTILE, "source"), ("Beto", "release")):
        classroom.submission(root, student, LAB).write_text(getattr(LAB, which).read_text())
    lower = root / "submitted" / "beto" / "02_normalizacion"
    lower.mkdir(parents=True)
    (lower / "02_normalizacion.ipynb").write_text(labs.get("02_normalizacion").release.read_text())
    archive = _moodle_zip(root / "moodle.zip")
    code = (
        "import sys; from pathlib import Path; from course.commands import grade;"
        f" sys.exit(grade.run(root=Path({str(root)!r}), zips=[{str(archive)!r}], jobs=2,"
        " timeout=30, progress=False))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    return root, done


def _students(root: Path) -> dict[str, tuple]:
    with sqlite3.connect(root / "gradebook.db") as db:
        return {
            row[0]: row[1:] for row in db.execute("select id, first_name, last_name from student")
        }


def _score(root: Path, student: str) -> float:
    found = json.loads((root / "autograded" / student / LAB.id / "calificacion.json").read_text())
    return sum(c["points"] or 0 for c in found["cells"])


@pytest.mark.slow
def test_grade_refuses_a_hostile_folder_and_grades_moodle_by_number(graded):
    root, done = graded
    out = done.stdout
    assert done.returncode == 1, out[-3000:] + done.stderr[-3000:]
    refusal = (
        f"✘ submitted/{HOSTILE}/: se rechaza la carpeta: «{HOSTILE}» no vale como nombre de"
        " estudiante: solo letras sin tilde (a-z, A-Z), cifras"
    )
    assert refusal in out
    students = _students(root)
    assert HOSTILE not in students and not any("pwned" in s for s in students)
    assert not any("pwned" in p.name for p in (root / "autograded").iterdir())
    # Moodle: el número es el estudiante y el nombre completo se guarda para mostrarlo
    assert {s: students[s][1] for s in ("101", "102", "103")} == {
        "101": "José Pérez",
        "102": "María Núñez Ávila",
        "103": "Zoë O'Neil",
    }
    assert _score(root, "101") == 80 and _score(root, "102") == 0 and _score(root, "ana") == 80
    assert "101 (José Pérez)" in out and "102 (María Núñez Ávila)" in out
    # Beto y beto: el mismo estudiante con dos nombres, error que nombra las dos carpetas
    for line in (
        f"✘ Beto · {LAB.id}: «Beto» y «beto»",
        "✘ beto · 02_normalizacion: «Beto» y «beto»",
    ):
        assert line in out
    assert f"«submitted/Beto/{LAB.id}/{LAB.id}.ipynb» y «submitted/beto/02_normalizacion/" in out
    assert "Beto" not in students and "beto" not in students


@pytest.mark.slow
def test_collect_refuses_a_folder_named_like_code(tmp_path):
    exchange, course = tmp_path / "intercambio", tmp_path / "curso"
    inbound = exchange / "transformer-es" / "inbound"
    for student in ("dani", HOSTILE, "josé"):
        folder = inbound / f"{student}+{LAB.id}+{STAMP}"
        folder.mkdir(parents=True)
        (folder / f"{LAB.id}.ipynb").write_text(LAB.release.read_text())
        (folder / "timestamp.txt").write_text(STAMP)
    course.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "collect", LAB.id, f"--Exchange.root={exchange}",
         f"--CourseDirectory.root={course}", "--ExchangeCollect.check_owner=False",
         f"--CourseDirectory.db_url=sqlite:///{course / 'gradebook.db'}"],
        capture_output=True, text=True, timeout=300, cwd=labs.REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (course / "submitted").iterdir()) == ["dani"]
    assert f"«{HOSTILE}» no vale como nombre de estudiante" in done.stderr
    assert "«josé» no vale como nombre de estudiante" in done.stderr


@pytest.mark.slow
def test_nbgrader_autograde_refuses_a_folder_named_like_code(tmp_path):
    """La puerta de nbgrader: nbgrader añade el estudiante a ``gradebook.db`` antes de
    calificar (eso no se puede evitar desde la configuración), pero no se califica."""
    if sandbox.available():
        pytest.skip(f"sin aislamiento: {sandbox.available()}")
    root = classroom.nbgrader_course(tmp_path, LAB)
    classroom.submission(root, HOSTILE, LAB).write_text(LAB.source.read_text())
    done = subprocess.run(
        [str(Path(sys.executable).parent / "nbgrader"), "autograde", LAB.id, "--force"],
        cwd=root, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode != 0
    assert f"No se califica la carpeta de submitted/: «{HOSTILE}» no vale como nombre" in (
        done.stdout + done.stderr
    )
    assert not (root / "autograded" / HOSTILE / LAB.id / "calificacion.json").exists()
    with sqlite3.connect(root / "gradebook.db") as db:
        scored = db.execute(
            "select count(*) from grade join submitted_notebook on grade.notebook_id ="
            " submitted_notebook.id join submitted_assignment on"
            " submitted_notebook.assignment_id = submitted_assignment.id"
            " where submitted_assignment.student_id = ? and grade.auto_score > 0",
            (HOSTILE,),
        ).fetchone()[0]
    assert scored == 0


# --- Formgrader en Chromium, con un gradebook.db de antes de la regla --------------------


@pytest.fixture(scope="module")
def old_gradebook(graded):
    """El curso calificado, con un estudiante hostil añadido por la API de nbgrader (como
    lo habría dejado una versión anterior) y el nombre de 102 cambiado por HTML."""
    from nbgrader.api import Gradebook

    live_server.skip_without_chromium()
    root, _ = graded
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        gradebook.add_student(HOSTILE, first_name=TAG, last_name=TAG)
        gradebook.update_or_create_student("102", first_name=TAG, last_name=TAG)
    return root


@pytest.fixture(scope="module")
def formgrader(old_gradebook):
    assert jupyter_es.run() == 0  # activa course.jupyter.safety (el paso del README)
    with live_server.running("server", old_gradebook) as (base, token):
        yield base, token


@pytest.mark.slow
@pytest.mark.browser
def test_a_hostile_id_already_in_the_gradebook_renders_inert(old_gradebook, formgrader):
    base, token = formgrader
    hostile = quote(HOSTILE, safe="")
    pages = {
        f"{base}/formgrader/manage_students/{hostile}": "li.active",
        f"{base}/formgrader/manage_students/{hostile}/{LAB.id}": "li.active",
        f"{base}/formgrader/manage_students": "td.id",
        f"{base}/formgrader/submissions/{classroom.submission_id(old_gradebook, '102')}/": ".nbgrader_cell",
    }
    with live_server.chromium() as browser:
        page = browser.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(f"{base}/api/status?token={token}")
        for url, selector in pages.items():
            page.goto(url)
            page.wait_for_selector(selector, timeout=60_000)
            page.wait_for_timeout(1000)
            assert page.evaluate("typeof window.__pwned") == "undefined", url
            assert page.locator("img[onerror]").count() == 0, url
            if selector == "li.active" and LAB.id not in url:
                assert page.locator(selector).last.inner_text() == HOSTILE
        page.goto(f"{base}/formgrader/manage_students")
        page.wait_for_selector("td.id")
        page.wait_for_timeout(1500)
        assert HOSTILE in page.locator("table").inner_text()
        assert dialogs == []
