"""``nbgrader collect`` toma la entrega más nueva *propia* de cada estudiante.

En el intercambio de nbgrader cualquier estudiante puede crear en ``inbound/`` una carpeta
con el nombre de otro (``beto+01_atencion+<hora posterior>``). ``SafeCollect``
(``course/grading/collect.py``) la rechaza porque su dueño no es beto; esta prueba
comprueba además que no tapa la última entrega de beto, ni la borra de ``submitted/`` al
recoger con ``--update``.

Las carpetas tienen dueños de verdad: como estudiantes sirven dos cuentas que todo Debian
trae (``daemon`` hace de beto, ``nobody`` de ana, que falsifica, y ``bin`` del profesor,
dueño de la carpeta del curso); no hace falta crear cuentas. Cambiar el dueño de una
carpeta pide ser root. Lo que recoge root queda del dueño de la carpeta del curso.
"""

import os
import pwd
from pathlib import Path

import classroom
import pytest

from course import labs

LAB = labs.get("01_atencion")
BETO, ANA, TEACHER = "daemon", "nobody", "bin"


def _stamp(hour: int) -> str:
    return f"2026-01-01 {hour:02d}:00:00.000000 UTC"


def _submit(exchange: Path, claimed: str, owner: str, hour: int, text: str) -> str:
    """Una carpeta de ``inbound/`` como la deja ``nbgrader submit``, del dueño ``owner``."""
    name = f"{claimed}+{LAB.id}+{_stamp(hour)}+abcdefabcdef"
    folder = exchange / "transformer-es" / "inbound" / name
    folder.mkdir(parents=True, mode=0o777)
    (folder / f"{LAB.id}.ipynb").write_text(text)
    (folder / "timestamp.txt").write_text(_stamp(hour))
    account = pwd.getpwnam(owner)
    for path in (folder, *folder.iterdir()):
        os.chown(path, account.pw_uid, account.pw_gid)
    return name


def _collected(course: Path, student: str) -> str:
    return (course / "submitted" / student / LAB.id / f"{LAB.id}.ipynb").read_text()


@pytest.mark.slow
def test_a_forged_newer_folder_neither_hides_nor_deletes_the_real_submission(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("cambiar el dueño de las carpetas del intercambio pide ser root")
    exchange, course = tmp_path / "intercambio", tmp_path / "curso"
    exchange.mkdir(mode=0o777)
    course.mkdir()
    teacher = pwd.getpwnam(TEACHER)
    os.chown(course, teacher.pw_uid, teacher.pw_gid)  # recoge root en la carpeta del profesor
    _submit(exchange, BETO, BETO, 9, "primera de beto")
    _submit(exchange, BETO, BETO, 10, "segunda de beto")
    _submit(exchange, ANA, ANA, 10, "de ana")
    forged = _submit(exchange, BETO, ANA, 11, "de ana, con el nombre de beto")

    done = classroom.collect(LAB, exchange, course)
    assert done.returncode == 0, done.stderr
    assert _collected(course, BETO) == "segunda de beto"
    assert _collected(course, ANA) == "de ana"
    assert f"Se rechaza la entrega «{forged}»" in done.stderr
    assert f"dice ser de «{BETO}» pero su dueño es «{ANA}»" in done.stderr
    collected = [course / "submitted", *(course / "submitted").rglob("*")]
    assert [path for path in collected if path.stat().st_uid != teacher.pw_uid] == []

    # Más tarde ana falsifica otra, aún más nueva: recoger con --update no borra la de beto.
    later = _submit(exchange, BETO, ANA, 12, "otra de ana")
    done = classroom.collect(LAB, exchange, course, "--update")
    assert done.returncode == 0, done.stderr
    assert _collected(course, BETO) == "segunda de beto"
    assert f"Se rechaza la entrega «{later}»" in done.stderr
    assert (exchange / "transformer-es" / "inbound" / later).is_dir()  # se deja donde está
