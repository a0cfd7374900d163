"""``.venv/bin/python -m course …`` sin activar el entorno: nbgrader encuentra ``alembic``."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from course.__main__ import with_own_bin
from course.labs import REPO

BIN = str(Path(sys.executable).parent)


def _path_without_our_bin() -> str:
    parts = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != BIN]
    return os.pathsep.join(parts or ["/usr/bin", "/bin"])


def test_our_bin_goes_first_once():
    assert with_own_bin("/usr/bin:/bin") == f"{BIN}:/usr/bin:/bin"
    assert with_own_bin(f"/usr/bin:{BIN}") == f"/usr/bin:{BIN}"
    assert with_own_bin("") == BIN


@pytest.mark.slow
def test_check_works_without_activating_the_environment(tmp_path):
    # Caché vacía: check prepara el curso y nbgrader crea su gradebook llamando a «alembic»
    # por su nombre; antes terminaba en «No such file or directory: 'alembic'».
    env = dict(os.environ, PATH=_path_without_our_bin(), XDG_CACHE_HOME=str(tmp_path / "xdg"))
    env.pop("VIRTUAL_ENV", None)
    notebook = REPO / "release" / "01_atencion" / "01_atencion.ipynb"
    done = subprocess.run(
        [sys.executable, "-m", "course", "check", str(notebook)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "alembic" not in output and "Traceback" not in output
    assert "Puntos automáticos: 0 / 80" in output
