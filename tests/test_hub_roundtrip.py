"""La ronda entera en el aula de verdad, en Chromium, con tres cuentas del sistema.

El profesor publica el laboratorio 01 con ``aula abrir`` (lo hace :func:`hub_class`, como
dice ``docs/aula.md``). En el navegador: ana y beto lo descargan en «Tareas»; ana entrega
la solución y beto el cuaderno en blanco («Entregar»); el profesor recoge, autocalifica,
califica a mano una pregunta abierta con un comentario, vuelve a autocalificar a ana sin
perder lo que calificó a mano, y genera y publica la devolución (Formgrader); cada
estudiante descarga la suya («Descargar la devolución») y la abre: en español, con las
fórmulas dibujadas (MathML) y el comentario solo en la de ana. Fuera del navegador solo se
copia la solución al cuaderno de ana (como ana), se leen los puntos del libro de notas y
beto intenta leer la devolución de ana.
"""

import pwd
import re
import time
from pathlib import Path

import live_server
import pytest
from hub_class import LAB, hub_class, skip_without_aula

pytestmark = [pytest.mark.slow, pytest.mark.browser]

skip_without_aula()

WAIT_MS = 180_000  # la máquina está cargada: Formgrader y JupyterLab tardan
COMMENT = "Bien razonado: la escala evita que el softmax se sature."
ENGLISH = re.compile(
    r"\b(Fetch|Submit|Released|Downloaded|Submitted|assignments|feedback|Loading|"
    r"Please wait|Success|Successfully|There was an error|Close|Autograde)\b"
)


def _english(text: str) -> list[str]:
    return ENGLISH.findall(text)


@pytest.fixture(scope="module")
def hub():
    live_server.skip_without_chromium()
    with hub_class() as made:
        yield made


@pytest.fixture(scope="module")
def browser():
    with live_server.chromium() as running:
        yield running


def _page(hub, browser, user: str):
    """Una página con la sesión de ``user`` y su servidor arrancado; apunta los diálogos
    del navegador (``alert``) en ``page.alerts``."""
    hub.spawn(user)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(WAIT_MS)
    context.set_default_navigation_timeout(WAIT_MS)
    page = context.new_page()
    page.alerts = []
    page.on("dialog", lambda dialog: (page.alerts.append(dialog.message), dialog.dismiss()))
    hub.login(page, user)
    page.wait_for_url(lambda url: "/hub/login" not in url)
    return page


def _tasks(page, hub, user: str):
    """Abre «Tareas» (la lista de nbgrader) en JupyterLab; da el panel."""
    page.goto(f"{hub.url}/user/{user}/lab")
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("nbgrader", re.I)).click()
    page.locator(".lm-Menu-itemLabel", has_text="Lista de tareas").click()
    panel = page.locator("#nbgrader-assignment-list")
    panel.get_by_text("Tareas publicadas", exact=True).wait_for()
    return panel


def _press(panel, section: str, button: str) -> None:
    """Pulsa ``button`` en la fila del laboratorio de ``section``."""
    row = panel.locator(f"#{section} .list_item", has_text=LAB).first
    row.get_by_role("button", name=button, exact=True).click()


def _fetch(hub, page, user: str):
    """«Descargar» en «Tareas»; da el panel, que sirve luego para entregar."""
    panel = _tasks(page, hub, user)
    _press(panel, "released_assignments_list", "Descargar")
    panel.locator("#fetched_assignments_list .list_item", has_text=LAB).first.wait_for()
    assert _english(panel.inner_text()) == [], panel.inner_text()
    return panel


def _submit(page, panel) -> None:
    _press(panel, "fetched_assignments_list", "Entregar")
    panel.locator("#submitted_assignments_list .list_item", has_text=LAB).first.wait_for()
    assert page.locator(".jp-Dialog").count() == 0
    assert _english(panel.inner_text()) == [], panel.inner_text()


def _formgrader_action(page, cell) -> str:
    """Pulsa el icono de ``cell`` en Formgrader; da el mensaje del diálogo de «Hecho»."""
    cell.locator("a").click()
    modal = page.locator(".modal-dialog")
    modal.wait_for(state="visible")
    text = modal.inner_text()
    assert page.locator("#error-modal").count() == 0, text
    shown = text.split("Registro")[0]  # el registro de nbgrader va tal cual, en inglés
    assert "Hecho" in shown and _english(shown) == [], text
    modal.locator(".modal-footer button").last.click()
    modal.wait_for(state="hidden")
    return text


def _auto_points(hub, student: str) -> tuple[float, float]:
    """Puntos automáticos (y su máximo) de ``student`` en el libro de notas."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{hub.course / 'gradebook.db'}") as gradebook:
        notebook = gradebook.find_submission_notebook(LAB, LAB, student)
        auto = [grade for grade in notebook.grades if grade.cell.cell_type == "code"]
        return sum(g.score for g in auto), sum(g.max_score for g in auto)


def _wait_for_manual_grade(hub, student: str) -> None:
    """Formgrader guarda la nota y el comentario al salir de cada campo: espera a verlos en
    el libro de notas."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        if _manual(hub, student)[:2] == (7, COMMENT):
            return
        time.sleep(0.5)
    raise AssertionError("Formgrader no guardó la nota ni el comentario de pregunta_1")


