"""JupyterLab de verdad en Chromium: el estudiante trabaja el laboratorio 1 y el profesor
ve los laboratorios en Formgrader.

Arranca ``jupyter lab`` sin navegador en 127.0.0.1 (puerto libre, token aleatorio) sobre
una copia del curso en un directorio temporal (el repositorio no se toca) y lo maneja con
Playwright y el Chromium de Debian (``apt-get install chromium``). Las capturas quedan en
el directorio temporal de la prueba. Tiene en cuenta las dos carreras de JupyterLab 4.6
medidas en ``NOTES-jupyter``: las celdas se montan una a una y el indicador dice ``idle``
antes de que haya núcleo (una orden «ejecutar todo» enviada entonces se pierde).
"""

import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import classroom
import live_server
import nbformat
import pytest
from interface_strings import english_words, words

from course import labs
from course.commands import jupyter_es

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # JupyterLab ejecuta el cuaderno

LAB = labs.get("01_atencion")
NOTEBOOK = f"release/{LAB.id}/{LAB.id}.ipynb"
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
WRONG = "def attention_scores(query, key):\n    return query @ key.transpose(-2, -1)\n"


def _grade_one_submission(root: Path) -> subprocess.Popen:
    """Califica con ``course grade`` una entrega del laboratorio 1 (el cuaderno publicado,
    sin hacer), para que Formgrader tenga una página de calificación manual.

    Es un cuaderno del propio curso, de confianza: sin bubblewrap se califica sin aislar.
    """
    shutil.copy(root / NOTEBOOK, classroom.submission(root, "alumna", LAB))
    code = (
        "import sys; from pathlib import Path; from course.commands import grade;"
        " from course.grading import sandbox;"
        f" sys.exit(grade.run(root=Path({str(root)!r}), lab_ids=[{LAB.id!r}], jobs=1,"
        " progress=False, sandboxed=not sandbox.available()))"
    )
    log = open(root / "calificar.log", "w")  # noqa: SIM115 (el proceso hijo lo hereda)
    return subprocess.Popen(
        [sys.executable, "-c", code], cwd=root, stdout=log, stderr=subprocess.STDOUT
    )


