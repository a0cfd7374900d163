"""El profesor sin sorpresas (issue 15): notas manuales de Formgrader que sobreviven a una
recalificación, laboratorios y estudiantes mal escritos, mensajes para estudiantes,
``export`` a una ruta mala o para una hoja de cálculo en español y copias .bak."""

import copy
import csv
import sqlite3
import warnings

import nbformat
import pytest
from nbgrader.api import Gradebook

from course import cli, labs
from course.commands import export, feedback, grade
from course.grading import feedback_page, results
from course.text import hide_paths, shorten, student_message

LAB = labs.get("01_atencion")
OVERRIDDEN = "ej1_puntuaciones_prueba"  # una celda automática que la persona corrige a mano


def _all_right(student: str) -> results.Result:
    """Todas las celdas automáticas con sus puntos; las preguntas abiertas, pendientes."""
    cells = []
    for cell in nbformat.read(LAB.release, 4).cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            auto = None if cell.cell_type == "markdown" else meta["points"]
            cells.append(
                {"grade_id": meta["grade_id"], "points": auto, "max_points": meta["points"],
                 "message": ""}
            )  # fmt: skip
    return results.Result(student, LAB.id, cells=cells)


def _grades(db) -> dict[str, tuple]:
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{db}") as gradebook:
        warnings.simplefilter("ignore")
        notebook = gradebook.find_submission_notebook(LAB.id, LAB.id, "ana")
        found = {
            g.name: (g.auto_score, g.manual_score, g.needs_manual_grade) for g in notebook.grades
        }
        return found, gradebook.find_submission(LAB.id, "ana").score


def _grade_by_hand(db, scores: dict[str, float]) -> None:
    """Lo que hace Formgrader al guardar una nota: manual_score y needs_manual_grade."""
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{db}") as gradebook:
        warnings.simplefilter("ignore")
        for name, score in scores.items():
            found = gradebook.find_grade(name, LAB.id, LAB.id, "ana")
            found.manual_score, found.needs_manual_grade = score, False
        gradebook.db.commit()


def test_manual_grades_survive_a_regrade_and_the_table_agrees_with_the_gradebook(tmp_path):
    db = tmp_path / "gradebook.db"
    result = _all_right("ana")
    assert results.merge([copy.deepcopy(result)], db) == 1
    questions = [c.grade_id for c in result.cells if c.points is None]
    assert questions, "el laboratorio 1 tiene preguntas abiertas"
    _grade_by_hand(db, dict.fromkeys(questions, 3.0) | {OVERRIDDEN: 1.0})
    before, score = _grades(db)

    results.merge([copy.deepcopy(result)], db)  # la misma entrega, calificada otra vez
    after, score_after = _grades(db)
    assert after == before and score_after == score
    assert not any(needs for _, _, needs in after.values())

    shown = grade.table(results.with_manual_scores([copy.deepcopy(result)], db))
    row = next(line for line in shown.splitlines() if line.startswith("ana"))
    assert row.split()[1] == f"{score:g}/{result.max_points:g}"

    changed = copy.deepcopy(result)
    next(c for c in changed.cells if c.grade_id == OVERRIDDEN).points = 0.0
    results.merge([changed], db)
    flagged = {name for name, (_, _, needs) in _grades(db)[0].items() if needs}
    assert flagged == {OVERRIDDEN}  # la nota automática cambió bajo la nota manual


def test_old_gradebook_backups_are_pruned(tmp_path):
    db = tmp_path / "gradebook.db"
    sqlite3.connect(db).close()
    for _ in range(results.BACKUPS_KEPT + 3):
        results.backup(db)
    assert len(list(tmp_path.glob("gradebook.db.*.bak"))) == results.BACKUPS_KEPT


def test_grade_with_an_unknown_lab_fails_listing_the_labs(tmp_path, capsys):
    assert cli.main(["grade", "--lab", "01_atencio"]) == 2
    err = capsys.readouterr().err
    assert "Laboratorio desconocido: «01_atencio»" in err and "01_atencion" in err


@pytest.mark.parametrize(
    "options, shown",
    [
        (
            {"students": ["anna"]},
            "Estudiante desconocido: «anna». Estudiantes calificados: ana, beto.",
        ),
        ({"lab_ids": ["01_atencio"]}, "Laboratorio desconocido: «01_atencio»"),
    ],
)
def test_feedback_with_an_unknown_student_or_lab_writes_nothing(tmp_path, options, shown):
    for student in ("ana", "beto"):
        results.write(tmp_path / "autograded", _all_right(student))
    with pytest.raises(labs.CourseError, match=shown.replace(".", r"\.")):
        feedback.run(root=tmp_path, **options)
    assert not (tmp_path / "feedback").exists()


def test_a_broken_submission_message_hides_server_paths_and_cuts_between_words():
    path = "/tmp/course-zip-k3j/0/ana/01_atencion/01_atencion.ipynb"
    error = (
        f"«{path}» no es un cuaderno válido (JSON dañado o incompleto: "
        + "Expecting property name enclosed in double quotes " * 8
        + ")"
    )
    broken = results.Result("ana", LAB.id, error=error)
    page = feedback_page.summary(broken, set())
    assert "/tmp/" not in page and "«01_atencion.ipynb» no es un cuaderno válido" in page
    message = student_message(error)
    assert message.endswith("…") and len(message) <= 300
    assert message[:-1].split()[-1] in error.split()  # la última palabra, entera


def test_messages_helpers():
    assert hide_paths("en /home/prof/curso/x.py, línea 3") == "en x.py, línea 3"
    assert hide_paths("forma (B, T)/2 y i/n") == "forma (B, T)/2 y i/n"
    assert shorten("una frase corta") == "una frase corta"
    assert shorten("palabra " * 10, 30) == "palabra palabra palabra…"


def test_export_to_a_bad_path_is_a_spanish_error(tmp_path, capsys):
    target = tmp_path / "no_existe" / "notas.csv"
    assert cli.main(["export", "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert "No puedo escribir las notas" in err and "la carpeta no existe" in err
    assert "Traceback" not in err


def test_export_excel_writes_semicolons_decimal_commas_and_a_bom(tmp_path, monkeypatch):
    row = dict.fromkeys(export.COLUMNS, "") | {
        "assignment": LAB.id, "student_id": "íñigo", "raw_score": "72.5",
        "late_submission_penalty": "0", "score": "72.5", "max_score": "100",
    }  # fmt: skip
    monkeypatch.setattr(export, "rows", lambda root: [row])
    target = tmp_path / "notas.csv"
    assert export.run(str(target), tmp_path, excel=True) == 0
    raw = target.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbfassignment;duedate;")
    table = list(csv.DictReader(raw.decode("utf-8-sig").splitlines(), delimiter=";"))
    assert table[0]["student_id"] == "íñigo" and table[0]["score"] == "72,5"
    plain = tmp_path / "nbgrader.csv"
    export.run(str(plain), tmp_path)
    assert plain.read_bytes().startswith(b"assignment,duedate,") and b"72.5" in plain.read_bytes()
