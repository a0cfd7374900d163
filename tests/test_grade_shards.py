"""``grade`` para un planificador, sin núcleos: fragmentos que solo califican, una unión al
final que comprueba que no falta nada, y códigos de salida que distinguen «alguna entrega
rota» (1) de «falló el calificador» (3).

La calificación de cada entrega se sustituye por una falsa (``grade_all``) que escribe el
resultado en ``autograded/`` como lo haría la de verdad; la unión en
``gradebook.db`` (que prepara el curso con nbgrader) se sustituye por una que apunta a
quién unió.
"""

import sys

import nbformat
import pytest

from course import cli, labs
from course.commands import grade
from course.grading import batch, kernel_view, results

LAB = "01_atencion"
CLASS = [f"est{n:02d}" for n in range(12)]
BROKEN = "est05"  # su entrega «no se puede calificar»


@pytest.fixture
def course_root(tmp_path, monkeypatch):
    for student in CLASS:
        folder = tmp_path / "submitted" / student / LAB
        folder.mkdir(parents=True)
        nbformat.write(nbformat.v4.new_notebook(), folder / f"{LAB}.ipynb")
    merged = []
    monkeypatch.setattr(grade, "_require_sandbox", lambda sandboxed: None)
    monkeypatch.setattr(grade, "_memory_guard", lambda: None)
    monkeypatch.setattr(kernel_view, "require", lambda: None)
    monkeypatch.setattr(batch, "grade_all", _fake_grade_all)
    monkeypatch.setattr(results, "merge", lambda found, db: merged.append(found) or len(found))
    monkeypatch.setattr(results, "with_manual_scores", lambda found, db: found)
    monkeypatch.setattr(grade.run, "__defaults__", (tmp_path, *grade.run.__defaults__[1:]))
    return tmp_path, merged


def _fake_grade_all(tasks, autograded, jobs, settings=None, progress=True):
    found = []
    for task in tasks:
        result = results.Result(task.student, task.lab)
        if task.student == BROKEN:
            result.error = "el cuaderno no es JSON"
        results.write(autograded, result)
        found.append(result)
    return found


def _students(text: str) -> set[str]:
    return {student for student in CLASS if student in text}


def test_each_shard_grades_only_its_own_and_never_merges(course_root, capsys):
    root, merged = course_root
    seen = []
    for index in range(1, 5):
        code = cli.main(["grade", "--shard", f"{index}/4"])
        out = capsys.readouterr().out
        own = _students(out)
        assert code == (1 if BROKEN in own else 0), out
        assert f"Fragmento {index}/4" in out
        seen.append(own)
    assert not merged, "un fragmento unió en gradebook.db"
    assert sorted(s for own in seen for s in own) == CLASS  # sin solaparse y sin faltar nadie
    graded = {r.student for r in results.read_all(root / "autograded")}
    assert graded == set(CLASS)


def test_the_merge_lists_what_a_dead_shard_left_and_exits_3(course_root, capsys):
    root, merged = course_root
    for index in (1, 2, 4):  # el fragmento 3 murió
        cli.main(["grade", "--shard", f"{index}/4"])
    capsys.readouterr()
    assert cli.main(["grade", "--merge-only"]) == 3
    out = capsys.readouterr().out
    tasks = batch.gather(root / "submitted", None, root, shard="3/4")
    assert tasks
    missing = out.split("faltan", 1)[1]
    assert _students(missing) == {t.student for t in tasks}
    assert cli.main(["grade", "--shard", "3/4"]) in (0, 1)
    assert cli.main(["grade", "--merge-only"]) == 1  # completa, con la entrega rota
    out = capsys.readouterr().out
    assert f"✘ {BROKEN} · {LAB}" in out and "faltan" not in out
    assert len(merged[-1]) == len(CLASS)


def test_a_class_without_broken_submissions_exits_0(course_root, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "BROKEN", "nadie")
    assert cli.main(["grade"]) == 0


def test_an_empty_shard_exits_0_before_the_start_up_checks(course_root, monkeypatch, capsys):
    root, _ = course_root
    checked = []
    monkeypatch.setattr(kernel_view, "require", lambda: checked.append("núcleo"))
    tasks = batch.gather(root / "submitted", None, root)
    sizes = {i: len(batch.select_shard(tasks, f"{i}/16")) for i in range(1, 17)}
    empty, full = min(sizes, key=sizes.get), max(sizes, key=sizes.get)
    assert sizes[empty] == 0 and sizes[full] > 0
    assert cli.main(["grade", "--shard", f"{empty}/16"]) == 0
    assert checked == [] and "No hay entregas" in capsys.readouterr().out
    cli.main(["grade", "--shard", f"{full}/16"])
    assert checked == ["núcleo"]  # con entregas, sí se comprueba


def test_a_grader_failure_exits_3_not_1(course_root, monkeypatch, capsys):
    def failing(*args, **kwargs):
        raise RuntimeError("se cayó el calificador")

    monkeypatch.setattr(batch, "grade_all", failing)
    assert cli.main(["grade", "--shard", "2/4"]) == 3
    assert "falló el calificador" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv", [["--shard", "5/4"], ["--shard", "1/2", "--merge-only"], ["--lab", "no_existe"]]
)
def test_misuse_exits_2(course_root, argv):
    assert cli.main(["grade", *argv]) == 2


def test_the_help_documents_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        cli.main(["grade", "--help"])
    out = capsys.readouterr().out
    for code in range(4):
        assert f"  {code}  " in out
    assert labs.get(LAB)