def _manual(hub, student: str) -> tuple:
    """(nota manual, comentario manual, ¿pide corrección?) de pregunta_1 de ``student``."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{hub.course / 'gradebook.db'}") as gradebook:
        grade = gradebook.find_grade("pregunta_1", LAB, LAB, student)
        comment = gradebook.find_comment("pregunta_1", LAB, LAB, student)
        return grade.manual_score, comment.manual_comment, grade.needs_manual_grade


def _submission_id(hub, student: str) -> str:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{hub.course / 'gradebook.db'}") as gradebook:
        return gradebook.find_submission_notebook(LAB, LAB, student).id


def _feedback(hub, user: str) -> Path:
    """La página de devolución que descargó ``user`` (la única)."""
    pages = list((Path(pwd.getpwnam(user).pw_dir) / LAB / "feedback").glob(f"*/{LAB}.html"))
    assert len(pages) == 1, pages
    return pages[0]


def _autograde(page, formgrader: str, student: str) -> None:
    page.goto(f"{formgrader}/manage_submissions/{LAB}")
    autograde = page.locator("#main-table tr", has_text=student).locator(".autograde")
    assert "Se ha autocalificado" in _formgrader_action(page, autograde)


def _grade_by_hand(page, formgrader: str, hub, student: str) -> None:
    """En la página de calificar de ``student``: las fórmulas dibujadas, 7 puntos y el
    comentario en pregunta_1."""
    shown = page.goto(f"{formgrader}/submissions/{_submission_id(hub, student)}/")
    assert shown.ok, f"la página de calificar da {shown.status}"
    page.wait_for_function("window.MathJax && MathJax.loaded === true")
    page.evaluate("() => new Promise(done => MathJax.Hub.Queue(() => done(true)))")
    assert page.locator(".MathJax, .MathJax_Display").count() > 0
    assert "$$" not in page.locator("body").inner_text()
    score = page.locator("input.score#pregunta_1")
    score.fill("7")
    score.press("Tab")
    comment = page.locator("textarea#pregunta_1-comment")
    comment.fill(COMMENT)
    comment.press("Tab")
    _wait_for_manual_grade(hub, student)


def _fetch_feedback(hub, page, user: str) -> str:
    """«Descargar la devolución» en «Tareas»; abre la página descargada y da su texto."""
    panel = _tasks(page, hub, user)
    _press(panel, "submitted_assignments_list", "Descargar la devolución")
    panel.get_by_text("ver la devolución").first.wait_for()
    assert _english(panel.inner_text()) == [], panel.inner_text()
    assert page.locator(".jp-Dialog").count() == 0
    html = _feedback(hub, user)
    relative = html.relative_to(pwd.getpwnam(user).pw_dir).as_posix()
    page.goto(f"{hub.url}/user/{user}/files/{relative}")
    assert page.locator("html").get_attribute("lang") == "es"
    assert page.locator("math").count() > 0  # las fórmulas, en MathML
    text = page.locator("body").inner_text()
    assert "$$" not in text and "\\frac" not in text
    assert page.alerts == []
    return text


def test_the_whole_round_in_the_browser(hub, browser):
    ana, beto = hub.students
    pages = {student: _page(hub, browser, student) for student in hub.students}
    panels = {student: _fetch(hub, pages[student], student) for student in hub.students}
    solution = (hub.course / "source" / LAB / f"{LAB}.ipynb").read_text()
    copied = hub.run_as(ana, f"cat > {LAB}/{LAB}.ipynb", input=solution)
    assert copied.returncode == 0, copied.stderr
    for student in hub.students:
        _submit(pages[student], panels[student])

    page = _page(hub, browser, hub.instructor)
    formgrader = f"{hub.url}/user/{hub.instructor}/formgrader"
    page.goto(f"{formgrader}/manage_assignments")
    _formgrader_action(page, page.locator("#main-table tr", has_text=LAB).locator(".collect"))
    for student in hub.students:
        _autograde(page, formgrader, student)
    assert _auto_points(hub, ana) == (80, 80)
    assert _auto_points(hub, beto) == (0, 80)

    _grade_by_hand(page, formgrader, hub, ana)
    _autograde(page, formgrader, ana)  # otra vez: lo calificado a mano se queda
    assert _manual(hub, ana) == (7, COMMENT, False)
    assert _auto_points(hub, ana) == (80, 80)

    page.goto(f"{formgrader}/manage_assignments")
    row = page.locator("#main-table tr", has_text=LAB)
    _formgrader_action(page, row.locator(".generate-feedback"))
    _formgrader_action(page, row.locator(".release-feedback"))
    assert page.alerts == []

    mine, theirs = (_fetch_feedback(hub, pages[student], student) for student in (ana, beto))
    assert COMMENT in mine and COMMENT not in theirs
    for text in (mine, theirs):
        assert "Comments" not in text
    # beto no llega a la devolución de ana: ni su carpeta, ni el buzón, ni su secreto.
    for path in (
        Path(pwd.getpwnam(ana).pw_dir) / LAB / "feedback",
        Path(pwd.getpwnam(ana).pw_dir) / ".local",
        hub.aula.exchange / "transformer-es" / "feedback",
    ):
        tried = hub.run_as(beto, f"ls {path}")
        assert tried.returncode != 0, tried.stdout
