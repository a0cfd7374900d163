"""JupyterLab de verdad en Chromium: el estudiante trabaja el laboratorio 1 y el profesor
ve los laboratorios en Formgrader.

Arranca ``jupyter lab`` sin navegador en 127.0.0.1 (puerto libre, token aleatorio) sobre
una copia del curso en un directorio temporal (el repositorio no se toca) y lo maneja con
Playwright y el Chromium de Debian (``apt-get install chromium``). Las capturas quedan en
el directorio temporal de la prueba. Tiene en cuenta las dos carreras de JupyterLab 4.6
medidas en ``NOTES-jupyter``: las celdas se montan una a una y el indicador dice ``idle``
antes de que haya núcleo (una orden «ejecutar todo» enviada entonces se pierde).
"""

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from interface_strings import english_words, words

from course import labs
from course.commands import jupyter_es

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/lib/chromium/chromium")
LAB = labs.get("01_atencion")
NOTEBOOK = f"release/{LAB.id}/{LAB.id}.ipynb"
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
WRONG = "def attention_scores(query, key):\n    return query @ key.transpose(-2, -1)\n"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def _warm(url: str) -> None:
    try:
        urllib.request.urlopen(url, timeout=60).close()
    except OSError:
        pass


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip(f"no hay Chromium en {CHROMIUM}: instálalo con «apt-get install -y chromium»")
    pytest.importorskip(
        "playwright.sync_api", reason="falta playwright (pip install -r requirements.txt)"
    )
    root = tmp_path_factory.mktemp("curso_lab")
    for folder in ("source", "release"):
        shutil.copytree(labs.REPO / folder, root / folder)
    config = (labs.REPO / "nbgrader_config.py").read_text()
    (root / "nbgrader_config.py").write_text(
        config + f"\nc.Exchange.root = {str(root / 'intercambio')!r}\n"
    )
    if not jupyter_es.is_spanish():
        jupyter_es.run()  # el paso de puesta en marcha del README; idempotente
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTERLAB_SETTINGS_DIR": str(root / ".ajustes"),  # sin los ajustes del usuario
        "JUPYTERLAB_WORKSPACES_DIR": str(root / ".espacios"),
        "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    log = open(root / "jupyter.log", "w")  # noqa: SIM115 (se cierra al terminar)
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root",
         "--ip=127.0.0.1", f"--port={port}", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120  # con la máquina cargada tarda más de 5 s
        while True:
            try:
                _get(f"{base}/api/status?token={token}")
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(
                        f"jupyter lab no arrancó:\n{(root / 'jupyter.log').read_text()[-2000:]}"
                    )
                time.sleep(0.3)
        # Formgrader crea su libro de notas en la primera petición: que empiece ya, en paralelo.
        warm = threading.Thread(
            target=_warm, args=(f"{base}/formgrader/api/assignments?token={token}",), daemon=True
        )
        warm.start()
        yield base, token, root
    finally:
        try:  # cierra los núcleos de la prueba y después el servidor
            for session in _get(f"{base}/api/sessions?token={token}"):
                request = urllib.request.Request(
                    f"{base}/api/sessions/{session['id']}?token={token}", method="DELETE"
                )
                urllib.request.urlopen(request, timeout=5).close()
        except OSError:
            pass
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


