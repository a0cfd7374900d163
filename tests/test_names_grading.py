"""Quién entregó, según el nombre de su carpeta (course.grading.students y batch.gather).

Sin calificar (capa rápida): qué tareas salen de ``submitted/`` y de un zip, y qué se
rechaza. La calificación de verdad de un zip de Moodle y de un nombre hostil con
``course grade --jobs 2`` está en ``tests/test_names_door.py``.
"""

import zipfile
from pathlib import Path

import pytest

from course import labs, names
from course.grading import batch, results, students

LAB = labs.get("01_atencion")
HOSTILE = '"-alert(1)-"'


def _submit(root: Path, folder: str, lab: str = LAB.id) -> None:
    place = root / "submitted" / folder / lab
    place.mkdir(parents=True)
    (place / f"{lab}.ipynb").write_text("{}")


def _gather(root: Path, zips: list[Path] = ()) -> tuple[dict, list[str]]:
    refused: list[str] = []
    found = batch.gather(
        root / "submitted", [str(z) for z in zips], root / "out", None, None, refused
    )
    return {(t.student, t.lab): t for t in found}, refused


def moodle_zip(path: Path, notebooks: dict[str, str], extra: dict[str, str] = ()) -> Path:
    """Un zip como «Descargar todas las entregas» de Moodle (con «Descargar entregas en
    carpetas», lo habitual desde Moodle 3.1): una carpeta
    ``<nombre completo>_<participante>_assignsubmission_file_/`` por estudiante con sus
    archivos, y ``…_assignsubmission_onlinetext_/onlinetext.html`` si hubo texto en línea."""
    with zipfile.ZipFile(path, "w") as bundle:
        for folder, text in notebooks.items():
            bundle.writestr(f"{folder}_assignsubmission_file_/{LAB.id}.ipynb", text)
        for folder, text in dict(extra).items():
            bundle.writestr(f"{folder}_assignsubmission_onlinetext_/onlinetext.html", text)
    return path


@pytest.mark.parametrize(
    ("folder", "student", "name"),
    [
        ("ana", "ana", ""),
        ("José Pérez_123456_assignsubmission_file_", "123456", "José Pérez"),
        ("María José Núñez-Ávila_77_assignsubmission_onlinetext_", "77", "María José Núñez-Ávila"),
        ("Participante_4242_assignsubmission_file_", "4242", "Participante"),
    ],
)
def test_a_folder_names_its_student(folder, student, name):
    assert students.identify(folder) == students.Student(student, name)


@pytest.mark.parametrize(
    "folder",
    [
        "José Pérez",  # un nombre con espacio y tilde que no es de Moodle
        "Ana López_12_assignsubmission_",  # sin el tipo de entrega: no es de Moodle
        "<img src=x onerror=alert(1)>_12_assignsubmission_file_x",
        HOSTILE,
        "ana@uni.es",
    ],
)
def test_a_folder_that_names_nobody_is_refused(folder):
    with pytest.raises(names.BadName, match="no vale como nombre de estudiante"):
        students.identify(folder)


def test_bad_names_in_submitted_are_refused_and_the_rest_graded(tmp_path, capsys):
    for folder in ("ana", "beto", HOSTILE, "josé", ".oculto"):
        _submit(tmp_path, folder)
    found, refused = _gather(tmp_path)
    assert set(found) == {("ana", LAB.id), ("beto", LAB.id)}
    assert all(t.notebook is not None for t in found.values())
    assert len(refused) == 3, refused
    assert any("submitted/.oculto/: se rechaza la carpeta" in r for r in refused)
    assert any(f"«{HOSTILE}» no vale como nombre de estudiante: solo letras" in r for r in refused)
    assert any("submitted/josé/: se rechaza la carpeta" in r for r in refused)
    assert f"«{HOSTILE}» no vale" in capsys.readouterr().err


def test_two_spellings_of_one_student_are_an_error_naming_both(tmp_path):
    _submit(tmp_path, "Ana")
    _submit(tmp_path, "ana", "02_normalizacion")
    _submit(tmp_path, "beto")
    found, refused = _gather(tmp_path)
    assert not refused
    for key in (("Ana", LAB.id), ("ana", "02_normalizacion")):
        task = found[key]
        assert task.notebook is None
        assert "«Ana» y «ana» son el mismo estudiante" in task.problem
        assert "submitted/Ana/01_atencion/" in task.problem
        assert "submitted/ana/02_normalizacion/" in task.problem
    assert found[("beto", LAB.id)].notebook is not None


