"""El informe de la clase con resultados guardados a mano (sin calificar nada).

Las cifras esperadas se calculan aquí a mano o con ``statistics`` de la biblioteca
estándar, nunca con ``course.report``. La clase calificada de verdad está en
``tests/test_report_class.py`` (nivel lento).
"""

import statistics

import pytest

from course import cli
from course.grading import results
from course.jupyter import report as formgrader_report
from course.report import analysis, build, progress, stored

LAB = "01_atencion"
SECRET = "tensor([0.1234, 9.8765]) de la referencia"
HOSTILE = "<img src=x onerror=alert(1)>"
MISTAKE = "¿Has dividido entre √d_k?"
OTHER = "¿Normalizas sobre otro eje?"


def _cell(grade_id, points, most, message="", named=()):
    return results.Cell(grade_id, points, most, message, list(named))


def _student(autograded, student, a_visible, a_hidden, b, question=None, named_a=(), **kw):
    """Ejercicio A = ej1 (4 + 6 puntos), B = ej2 (10), pregunta_1 (8)."""
    cells = [
        _cell("ej1_puntuaciones_prueba", a_visible, 4, kw.get("message_a", ""), named_a),
        _cell("ej1_puntuaciones_oculta", a_hidden, 6, kw.get("message_a", SECRET), named_a),
        _cell("ej2_softmax_prueba", b, 10, kw.get("message_b", ""), kw.get("named_b", ())),
        _cell("pregunta_1", question, 8),
    ]
    results.write(autograded, results.Result(student, LAB, cells))


@pytest.fixture
def room(tmp_path):
    autograded = tmp_path / "autograded"
    _student(autograded, "ana_q", 4, 6, 10, 8)
    _student(autograded, "beto_q", 4, 0, 10, None, named_a=[MISTAKE])
    _student(autograded, "caro_q", 0, 0, 5, 4, message_a="NotImplementedError", named_b=[OTHER])
    _student(autograded, "dani_q", 4, 6, 0, None, named_b=[OTHER, MISTAKE])
    _student(autograded, HOSTILE, 0, 0, 0, 0, named_a=[MISTAKE])
    results.write(autograded, results.Result("eva_q", LAB, error="cuaderno dañado"))
    return tmp_path


def _items(root):
    report = analysis.analyse(stored.load(root), LAB)
    return report, {item.name: item for item in report.items}


def test_difficulty_and_item_rest_discrimination_match_the_formulas(room):
    report, items = _items(room)
    a, b = items["ej1_puntuaciones"], items["ej2_softmax"]
    shares_a = [1.0, 0.4, 0.0, 1.0, 0.0]  # ana, beto, caro, dani, hostil
    shares_b = [1.0, 1.0, 0.5, 0.0, 0.0]
    assert a.difficulty == pytest.approx(sum(shares_a) / 5)
    assert b.difficulty == pytest.approx(sum(shares_b) / 5)
    # Resto de A: B y la pregunta corregida (pendiente = sin puntos en el resto).
    rest_a = [10 + 8, 10, 5 + 4, 0, 0]
    assert a.discrimination == pytest.approx(statistics.correlation(shares_a, rest_a))
    rest_b = [10 + 8, 4, 0 + 4, 10, 0]
    assert b.discrimination == pytest.approx(statistics.correlation(shares_b, rest_b))
    assert sorted(report.submitted) == sorted(["ana_q", "beto_q", "caro_q", "dani_q", HOSTILE])
    assert report.failed == ["eva_q"]


def test_counts_of_submitted_attempted_passed_and_pending(room):
    _, items = _items(room)
    a, b, question = items["ej1_puntuaciones"], items["ej2_softmax"], items["pregunta_1"]
    assert (a.submitted, a.attempted, a.passed) == (5, 4, 2)  # caro no lo hizo
    assert (b.submitted, b.attempted, b.passed) == (5, 5, 2)
    assert (question.submitted, question.pending, len(question.shares)) == (5, 2, 3)
    assert question.histogram == [1, 0, 0, 0, 0, 1, 0, 0, 0, 1]  # 0, 4/8 y 8/8


def test_a_mistake_counts_once_per_student_and_the_most_frequent_goes_first(room):
    report, items = _items(room)
    # beto y el hostil, nombrados por la visible y la oculta: una vez cada uno.
    assert items["ej1_puntuaciones"].mistakes == [(MISTAKE, 2)]
    # caro y dani el mismo; dani además otro.
    assert items["ej2_softmax"].mistakes == [(OTHER, 2), (MISTAKE, 1)]
    assert report.by_student["dani_q"] == [("ej2_softmax", OTHER), ("ej2_softmax", MISTAKE)]
    assert "ana_q" not in report.by_student


def test_a_student_on_the_roster_without_a_submission_is_missing(room, one_cell_gradebook):
    from nbgrader.api import Gradebook

    db = one_cell_gradebook(room, "otro_lab", "celda")
    with Gradebook(f"sqlite:///{db}") as gradebook:
        gradebook.update_or_create_student("fede_q", first_name="Siete", last_name="Ausente")
    room_ = stored.load(room)
    assert room_.names["fede_q"] == "Siete Ausente"
    assert analysis.analyse(room_, LAB).missing == ["fede_q"]


