"""Los niveles de pruebas y las herramientas que faltan (``tests/conftest.py``), con pytest
dentro de pytest: la misma conftest en una carpeta aparte."""

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = (Path(__file__).parent / "conftest.py").read_text()
NO_BWRAP = """
from course.grading import sandbox
sandbox.available = lambda: "no está instalado bubblewrap (bwrap)"
"""
TESTS = """
import pytest
from course.labs import CourseError

def test_rapida():
    pass

@pytest.mark.slow
def test_lenta():
    pass

@pytest.mark.slow
@pytest.mark.esencial
def test_esencial():
    raise CourseError("No se puede aislar el cuaderno: no está instalado bubblewrap (bwrap).")

def test_falla_de_verdad():
    assert False, "otro fallo"

def test_omitida_por_la_prueba():
    pytest.skip("sin aislamiento aquí: no está instalado bubblewrap (bwrap)")
"""


@pytest.fixture
def inner(pytester, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    pytester.makeconftest(CONFTEST + NO_BWRAP)
    pytester.makepyfile(test_interior=TESTS)
    return pytester


def test_fast_tier_skips_slow_tests_and_names_the_missing_tool(inner):
    result = inner.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=2, failed=1, deselected=1)
    result.stdout.fnmatch_lines(
        [
            "Sin bubblewrap: 2 pruebas omitidas. Instálalo con «sudo apt-get install bubblewrap»*",
            "Nivel rápido: 1 prueba lenta sin ejecutar*--todas*",
        ]
    )


def test_lentas_runs_only_what_the_fast_tier_left_out(inner):
    result = inner.runpytest("-p", "no:cacheprovider", "--lentas", "-k", "not falla")
    result.assert_outcomes(passed=1, deselected=4)


def test_under_ci_a_missing_tool_fails_the_run(inner, monkeypatch):
    monkeypatch.setenv("CI", "true")
    result = inner.runpytest("-p", "no:cacheprovider", "--todas")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*CI necesita todas las herramientas*apt-get install bubblewrap*"])


FAKE_KERNELS = """
import subprocess, sys
import pytest

def _kernel():
    subprocess.run([sys.executable, "-c", "import time; time.sleep(0.5)", "nucleo_de_mentira"])

def test_sin_marca_inicia_un_nucleo():
    _kernel()

@pytest.mark.slow
def test_lenta_inicia_un_nucleo():
    _kernel()
"""


def test_a_kernel_started_by_an_unmarked_test_fails_it(pytester, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    pytester.makeconftest(CONFTEST + 'KERNEL = "nucleo_de_mentira"\n')
    pytester.makepyfile(test_nucleos=FAKE_KERNELS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--todas")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        ["*test_sin_marca_inicia_un_nucleo inició 1 núcleo de Jupyter sin*"]
    )