def test_moodle_download_maps_folders_to_ids_and_keeps_names(tmp_path):
    archive = moodle_zip(
        tmp_path / "moodle.zip",
        {"José Pérez_101": "{}", "María Núñez_102": "{}", "Zoë O'Neil_103": "{}"},
        {"María Núñez_102": "<p>Entregado</p>"},
    )
    found, refused = _gather(tmp_path, [archive])
    assert not refused
    assert {k: (t.name, t.notebook is not None) for k, t in found.items()} == {
        ("101", LAB.id): ("José Pérez", True),
        ("102", LAB.id): ("María Núñez", True),
        ("103", LAB.id): ("Zoë O'Neil", True),
    }
    assert "moodle.zip: José Pérez_101_assignsubmission_file_/01_atencion.ipynb" in (
        found[("101", LAB.id)].origin
    )


def test_two_moodle_folders_for_one_id_are_an_error_naming_both(tmp_path):
    archive = moodle_zip(tmp_path / "moodle.zip", {"Ana López_7": "{}", "Ana Lopez_7": "{}"})
    found, _ = _gather(tmp_path, [archive])
    task = found[("7", LAB.id)]
    assert task.notebook is None
    assert "Ana López_7_assignsubmission_file_" in task.problem
    assert "Ana Lopez_7_assignsubmission_file_" in task.problem


def test_a_moodle_id_and_a_submitted_folder_for_it_are_two_submissions(tmp_path):
    _submit(tmp_path, "101")
    archive = moodle_zip(tmp_path / "moodle.zip", {"José Pérez_101": "{}"})
    found, _ = _gather(tmp_path, [archive])
    assert "hay 2 entregas" in found[("101", LAB.id)].problem


def test_hostile_folder_in_a_zip_is_refused_by_name(tmp_path):
    with zipfile.ZipFile(tmp_path / "aula.zip", "w") as bundle:
        bundle.writestr(f"{HOSTILE}/{LAB.id}/{LAB.id}.ipynb", "{}")
        bundle.writestr(f"ana/{LAB.id}/{LAB.id}.ipynb", "{}")
    found, refused = _gather(tmp_path, [tmp_path / "aula.zip"])
    assert set(found) == {("ana", LAB.id)}
    assert refused == [
        f"aula.zip: {HOSTILE}/: se rechaza la carpeta: «{HOSTILE}» no vale como nombre de"
        f" estudiante: {names.ALLOWED}."
    ]


def test_merge_never_adds_a_student_whose_name_breaks_the_rule(tmp_path, one_cell_gradebook):
    one_cell_gradebook(tmp_path, LAB.id, "ej1_puntuaciones_prueba")
    cell = {"grade_id": "ej1_puntuaciones_prueba", "points": 10, "max_points": 10}
    found = [
        results.Result(HOSTILE, LAB.id, cells=[cell]),
        results.Result("101", LAB.id, cells=[cell], name="José Pérez"),
    ]
    assert results.merge(found, tmp_path / "gradebook.db") == 1
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        assert [(s.id, s.last_name) for s in gradebook.students] == [("101", "José Pérez")]


def test_a_subfolder_inside_a_moodle_folder_never_says_who_submitted(tmp_path):
    """Moodle deja subir carpetas: la de mallory puede traer ``ana/01_atencion.ipynb``."""
    with zipfile.ZipFile(tmp_path / "moodle.zip", "w") as bundle:
        folder = "Mallory Ruiz_9_assignsubmission_file_"
        bundle.writestr(f"{folder}/ana/{LAB.id}.ipynb", "{}")
        bundle.writestr(f"{folder}/ana/02_normalizacion/02_normalizacion.ipynb", "{}")
    found, refused = _gather(tmp_path, [tmp_path / "moodle.zip"])
    assert not refused
    assert set(found) == {("9", LAB.id), ("9", "02_normalizacion")}
    assert all(t.name == "Mallory Ruiz" and t.notebook for t in found.values())