def test_manual_grades_from_the_gradebook_replace_the_stored_points(tmp_path):
    from nbgrader.api import Gradebook

    autograded = tmp_path / "autograded"
    results.write(autograded, results.Result("ana", LAB, [_cell("pregunta_1", None, 8)]))
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        gradebook.update_or_create_assignment(LAB)
        gradebook.update_or_create_notebook(LAB, LAB)
        gradebook.update_or_create_task_cell(
            "pregunta_1", LAB, LAB, max_score=8, cell_type="markdown"
        )
        gradebook.update_or_create_student("ana")
        gradebook.update_or_create_submission(LAB, "ana")
        grade = gradebook.find_grade("pregunta_1", LAB, LAB, "ana")
        grade.manual_score = 6.0
        gradebook.db.commit()
    _, items = _items(tmp_path)
    assert items["pregunta_1"].pending == 0
    assert items["pregunta_1"].shares == [0.75]


def test_nothing_from_a_message_reaches_the_pages_and_names_are_escaped(room, tmp_path):
    written = build.write(room, tmp_path / "informe")
    assert {p.name for p in written} >= {"index.html", f"{LAB}.html", f"{LAB}_errores.csv"}
    for path in written:
        text = path.read_text(encoding="utf-8-sig")
        assert SECRET not in text and "0.1234" not in text, path.name
        if path.suffix == ".html":
            assert HOSTILE not in text, path.name
    page = (tmp_path / "informe" / f"{LAB}.html").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    table = (tmp_path / "informe" / f"{LAB}_ejercicios.csv").read_text(encoding="utf-8-sig")
    assert "ej1_puntuaciones;ejercicio;" in table and ";0,48;" in table  # coma decimal


def test_anonymous_pages_have_no_student_names(room, tmp_path):
    written = build.write(room, tmp_path / "informe", anonymous=True)
    assert not any("estudiantes" in p.name for p in written)
    for path in written:
        text = path.read_text(encoding="utf-8-sig")
        for student in ("ana_q", "beto_q", "caro_q", "dani_q", "eva_q", "&lt;img", "<img"):
            assert student not in text, (path.name, student)


def test_a_student_id_that_looks_like_a_formula_is_text_in_the_csv(tmp_path):
    results.write(
        tmp_path / "autograded",
        results.Result("+A1+1", LAB, [_cell("ej1_x_prueba", 0, 4, named=[MISTAKE])]),
    )
    build.write(tmp_path, tmp_path / "informe")
    table = (tmp_path / "informe" / f"{LAB}_estudiantes.csv").read_text(encoding="utf-8-sig")
    assert ";'+A1+1;" in table


def test_a_figure_label_cannot_close_its_script(tmp_path):
    closing = "</script><script>alert(1)</script>"
    cells = [_cell("ej1_puntuaciones_prueba", 0, 4, named=[closing])]
    results.write(tmp_path / "autograded", results.Result("ana", LAB, cells))
    build.write(tmp_path, tmp_path / "informe")
    page = (tmp_path / "informe" / f"{LAB}.html").read_text(encoding="utf-8")
    assert closing not in page and "<script>alert" not in page
    assert page.count('<script type="application/json"') == 4
    assert page.count("<script nonce=") == 2


def test_informe_speaks_spanish_and_exits_2_on_misuse(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["informe", "--help"])
    assert done.value.code == 0
    assert "--anonimo" in capsys.readouterr().out
    assert cli.main(["informe", "--lab", "99_nada", "-o", str(tmp_path / "x")]) == 2
    assert "Laboratorio desconocido" in capsys.readouterr().err
    (tmp_path / "archivo").write_text("")
    assert cli.main(["informe", "-o", str(tmp_path / "archivo")]) == 2
    with pytest.raises(SystemExit) as done:
        cli.main(["informe", "--opcion-que-no-existe"])
    assert done.value.code == 2


def test_progreso_shows_points_named_mistakes_and_what_to_review(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cells = [
        _cell("ej1_puntuaciones_prueba", 0, 5, SECRET, [MISTAKE]),
        _cell("ej1_puntuaciones_oculta", 0, 9, SECRET),
        _cell("ej2_softmax_prueba", 5, 5),
        _cell("pregunta_1", None, 8),
    ]
    progress.save(results.Result("", LAB, cells), tmp_path / "mi.ipynb")
    assert cli.main(["progreso"]) == 0
    out = capsys.readouterr().out
    assert "01_atencion" in out and "5 / 19 puntos automáticos" in out
    assert f"error: {MISTAKE}" in out
    assert "Repasa en el cuaderno: § 4. Ejercicio 1 · Puntuaciones escaladas" in out
    assert "02_normalizacion · " in out and "sin comprobar todavía" in out
    assert SECRET not in out and SECRET not in (progress.folder() / f"{LAB}.json").read_text()


def test_formgrader_menu_gets_the_report_tab():
    from jinja2 import DictLoader, Environment

    base = (
        '<li role="presentation"><a href="{{ base_url }}/formgrader/manage_students">'
        "Gestionar estudiantes</a></li>\n</ul>"
    )
    loader = formgrader_report.TabLoader(DictLoader({"base.tpl": base}))
    page = Environment(loader=loader).get_template("base.tpl").render(base_url="/b")
    assert (
        'Gestionar estudiantes</a></li>\n<li role="presentation"><a href="/b/formgrader/informe/">Informe de la clase</a></li>'
        in page
    )


def test_figure_data_cannot_close_its_script_even_if_a_label_is_not_escaped():
    from course.report import pages

    raw = {"data": [{"name": "</script><script>alert(1)//<!--"}], "layout": {}}
    page = pages._page("figura", [], {"f": raw}, "nonce")
    assert "<script>alert(1)" not in page and "<!--" not in page