@pytest.fixture(scope="module")
def page(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        context.set_default_timeout(30_000)
        context.set_default_navigation_timeout(90_000)  # la primera carga compila mucho JS
        yield context.new_page()
        browser.close()


def _cell(page, index: int):
    return page.locator(f"{PANEL} .jp-Cell").nth(index)


def _run_all(page) -> None:
    page.evaluate("window.jupyterapp.commands.execute('runmenu:run-all')")


def _wait_idle(page) -> None:
    page.wait_for_selector(f"{PANEL} .jp-Notebook-ExecutionIndicator[data-status='idle']")


def _fill(page, index: int, code: str) -> None:
    editor = _cell(page, index).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(code)


def test_student_runs_fails_fixes_and_passes_then_formgrader_lists_labs(server, page, tmp_path):
    base, token, root = server
    notebook = nbformat.read(root / NOTEBOOK, 4)
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in notebook.cells]
    answer, test = ids.index("ej1_puntuaciones"), ids.index("ej1_puntuaciones_prueba")
    solution = nbformat.read(LAB.source, 4).cells[answer].source
    start = time.monotonic()

    page.goto(f"{base}/lab/tree/{NOTEBOOK}?reset&token={token}")
    # Carrera 1: esperar a que estén todas las celdas.
    page.wait_for_function(
        "([sel, n]) => document.querySelectorAll(sel).length === n",
        arg=[f"{PANEL} .jp-Cell", len(notebook.cells)],
    )
    # Carrera 2: esperar al núcleo de verdad (nombre visible) y a que esté libre.
    kernel = notebook.metadata["kernelspec"]["display_name"]
    page.wait_for_selector(f"{PANEL} .jp-KernelName:has-text('{kernel}')")
    _wait_idle(page)
    assert page.locator(".lm-MenuBar-itemLabel", has_text="Archivo").count() == 1
    page.screenshot(path=tmp_path / "1_abierto.png")
    print(f"abierto con núcleo: {time.monotonic() - start:.1f} s")

    _run_all(page)  # sin tocar nada: la primera prueba visible falla
    test_cell = _cell(page, test)
    # .first: la celda puede mostrar el error y, debajo, una pista con el mismo nombre
    test_cell.locator(".jp-OutputArea-output", has_text="NotImplementedError").first.wait_for()
    _wait_idle(page)
    page.screenshot(path=tmp_path / "2_sin_hacer.png")

    _fill(page, answer, WRONG)  # falta la escala 1/√d_k: mensaje en español de checks
    _run_all(page)
    test_cell.locator(".jp-OutputArea-output", has_text="valores difieren").wait_for()
    assert "puntuaciones[0]" in test_cell.locator(".jp-Cell-outputArea").text_content()
    _wait_idle(page)
    page.screenshot(path=tmp_path / "3_mensaje_en_espanol.png")

    _fill(page, answer, solution)
    _run_all(page)
    test_cell.locator(".jp-OutputArea-output", has_text="Prueba visible superada.").wait_for()
    assert "difieren" not in test_cell.locator(".jp-Cell-outputArea").text_content()
    _wait_idle(page)
    page.screenshot(path=tmp_path / "4_superada.png")
    print(f"fallo, arreglo y prueba superada: {time.monotonic() - start:.1f} s")

    page.goto(f"{base}/formgrader?token={token}")
    for folder in sorted((root / "source").iterdir()):  # los laboratorios copiados
        page.get_by_text(folder.name, exact=True).first.wait_for()
    page.screenshot(path=tmp_path / "5_formgrader.png")
    print(f"Formgrader: {time.monotonic() - start:.1f} s")
    assert time.monotonic() - start < 60


# Etiquetas visibles de un trozo de la página: textos, títulos (los botones de icono no
# tienen otro texto), marcadores y opciones. Fuera: atajos de teclado, el contenido del
# cuaderno, nombres de archivo y rutas, y la lista de lenguajes de programación del menú
# Ver (nombres propios), que no son etiquetas de la interfaz.
COLLECT = r"""(root) => {
  const skip = [
    ".lm-Menu-itemShortcut", ".jp-InputArea-editor", ".jp-OutputArea", ".jp-MarkdownOutput",
    ".jp-DirListing-itemName", ".jp-DirListing-itemModified", ".jp-BreadCrumbs", ".cm-editor",
    ".jp-RunningSessions-itemLabel", ".jp-TableOfContents-content", ".jp-InputPrompt",
    ".jp-OutputPrompt", "script", "style",
    ".lm-Menu-item[data-command='fileeditor:change-language']",
  ].join(", ");
  const seen = [];
  const visible = (el) => el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
  const roots = typeof root === "string" ? [...document.querySelectorAll(root)] : [document.body];
  for (const top of roots) {
    const walker = document.createTreeWalker(top, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const text = walker.currentNode.textContent.replace(/\s+/g, " ").trim();
      const el = walker.currentNode.parentElement;
      if (text && el && !el.closest(skip) && visible(el)) seen.push(text);
    }
    for (const el of [top, ...top.querySelectorAll("[title], [placeholder], option")]) {
      if (el.closest(skip) || !visible(el.tagName === "OPTION" ? el.parentElement : el)) continue;
      for (const text of [el.getAttribute("title"), el.getAttribute("placeholder")]) {
        if (text && text.trim()) seen.push(text.replace(/\s+/g, " ").trim());
      }
      if (el.tagName === "OPTION") seen.push(el.textContent.trim());
    }
  }
  return seen;
}
"""
# Palabras de los textos ingleses de la interfaz que también son españolas o son nombres.
ALLOWED = {
    "no", "error", "editor", "terminal", "panel", "local", "simple", "control", "variable",
    "variables", "selector", "inspector", "general", "normal", "total", "final", "actual",
    "python", "ipykernel", "jupyter", "jupyterlab", "nbgrader", "markdown", "codemirror",
    "html", "css", "json", "yaml", "pdf", "csv", "tsv", "latex", "javascript", "js", "id",
    "ctrl", "shift", "alt", "enter", "esc", "mb", "kb", "url", "es", "has", "col", "contextual",
    "reveal", "formgrader", "formgraders", "transformer", "ok", "en", "web", "manual", "ipython",
    "subshell",
}  # fmt: skip
# Lo que no son palabras de la interfaz: atajos de teclado entre paréntesis, URL, rutas y
# el nombre de la aplicación Jupyter Notebook.
NOT_WORDS = re.compile(r"\((?:\w+\+)*\w+\)|\S*/\S*|Jupyter Notebook")


def _screen(page, selector: str) -> list[str]:
    return list(dict.fromkeys(page.evaluate(COLLECT, selector)))


