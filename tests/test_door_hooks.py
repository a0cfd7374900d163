"""Lo que la puerta de nbgrader deja, como root, al dueño de la carpeta del curso
(``course/grading/door_hooks.py``); la ronda entera está en ``test_door_rounds.py``."""

import os
import pwd
from pathlib import Path

import pytest

from course.grading import door_hooks

OWNER = "daemon"  # el profesor: una cuenta que Debian trae


@pytest.fixture
def course(tmp_path) -> Path:
    if os.geteuid() != 0:
        pytest.skip("solo como root")
    root = tmp_path / "curso"
    root.mkdir()
    account = pwd.getpwnam(OWNER)
    os.chown(root, account.pw_uid, account.pw_gid)
    return root


def test_what_the_door_wrote_goes_to_the_course_owner(course):
    graded = course / "autograded" / "ana" / "01_atencion"
    graded.mkdir(parents=True)
    (graded / "01_atencion.ipynb").write_text("{}")
    (course / "gradebook.db").write_text("")
    notebook = course / "submitted" / "ana" / "01_atencion" / "01_atencion.ipynb"
    door_hooks.after_convert(notebooks=[str(notebook)])
    uid = pwd.getpwnam(OWNER).pw_uid
    written = [course / "autograded", course / "autograded" / "ana", graded,
               graded / "01_atencion.ipynb", course / "gradebook.db"]  # fmt: skip
    assert [path for path in written if path.stat().st_uid != uid] == []


def test_root_never_gives_away_what_a_link_points_to(course, tmp_path):
    outside = tmp_path / "fuera"
    outside.mkdir()
    (outside / "clave").write_text("de root")
    (course / "autograded" / "ana").mkdir(parents=True)
    (course / "autograded" / "ana" / "01_atencion").symlink_to(outside)
    notebook = course / "submitted" / "ana" / "01_atencion" / "01_atencion.ipynb"
    door_hooks.after_convert(notebooks=[str(notebook)])
    assert outside.stat().st_uid == 0 and (outside / "clave").stat().st_uid == 0
