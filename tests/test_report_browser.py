"""El informe de la clase en Chromium: los archivos escritos y la pestaña de Formgrader.

Una clase guardada sin calificar (``calificacion.json`` con frases reales del catálogo,
unidas a ``gradebook.db`` con ``results.merge``) y nombres hostiles. Cada página se abre
sin red (solo ``file://`` o 127.0.0.1): ningún error en la consola, ninguna petición
fuera, ningún rótulo de plotly en inglés, y cada figura dibujada (su captura tiene tamaño
y muchos colores, no un recuadro en blanco). En Formgrader, la misma página bajo su CSP.
Una sola: ``python -m pytest -q --todas tests/test_report_browser.py``.
"""

import io
import random

import classroom
import live_server
import pytest

from course import labs, mistakes
from course.commands import jupyter_es
from course.grading import results
from course.report import build

pytestmark = [pytest.mark.slow, pytest.mark.browser]

LAB = labs.get("01_atencion")
HOSTILE = "<img src=x onerror=alert(1)>"
ENGLISH = ("Double-click", "Autoscale", "Download plot", "Zoom", "trace 0", "Click to enter")
TITLES = (
    "Resultado por ejercicio",
    "Distribución de la nota del laboratorio",
    "Dificultad y discriminación por ítem",
    "Errores con nombre más frecuentes",
)


def _class(root) -> None:
    """12 estudiantes con puntos y errores al azar (semilla fija) y uno hostil."""
    chance = random.Random(7)
    catalogue = mistakes.catalogue(LAB.id)
    classroom.nbgrader_course(root, LAB)
    found = []
    for number in range(12):
        student = HOSTILE if number == 0 else f"est{number:02d}"
        cells = []
        for exercise in (
            "ej1_puntuaciones",
            "ej2_softmax",
            "ej3_relleno",
            "ej4_causal",
            "ej5_atencion",
        ):
            most = (5, 9) if exercise != "ej5_atencion" else (8, 16)
            wrong = chance.random() < 0.4
            named = [chance.choice([m.message for m in catalogue if m.exercise == exercise])]
            cells += [
                results.Cell(
                    f"{exercise}_prueba",
                    0 if wrong else most[0],
                    most[0],
                    "",
                    named if wrong else [],
                ),
                results.Cell(
                    f"{exercise}_oculta", chance.choice([0, most[1]]) if wrong else most[1], most[1]
                ),
            ]
        cells += [results.Cell(f"pregunta_{i}", chance.choice([None, 2, 6]), 6) for i in (1, 2, 3)]
        found.append(results.Result(student, LAB.id, cells))
    for result in found:
        results.write(root / "autograded", result)
    results.merge([r for r in found if r.student != HOSTILE], root / "gradebook.db")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    live_server.skip_without_chromium()
    root = tmp_path_factory.mktemp("informe_navegador")
    _class(root)
    return root


@pytest.fixture(scope="module")
def browser():
    with live_server.chromium() as chromium:
        yield chromium


def _page(browser, allowed: tuple[str, ...]):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    seen = {"errors": [], "blocked": [], "dialogs": []}

    def route(route):
        if route.request.url.startswith(allowed):
            route.continue_()
        else:
            seen["blocked"].append(route.request.url)
            route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on("console", lambda m: m.type == "error" and seen["errors"].append(m.text))
    page.on("pageerror", lambda error: seen["errors"].append(str(error)))
    page.on("dialog", lambda dialog: (seen["dialogs"].append(dialog.message), dialog.dismiss()))
    return page, seen


def _colours(png: bytes) -> int:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    return len(image.getcolors(maxcolors=1 << 20) or [])


def _check_figures(page, expected: int) -> None:
    page.wait_for_function(
        f"document.querySelectorAll('.figura .main-svg').length >= {expected}", timeout=60_000
    )
    figures = page.locator(".figura")
    assert figures.count() == expected
    for index in range(expected):
        figure = figures.nth(index)
        box = figure.bounding_box()
        assert box["width"] > 500 and box["height"] > 250, box
        png = figure.screenshot()
        assert len(png) > 8_000 and _colours(png) > 20, index
    text = page.locator("body").inner_text() + " ".join(
        page.locator(".figura svg text").all_text_contents()
    )
    assert not [word for word in ENGLISH if word in text]


def test_written_pages_draw_every_figure_offline_in_spanish(course, browser, tmp_path):
    written = build.write(course, tmp_path / "informe")
    page, seen = _page(browser, ("file://",))
    for path in [p for p in written if p.suffix == ".html"]:
        page.goto(path.as_uri())
        _check_figures(page, 4 if path.name != build.INDEX else 1)
        shown = page.locator(".figura svg text").all_text_contents()
        if path.name != build.INDEX:
            assert set(TITLES) <= set(shown), shown
            assert page.locator("td", has_text=HOSTILE).count() >= 1  # escrito como texto
    assert seen == {"errors": [], "blocked": [], "dialogs": []}


def test_formgrader_serves_the_report_under_its_policy(course, browser):
    assert jupyter_es.run() == 0  # activa course.jupyter.safety y el informe
    with live_server.running("server", course) as (base, token):
        page, seen = _page(browser, (base,))
        page.goto(f"{base}/api/status?token={token}")  # la cookie de sesión
        page.goto(f"{base}/formgrader/manage_assignments")
        page.locator("a", has_text="Informe de la clase").click()
        page.wait_for_url(f"{base}/formgrader/informe/")
        _check_figures(page, 1)
        response = page.goto(f"{base}/formgrader/informe/{LAB.id}.html")
        policy = response.headers["content-security-policy"]
        assert "'nonce-" in policy and "'unsafe-inline'" not in policy.split("style-src")[0]
        _check_figures(page, 4)
        assert page.locator("td", has_text=HOSTILE).count() >= 1
        link = page.locator("a", has_text="§ ").first.get_attribute("href")
        assert link.startswith("/lab/tree/release/01_atencion/01_atencion.ipynb#")
        assert seen == {"errors": [], "blocked": [], "dialogs": []}