def _english(labels: list[str]) -> dict[str, set[str]]:
    """Etiqueta -> sus palabras inglesas, para las que tienen alguna."""
    vocabulary = english_words() - ALLOWED
    found = {label: words(NOT_WORDS.sub(" ", label)) & vocabulary for label in labels}
    return {label: english for label, english in found.items() if english}


def _command(page, command: str) -> None:
    page.evaluate(f"window.jupyterapp.commands.execute({command!r})")


def _open_menus(page) -> list[str]:
    """Etiquetas del menú abierto y de sus submenús (pasando el ratón por cada uno)."""
    page.wait_for_selector(".lm-Menu")
    labels = _screen(page, ".lm-Menu")
    count = page.locator(".lm-Menu").first.locator(".lm-Menu-item[data-type='submenu']").count()
    for index in range(count):
        page.locator(".lm-Menu").first.locator(".lm-Menu-item[data-type='submenu']").nth(
            index
        ).hover()
        page.wait_for_timeout(500)  # Lumino abre el submenú 300 ms después y cierra el anterior
        page.wait_for_function("document.querySelectorAll('.lm-Menu').length > 1")
        labels += _screen(page, ".lm-Menu")
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    return list(dict.fromkeys(labels))


def _screens(page) -> dict[str, list[str]]:
    screens = {"barra de menús": _screen(page, ".lm-MenuBar")}
    titles = page.locator(".lm-MenuBar-item")
    for index in range(titles.count()):
        title = titles.nth(index).text_content()
        titles.nth(index).click()
        screens[f"menú {title}"] = _open_menus(page)
    screens["barra de herramientas del cuaderno"] = _screen(page, f"{PANEL} .jp-Toolbar")
    _cell(page, 1).locator(".jp-InputArea-prompt").click(button="right")
    screens["menú contextual de la celda"] = _open_menus(page)
    screens["barra de estado"] = _screen(page, "#jp-main-statusbar")
    for side in ("left", "right"):
        tabs = page.locator(f".jp-SideBar.jp-mod-{side} .lm-TabBar-tab")
        labels = _screen(page, f".jp-SideBar.jp-mod-{side}")
        for index in range(tabs.count()):
            tabs.nth(index).click()
            page.wait_for_timeout(300)
            labels += _screen(page, f"#jp-{side}-stack")
        tabs.first.click()  # lo cierra otra vez
        name = "izquierda" if side == "left" else "derecha"
        screens[f"barra lateral {name}"] = list(dict.fromkeys(labels))
    _command(page, "launcher:create")
    page.wait_for_selector(".jp-Launcher-body")
    screens["lanzador"] = _screen(page, ".jp-Launcher-body") + _screen(
        page, ".lm-DockPanel-tabBar .lm-mod-current"
    )
    _command(page, "nbgrader:open-assignment-list")
    page.wait_for_selector("#nbgrader-assignment-list .panel-heading")
    page.wait_for_timeout(1000)
    screens["nbgrader: lista de tareas"] = _screen(page, "#nbgrader-assignment-list")
    _command(page, "nbgrader:open-course-list")
    page.wait_for_selector("#nbgrader-course-list")
    page.wait_for_timeout(1000)
    screens["nbgrader: lista de cursos"] = _screen(page, "#nbgrader-course-list")
    return screens


def _formgrader(page, base: str, token: str) -> dict[str, list[str]]:
    """Navegación, títulos y cabeceras de las vistas de Formgrader (el profesor)."""
    screens = {}
    parts = ".nav, .page-header, .breadcrumb, thead"
    for view, name in (("manage_assignments", "tareas"), ("gradebook", "calificación manual"),
                       ("manage_students", "estudiantes"),
                       (f"manage_submissions/{LAB.id}", "entregas")):  # fmt: skip
        page.goto(f"{base}/formgrader/{view}?token={token}")
        page.wait_for_selector(".page-header h1")
        screens[f"Formgrader: {name}"] = _screen(page, parts)
    return screens


def test_interface_labels_are_spanish(server, page, tmp_path):
    base, token, _ = server
    page = page.context.new_page()
    page.goto(f"{base}/lab/tree/{NOTEBOOK}?reset&token={token}")
    page.wait_for_selector(f"{PANEL} .jp-Cell", timeout=120_000)  # primera carga: lenta
    _wait_idle(page)
    screens = _screens(page)
    page.screenshot(path=tmp_path / "interfaz.png")
    screens |= _formgrader(page, base, token)
    english = {name: _english(labels) for name, labels in screens.items()}
    for name, labels in screens.items():
        spanish = len(labels) - len(english[name])
        print(f"{name}: {spanish}/{len(labels)} etiquetas en español")
    total = sum(map(len, screens.values()))
    wrong = sum(map(len, english.values()))
    print(f"en total: {total - wrong}/{total} ({100 * (total - wrong) / total:.1f} %)")
    assert not any(english.values()), "etiquetas en inglés:\n" + "\n".join(
        f"{name}: {label!r} ({', '.join(sorted(found))})"
        for name, labels in english.items()
        for label, found in labels.items()
    )
