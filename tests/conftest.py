"""Niveles de pruebas y herramientas del sistema que faltan.

- ``python -m pytest`` (la orden del README) ejecuta el nivel rápido: todo lo que no está
  marcado ``slow`` o ``browser``, más las pruebas ``esencial`` (una calificación de
  principio a fin por laboratorio). ``--todas`` ejecuta también las lentas, y
  ``--lentas`` solo las que el nivel rápido deja fuera (así ``.ci/run`` no repite nada).
- Sin bubblewrap o sin Chromium, las pruebas que los necesitan se omiten y el resumen lo
  dice en una línea en español con la orden que lo instala. Con ``CI=true`` no se omite
  nada: falta una herramienta y la ejecución falla.
- En paralelo (``-n 2 --dist loadgroup``, el nivel rápido en ``.ci/run``) cada módulo va
  entero a un proceso: sus fixtures de módulo se montan una vez.
- Una prueba que inicia un núcleo de Jupyter sin la marca ``slow`` falla: el nivel rápido
  solo los inicia en las ``esencial`` (``kernel_guard.py``).
- Fixtures compartidas: ``alarm``, ``one_cell_gradebook`` y ``lab7_submission``;
  ``classroom.py`` monta una clase de nbgrader y ``live_server.py`` el servidor de Jupyter
  y Chromium de las pruebas en navegador.
"""

import os
import shutil
import signal
from pathlib import Path

import pytest
from classroom import Lab7Submission
from kernel_guard import KERNEL, KernelWatch
from live_server import CHROMIUM

from course.grading import sandbox

INSTALL = {
    "bubblewrap": "sudo apt-get install bubblewrap",
    "chromium": "sudo apt-get install chromium",
}
_skipped: dict[str, int] = {"bubblewrap": 0, "chromium": 0}
_deselected: list[int] = [0]
_watch: list[KernelWatch] = []


def pytest_addoption(parser):
    group = parser.getgroup("curso")
    group.addoption(
        "--todas",
        action="store_true",
        help="ejecuta también las pruebas lentas (núcleos, nbgrader, navegador)",
    )
    group.addoption(
        "--lentas",
        action="store_true",
        help="ejecuta solo las pruebas lentas que el nivel rápido deja fuera",
    )


def _in_fast_tier(item) -> bool:
    if item.get_closest_marker("esencial"):
        return True
    return not (item.get_closest_marker("slow") or item.get_closest_marker("browser"))


