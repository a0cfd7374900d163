"""Los discos del aula (``course.aula.disks``) sin montar nada: qué carpetas compartidas se
tapan y qué avisa ``aula estado``. El disco de verdad lo llena ``test_aula_hub.py``."""

import getpass
from pathlib import Path

from course.aula import disks
from course.aula.state import Aula


def test_the_folder_holding_the_aula_is_not_covered():
    assert disks.shared_tmp(Path("/var/tmp/aula-de-pruebas")) == [
        folder for folder in disks.SHARED_TMP if folder != "/var/tmp" and Path(folder).is_dir()
    ]
    assert "/var/tmp" in disks.shared_tmp(Path("/srv/aula"))


def test_status_warns_without_disks(tmp_path):
    lines = disks.report(Aula(tmp_path), [getpass.getuser(), "nadie-con-este-nombre"])
    assert lines[0].startswith("aviso: 2 estudiantes sin disco propio")
    assert lines[1].startswith("aviso: el intercambio está en el disco del sistema")
