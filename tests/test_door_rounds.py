"""Una ronda de calificación por las puertas de nbgrader, desde un clon recién hecho.

Lo que hace el profesor en Formgrader, por las mismas órdenes que usan sus botones:

1. ``nbgrader autograde`` en un curso sin ``gradebook.db`` (un clon del repositorio, sin
   ``python -m course build``): califica, sellado, ana (solución) 80/80 y beto (en blanco) 0.
2. Como root, con la carpeta del curso de otro usuario (el profesor): todo lo que escribe
   la calificación queda de ese usuario, que puede volver a calificar.
3. Una persona califica a mano una pregunta abierta con un comentario; «Autocalificar»
   otra vez (``autograde --force``) no deshace esa nota ni vuelve a pedir la corrección.
4. ``nbgrader generate_feedback`` («Generar devolución») y ``python -m course feedback``
   escriben la misma página, en español, con el comentario y sin pruebas ocultas.
"""

import os
import pwd
import subprocess
import sys
from pathlib import Path

import classroom
import lxml.html
import nbformat
import pytest
import tampering
from nbgrader.api import Gradebook

from course import labs
from course.commands import feedback
from course.grading import sandbox

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(sandbox.available()), reason=f"sin aislamiento: {sandbox.available()}"),
]

LAB = labs.get("01_atencion")
BIN = Path(sys.executable).parent
OWNER = "daemon"  # el profesor, dueño de la carpeta del curso (una cuenta que Debian trae)
QUESTION = "pregunta_1"
COMMENT = "Bien razonado: falta decir por qué se divide entre la raíz de d_k."


def _nbgrader(root: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [str(BIN / "nbgrader"), *args], cwd=root, capture_output=True, text=True, timeout=900,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done


def _chown_tree(root: Path, user: str) -> None:
    account = pwd.getpwnam(user)
    for folder, subfolders, files in os.walk(root):
        for name in [*subfolders, *files]:
            os.chown(Path(folder) / name, account.pw_uid, account.pw_gid, follow_symlinks=False)
    os.chown(root, account.pw_uid, account.pw_gid)


def _grades(root: Path, student: str) -> dict:
    """grade id -> (auto, manual, needs_manual_grade) de ``student`` en ``gradebook.db``."""
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        submission = gradebook.find_submission(LAB.id, student)
        return {
            grade.name: (grade.auto_score, grade.manual_score, grade.needs_manual_grade)
            for notebook in submission.notebooks
            for grade in notebook.grades
        }


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """Un clon recién hecho (sin ``gradebook.db``) con dos entregas, calificado por
    ``nbgrader autograde``; como root, la carpeta del curso es del profesor."""
    root = classroom.course_copy(tmp_path_factory.mktemp("clon"))
    assert not (root / "gradebook.db").exists()
    solved = tampering.solved()
    for cell in solved.cells:  # ana también contesta la pregunta abierta
        if cell.metadata.get("nbgrader", {}).get("grade_id") == QUESTION:
            cell.source = "Para que el softmax no se sature cuando d_k crece."
    nbformat.write(solved, classroom.submission(root, "ana", LAB))
    nbformat.write(nbformat.read(LAB.release, 4), classroom.submission(root, "beto", LAB))
    if os.geteuid() == 0:
        _chown_tree(root, OWNER)
    _nbgrader(root, "autograde", LAB.id)
    return root


@pytest.fixture(scope="module")
def hand_graded(fresh):
    """La pregunta abierta de ana calificada a mano (como la guarda Formgrader) y
    «Autocalificar» otra vez sobre su entrega."""
    with Gradebook(f"sqlite:///{fresh / 'gradebook.db'}") as gradebook:
        grade = gradebook.find_grade(QUESTION, LAB.id, LAB.id, "ana")
        grade.manual_score, grade.needs_manual_grade = 7.0, False
        comment = gradebook.find_comment(QUESTION, LAB.id, LAB.id, "ana")
        comment.manual_comment = COMMENT
        gradebook.db.commit()
    _nbgrader(fresh, "autograde", LAB.id, "--force", "--student=ana")
    return fresh


def test_autograde_works_on_a_fresh_clone(fresh):
    automatic = {"ana": 80.0, "beto": 0.0}  # el lab. 1: 80 puntos de pruebas, 20 a mano
    for student, points in automatic.items():
        found = _grades(fresh, student)
        assert sum(auto or 0 for auto, _, _ in found.values()) == points, student
    assert _grades(fresh, "ana")[QUESTION] == (None, None, True)  # espera a una persona


def test_as_root_what_grading_wrote_belongs_to_the_course_owner(fresh):
    if os.geteuid() != 0:
        pytest.skip("solo como root")
    uid = pwd.getpwnam(OWNER).pw_uid
    written = [fresh / "gradebook.db", *(fresh / "autograded").rglob("*")]
    assert len(written) > 4
    assert [path for path in written if os.lstat(path).st_uid != uid] == []


def test_autograde_again_keeps_what_a_person_graded(hand_graded):
    found = _grades(hand_graded, "ana")
    assert found[QUESTION] == (None, 7.0, False)
    assert sum(auto or 0 for auto, _, _ in found.values()) == 80.0
    with Gradebook(f"sqlite:///{hand_graded / 'gradebook.db'}") as gradebook:
        comment = gradebook.find_comment(QUESTION, LAB.id, LAB.id, "ana")
        assert comment.manual_comment == COMMENT


def _hidden_test_lines() -> set[str]:
    """Las líneas de las pruebas ocultas del cuaderno fuente que no están en ninguna otra
    parte del cuaderno (sin las muy cortas)."""
    hidden, elsewhere, inside = set(), set(), False
    for cell in nbformat.read(LAB.source, 4).cells:
        for line in cell.source.splitlines():
            if "BEGIN HIDDEN TESTS" in line or "END HIDDEN TESTS" in line:
                inside = "BEGIN" in line
            else:
                (hidden if inside else elsewhere).add(line.strip())
    found = {line for line in hidden - elsewhere if len(line) > 12}
    assert len(found) > 5
    return found


def _page(root: Path, student: str) -> str:
    return (root / "feedback" / student / LAB.id / f"{LAB.id}.html").read_text(encoding="utf-8")


def test_feedback_is_one_spanish_page_with_the_comment_from_either_door(hand_graded):
    _nbgrader(hand_graded, "generate_feedback", LAB.id)
    by_nbgrader = {student: _page(hand_graded, student) for student in ("ana", "beto")}
    if os.geteuid() == 0:
        uid = pwd.getpwnam(OWNER).pw_uid
        written = [hand_graded / "feedback", *(hand_graded / "feedback").rglob("*")]
        assert [path for path in written if os.lstat(path).st_uid != uid] == []
    assert feedback.run(root=hand_graded) == 0
    hidden = _hidden_test_lines()
    for student, page in by_nbgrader.items():
        assert _page(hand_graded, student) == page, student  # la misma página
        text = lxml.html.fromstring(page).text_content()
        assert '<html lang="es">' in page and "Tu cuaderno calificado" in text
        shown = {line.strip() for line in text.splitlines()}
        assert hidden & shown == set(), student
    ana = lxml.html.fromstring(by_nbgrader["ana"]).text_content()
    assert COMMENT in ana and "Comentarios del profesor" in ana
    assert "Puntos: 87 / 100" in ana  # 80 automáticos y 7 a mano
    assert COMMENT not in by_nbgrader["beto"]