@pytest.hookimpl(tryfirst=True)  # antes que xdist, que lee xdist_group
def pytest_collection_modifyitems(config, items):
    if config.getoption("--todas"):
        return
    only_slow = config.getoption("--lentas")
    keep, drop = [], []
    for item in items:
        (keep if _in_fast_tier(item) != only_slow else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
        _deselected[0] = 0 if only_slow else len(drop)
    for item in items:  # con pytest-xdist (-n 2 --dist loadgroup), cada módulo en un proceso
        item.add_marker(pytest.mark.xdist_group(item.module.__name__))


def missing_tools() -> dict[str, str]:
    """Herramientas del sistema que faltan -> por qué (en español)."""
    missing = {}
    if sandbox.available():
        missing["bubblewrap"] = sandbox.available()
    if not CHROMIUM.exists() and shutil.which("chromium") is None:
        missing["chromium"] = "no hay Chromium"
    return missing


def pytest_sessionstart(session):
    _watch.append(KernelWatch(KERNEL))
    if os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
        return
    missing = missing_tools()
    if missing:
        orders = "; ".join(f"{why}: «{INSTALL[tool]}»" for tool, why in missing.items())
        pytest.exit(f"CI necesita todas las herramientas del sistema: {orders}.", returncode=1)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Sin bubblewrap, la calificación aislada se niega con un error que lo nombra: la
    prueba se omite (fuera de CI) en lugar de fallar por la máquina."""
    outcome = yield
    report = outcome.get_result()
    _fail_on_unmarked_kernels(item, report)
    if call.excinfo is None or not report.failed:
        return
    tool = _missing_tool_in(str(call.excinfo.value))
    if tool is None or os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        return
    report.outcome = "skipped"
    report.longrepr = (str(item.path), item.location[1] or 0, f"sin {tool}")


def _fail_on_unmarked_kernels(item, report) -> None:
    """Al desmontar cada prueba: los núcleos nuevos son de ella; sin ``slow``, falla."""
    if report.when != "teardown" or not _watch:
        return
    count = _watch[0].new_kernels()
    if count and not item.get_closest_marker("slow"):
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} inició {count} núcleo{'s' if count > 1 else ''} de Jupyter sin la"
            " marca slow: márcala con @pytest.mark.slow (el nivel rápido no inicia núcleos)."
        )


def pytest_sessionfinish(session):
    while _watch:
        _watch.pop().close()


def _missing_tool_in(text: str) -> str | None:
    missing = missing_tools()
    if "bubblewrap" in missing and "bubblewrap" in text:
        return "bubblewrap"
    return None


def pytest_runtest_logreport(report):
    """Cuenta las omisiones por herramienta, vengan de esta conftest o de la propia prueba."""
    if not report.skipped:
        return
    reason = str(report.longrepr).lower()
    for tool in missing_tools():
        if tool in reason:
            _skipped[tool] += 1


def pytest_terminal_summary(terminalreporter):
    lines = []
    for tool, count in _skipped.items():
        if count:
            lines.append(
                f"Sin {tool}: {_tests(count)} omitida{'s' if count > 1 else ''}. Instálalo con «{INSTALL[tool]}»"
                " (Debian/Ubuntu) y vuelve a ejecutarlas."
            )
    if _deselected[0]:
        lines.append(
            f"Nivel rápido: {_tests(_deselected[0])} lenta{'s' if _deselected[0] > 1 else ''} sin ejecutar (núcleos, nbgrader,"
            " navegador); «python -m pytest --todas» las ejecuta todas."
        )
    for line in lines:
        terminalreporter.write_line(line)


def _tests(count: int) -> str:
    return f"{count} prueba{'s' if count > 1 else ''}"


# ----------------------------------------------------------- fixtures compartidas


@pytest.fixture
def alarm():
    """Lo que se quedaría bloqueado (leer una FIFO, /dev/zero) falla a los 10 s."""

    def stuck(*_):
        raise TimeoutError("se quedó bloqueado")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="session")
def solutions():
    """``solutions(lab_id)``: el cuaderno de solución ejecutado en este proceso
    (``course.mistakes.Solution``), una vez por laboratorio en la sesión y solo si se pide.
    Las pruebas cambian sus nombres por mutantes con ``substituted``, que los devuelve."""
    from course import mistakes

    cache: dict[str, mistakes.Solution] = {}

    def get(lab_id: str) -> mistakes.Solution:
        if lab_id not in cache:
            cache[lab_id] = mistakes.Solution(lab_id)
        return cache[lab_id]

    return get


@pytest.fixture(scope="session")
def one_cell_gradebook(tmp_path_factory):
    """``make(carpeta, laboratorio, grade_id)``: un ``gradebook.db`` de nbgrader en la
    carpeta con ese laboratorio y una celda de prueba de 10 puntos. Crear el esquema cuesta
    segundos: se crea uno por combinación en la sesión y cada prueba recibe una copia."""
    made: dict[tuple[str, str], Path] = {}

    def make(folder: Path, lab_id: str, grade_id: str) -> Path:
        if (lab_id, grade_id) not in made:
            template = tmp_path_factory.mktemp("gradebook") / "gradebook.db"
            _new_gradebook(template, lab_id, grade_id)
            made[lab_id, grade_id] = template
        shutil.copyfile(made[lab_id, grade_id], folder / "gradebook.db")
        return folder / "gradebook.db"

    return make


def _new_gradebook(db: Path, lab_id: str, grade_id: str) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{db}") as book:
        book.update_or_create_assignment(lab_id)
        book.update_or_create_notebook(lab_id, lab_id)
        book.update_or_create_grade_cell(grade_id, lab_id, lab_id, max_score=10, cell_type="code")


@pytest.fixture(scope="session")
def lab7_submission(tmp_path_factory):
    """``make(nombre)``: una entrega nueva del laboratorio 7 (``classroom.Lab7Submission``)
    con el cuaderno solución y una copia de la ejecución «completa» de humo (receta
    ``smoke``), que se entrena una sola vez en la sesión; quien la pide escribe las
    traducciones y el historial."""
    from course.translation import data
    from course.translation.config import PRESETS
    from course.translation.train import train

    try:
        test = data.read_split("test_2016_flickr")
    except data.DataError as error:
        pytest.fail(f"Esta prueba necesita Multi30k: {error}")
    trained = tmp_path_factory.mktemp("lab7_humo") / "completa"
    result = train(PRESETS["smoke"], trained, progress=False, log=lambda _: None)
    (trained / "origen.txt").write_text("".join(f"{de}\n" for de, _ in test), encoding="utf-8")
    (trained / "referencias.txt").write_text("".join(f"{en}\n" for _, en in test), encoding="utf-8")
    return lambda name: Lab7Submission.copy(trained, tmp_path_factory.mktemp(name), test, result)