def _warm(url: str, grading: subprocess.Popen) -> None:
    grading.wait()
    try:
        urllib.request.urlopen(url, timeout=60).close()
    except OSError:
        pass


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    live_server.skip_without_chromium()
    root = classroom.course_copy(tmp_path_factory.mktemp("curso_lab"))
    with open(root / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.Exchange.root = {str(root / 'intercambio')!r}\n")
    assert jupyter_es.run() == 0  # el paso de puesta en marcha del README; idempotente
    grading = _grade_one_submission(root)  # en paralelo con el arranque de JupyterLab
    env = {
        "JUPYTERLAB_SETTINGS_DIR": str(root / ".ajustes"),  # sin los ajustes del usuario
        "JUPYTERLAB_WORKSPACES_DIR": str(root / ".espacios"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    options = ("--LabApp.expose_app_in_browser=True",)
    with live_server.running("lab", root, *options, env=env) as (base, token):
        try:
            # Formgrader crea su libro de notas en la primera petición: que empiece ya, en
            # paralelo. Después de calificar: los dos escriben en gradebook.db.
            warm = threading.Thread(
                target=_warm,
                args=(f"{base}/formgrader/api/assignments?token={token}", grading),
                daemon=True,
            )
            warm.start()
            yield base, token, root, grading
        finally:
            if grading.poll() is None:
                grading.kill()
            _close_sessions(base, token)


def _close_sessions(base: str, token: str) -> None:
    """Cierra los núcleos de la prueba antes que el servidor."""
    try:
        for session in live_server.get(f"{base}/api/sessions?token={token}"):
            request = urllib.request.Request(
                f"{base}/api/sessions/{session['id']}?token={token}", method="DELETE"
            )
            urllib.request.urlopen(request, timeout=5).close()
    except OSError:
        pass


@pytest.fixture(scope="module")
def page(server):
    with live_server.chromium() as browser:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        context.set_default_timeout(30_000)
        context.set_default_navigation_timeout(90_000)  # la primera carga compila mucho JS
        yield context.new_page()


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
    base, token, root, _ = server
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
    ".rendered_html", ".input_area", ".output_wrapper", ".prompt", "pre",
  ].join(", ");
  // Una etiqueta de menú con la letra de acceso subrayada son dos textos: se lee entera.
  const whole = ".lm-Menu-itemLabel, .lm-MenuBar-itemLabel";
  const seen = [];
  const visible = (el) => el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
  const roots = typeof root === "string" ? [...document.querySelectorAll(root)] : [document.body];
  for (const top of roots) {
    const walker = document.createTreeWalker(top, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const el = walker.currentNode.parentElement;
      const node = (el && el.closest(whole)) || walker.currentNode;
      const text = node.textContent.replace(/\s+/g, " ").trim();
      if (text && el && !el.closest(skip) && visible(el)) seen.push(text);
    }
    const attributes = "[title], [placeholder], [data-original-title], option";
    for (const el of [top, ...top.querySelectorAll(attributes)]) {
      if (el.closest(skip) || !visible(el.tagName === "OPTION" ? el.parentElement : el)) continue;
      const texts = ["title", "placeholder", "data-original-title"].map((a) => el.getAttribute(a));
      for (const text of texts) {
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
    "subshell", "el", "media", "extra", "utc", "mathjax", "cursor", "color", "regular",
    "natural", "modal", "base", "visible", "virtual", "true", "tab", "zoom", "tokens", "comm",
    "subshells", "macos", "meta", "ms", "rectangular", "ipdb", "cmd", "vi", "ch", "global",
    "dom", "chrome", "chromium", "edge", "firefox", "cpu",
}  # fmt: skip
# Lo que no son palabras de la interfaz: atajos de teclado entre paréntesis, URL, rutas, el
# nombre de la aplicación Jupyter Notebook, código entre `…`, valores entre comillas,
# términos en cursiva (*…*), el nombre nativo de un idioma en el menú Idioma («Inglés -
# English»), identificadores (file10, context-menu, overrides.json), ejemplos de objetos
# JSON (``defaultViewers: {…}``) y las listas de nombres de visores y tipos de archivo que
# el editor de configuración pone en una descripción.
NOT_WORDS = re.compile(
    r"\((?:\w+\+)*\w+\)|\S*/\S*|Jupyter Notebook|`[^`]*`|\*[^*]*\*|'[^' ]*'|\"[^\"]*\""
    r"|^Inglés - English$|\b\w+\d\b|\b[\w-]+\.json\b|\b[a-z]+(?:-[a-z]+)+\b"
    r"|\w+: \{[^}]*\}|Visores disponibles:[\s\S]*"
)
# Nombres de claves de un esquema (``toolbar-0``, ``apputils``, ``code-font-family``): el
# editor de configuración los muestra cuando el esquema no da un título; son identificadores.
IDENTIFIER = re.compile(r"[A-Za-z]*[a-z][A-Za-z0-9]*(?:[:_-][A-Za-z0-9]+)+|[a-z]+[0-9]*")


def _screen(page, selector: str) -> list[str]:
    return list(dict.fromkeys(page.evaluate(COLLECT, selector)))


def _english(labels: list[str], keys: bool = False) -> dict[str, set[str]]:
    """Etiqueta -> sus palabras inglesas, para las que tienen alguna (``keys``: sin contar
    las claves de esquema, en el editor de configuración)."""
    vocabulary = english_words() - ALLOWED
    found = {
        label: words(NOT_WORDS.sub(" ", label)) & vocabulary
        for label in labels
        if not (keys and IDENTIFIER.fullmatch(label))
    }
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
    # Primero los paneles de nbgrader: así el menú Pestañas y la barra de pestañas los listan.
    _command(page, "nbgrader:open-assignment-list")
    page.wait_for_selector("#nbgrader-assignment-list .panel-heading")
    page.wait_for_timeout(1000)
    screens = {"nbgrader: lista de tareas": _screen(page, "#nbgrader-assignment-list")}
    _command(page, "nbgrader:open-course-list")
    page.wait_for_selector("#nbgrader-course-list")
    page.wait_for_timeout(1000)
    screens["nbgrader: lista de cursos"] = _screen(page, "#nbgrader-course-list")
    screens["pestañas abiertas"] = _screen(page, ".lm-DockPanel-tabBar")
    screens["barra de menús"] = _screen(page, ".lm-MenuBar")
    titles = page.locator(".lm-MenuBar-item")
    for index in range(titles.count()):
        title = titles.nth(index).text_content()
        titles.nth(index).click()
        screens[f"menú {title}"] = _open_menus(page)
    page.get_by_role("tab").filter(has_text=LAB.id).first.click()  # vuelve al cuaderno
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
        if side == "left":
            tabs.first.click()  # el explorador de archivos: su menú contextual
            page.locator(".jp-DirListing-item").first.click(button="right")
            screens["menú contextual del explorador"] = _open_menus(page)
        tabs.first.click()  # lo cierra otra vez
        name = "izquierda" if side == "left" else "derecha"
        screens[f"barra lateral {name}"] = list(dict.fromkeys(labels))
    screens["resultado de Validar"] = _validate(page)
    _command(page, "launcher:create")
    page.wait_for_selector(".jp-Launcher-body")
    screens["lanzador"] = _screen(page, ".jp-Launcher-body") + _screen(
        page, ".lm-DockPanel-tabBar .lm-mod-current"
    )
    _command(page, "settingeditor:open")
    page.wait_for_selector(".jp-PluginList-entry", timeout=60_000)
    page.wait_for_timeout(1000)
    screens["editor de configuración"] = _screen(page, ".lm-DockPanel-widget:not(.lm-mod-hidden)")
    return screens


def _validate(page) -> list[str]:
    """El diálogo del botón Validar de nbgrader con el cuaderno sin hacer."""
    page.get_by_role("tab").filter(has_text=LAB.id).first.click()
    page.locator(f"{PANEL} .validate-button button, {PANEL} .validate-button").first.click()
    page.wait_for_selector(".jp-Dialog", timeout=120_000)  # nbgrader ejecuta el cuaderno
    page.wait_for_function(
        "!document.querySelector('.jp-Dialog').textContent.includes('Validando')",
        timeout=120_000,
    )
    labels = _screen(page, ".jp-Dialog")
    labels += [
        text.strip()
        for text in page.locator(".jp-Dialog pre").all_text_contents()
        if "response" in text or "respuesta" in text
    ]  # el mensaje de nbgrader para una respuesta en blanco (el resto son trazas)
    page.keyboard.press("Escape")
    return list(dict.fromkeys(labels))


def _dialog(page, button: str, opener: str, broken: list[str]) -> list[str]:
    """Etiquetas de un diálogo de Formgrader que se abre con ``button``; lo cierra.

    Si el clic no lo abre (p. ej., la Content-Security-Policy bloquea el ``onClick`` de la
    plantilla), lo apunta en ``broken`` y lo abre llamando a ``opener`` para contarlo igual.
    """
    page.get_by_text(button).first.click()
    try:
        page.wait_for_selector(".modal-dialog", state="visible", timeout=5000)
    except Exception:  # noqa: BLE001 (el TimeoutError de Playwright)
        broken.append(f"«{button}» no abre su diálogo")
        page.evaluate(f"{opener}()")
        page.wait_for_selector(".modal-dialog", state="visible")
    page.wait_for_timeout(500)
    labels = _screen(page, ".modal")
    page.locator(".modal-footer button").last.click()
    page.wait_for_selector(".modal-dialog", state="hidden")
    return labels


def _formgrader(page, base: str, token: str, grading, broken) -> dict[str, list[str]]:
    """Cada vista de Formgrader (el profesor), sus diálogos y la calificación manual."""
    assert grading.wait(timeout=600) == 0, "course grade no calificó la entrega de prueba"
    submission = ""
    screens = {}
    for view, name in (("manage_assignments", "tareas"), ("gradebook", "calificación manual"),
                       (f"gradebook/{LAB.id}", "calificación manual del laboratorio 1"),
                       (f"gradebook/{LAB.id}/{LAB.id}", "entregas por calificar del cuaderno"),
                       ("manage_students", "estudiantes"),
                       ("manage_students/alumna", "tareas de un estudiante"),
                       (f"manage_submissions/{LAB.id}", "entregas")):  # fmt: skip
        page.goto(f"{base}/formgrader/{view}?token={token}")
        page.wait_for_selector("#main-table td:not([colspan])")  # ya no dice «Cargando»
        page.wait_for_timeout(500)
        screens[f"Formgrader: {name}"] = _screen(page, ".container-fluid")
        if view == "manage_assignments":
            screens["Formgrader: añadir una tarea"] = _dialog(
                page, "Añadir una tarea", "createAssignmentModal", broken
            )
        if view == f"gradebook/{LAB.id}/{LAB.id}":  # el enlace a la entrega calificada
            submission = page.locator("#main-table a[href*='/submissions/']").first
            submission = submission.get_attribute("href")
        if view == "manage_students":
            screens["Formgrader: añadir un estudiante"] = _dialog(
                page, "Añadir un estudiante", "createStudentModal", broken
            )
    page.goto(base + submission)
    page.wait_for_selector(".nbgrader_cell .score")
    page.wait_for_timeout(1000)
    screens["Formgrader: calificar una entrega"] = _screen(page, "body")
    return screens


def test_interface_labels_are_spanish(server, page, tmp_path):
    base, token, _, grading = server
    page = page.context.new_page()
    page.goto(f"{base}/lab/tree/{NOTEBOOK}?reset&token={token}")
    page.wait_for_selector(f"{PANEL} .jp-Cell", timeout=120_000)  # primera carga: lenta
    _wait_idle(page)
    screens = _screens(page)
    page.screenshot(path=tmp_path / "interfaz.png")
    broken = []
    screens |= _formgrader(page, base, token, grading, broken)
    page.screenshot(path=tmp_path / "calificar.png")
    english = {
        name: _english(labels, keys=name == "editor de configuración")
        for name, labels in screens.items()
    }
    for name, labels in screens.items():
        spanish = len(labels) - len(english[name])
        print(f"{name}: {spanish}/{len(labels)} etiquetas en español")
    total = sum(map(len, screens.values()))
    wrong = sum(map(len, english.values()))
    print(f"en total: {total - wrong}/{total} ({100 * (total - wrong) / total:.1f} %)")
    assert not broken and not any(english.values()), (
        "\n".join(broken)
        + "\netiquetas en inglés:\n"
        + "\n".join(
            f"{name}: {label!r} ({', '.join(sorted(found))})"
            for name, labels in english.items()
            for label, found in labels.items()
        )
    )
