"""Formgrader en español: las plantillas de nbgrader leídas a través de ``SpanishLoader``."""

import re
from pathlib import Path

import pytest
from jinja2 import Environment, FileSystemLoader

from course.jupyter import formgrader

handlers = pytest.importorskip("nbgrader.server_extensions.formgrader.handlers")
TEMPLATES = Path(handlers.template_path)
VIEWS = [
    "manage_assignments.tpl",
    "gradebook_assignments.tpl",
    "gradebook_notebooks.tpl",
    "gradebook_notebook_submissions.tpl",
    "manage_students.tpl",
    "manage_students_assignments.tpl",
    "manage_students_notebook_submissions.tpl",
    "manage_submissions.tpl",
]


def _environment() -> Environment:
    environment = Environment(loader=FileSystemLoader([str(TEMPLATES)]))
    formgrader._translate_environment({formgrader.SETTING: environment})
    return environment


def _source(environment: Environment, name: str) -> str:
    return environment.loader.get_source(environment, name)[0]


def test_every_text_still_exists_in_nbgrader_templates():
    sources = "\n".join(p.read_text() for p in TEMPLATES.glob("*.tpl"))
    for english in formgrader.TEXTS:
        assert re.search(
            rf">\s*{re.escape(english)}\s*<|-%}}\s*{re.escape(english)}\s*{{%-", sources
        ), f"«{english}» ya no está en las plantillas de nbgrader"


def _headings(source: str) -> list[str]:
    """Textos de la navegación, títulos y cabeceras de tabla, y el título de la vista.

    Fuera, los enlaces dentro de un párrafo de instrucciones (a la documentación, a un
    terminal), que siguen en inglés como el párrafo.
    """
    parts = re.findall(r"<(?:th|h1|h4|a(?![^>]*(?:http|_blank)))\b[^>]*>\s*([^<{]+?)\s*<", source)
    parts += re.findall(r"block title -%}\s*([^{]+?)\s*{%-", source)
    return [part for part in parts if part.strip()]


@pytest.mark.parametrize("view", VIEWS)
def test_navigation_titles_and_table_headers_are_spanish(view):
    environment = _environment()
    chain = [view]
    while match := re.search(r"extends '([^']+)'", _source(environment, chain[-1])):
        chain.append(match[1])  # la vista y las plantillas de las que hereda
    unchanged = []
    for name in chain:
        original = set(_headings((TEMPLATES / name).read_text()))
        unchanged += [p for p in _headings(_source(environment, name)) if p in original]
    assert set(unchanged) <= {"nbgrader"}, f"{view}: {unchanged}"


def test_rendered_page_has_spanish_navigation_and_keeps_the_markup():
    environment = _environment()
    page = environment.get_template("gradebook_base.tpl").render(base_url="/base")
    assert ">Calificación manual</a>" in page
    assert '<a href="/base/formgrader/manage_students">Gestionar estudiantes</a>' in page
    assert "Manual Grading" not in page and "Manage Students" not in page


def test_wrapping_twice_translates_once():
    environment = Environment(loader=FileSystemLoader([str(TEMPLATES)]))
    settings = {formgrader.SETTING: environment}
    formgrader._translate_environment(settings)
    loader = environment.loader
    formgrader._translate_environment(settings)
    assert environment.loader is loader


def test_text_inside_other_words_is_left_alone():
    assert formgrader.translate("<p>Edit the file</p><th>Edit</th>") == (
        "<p>Edit the file</p><th>Editar</th>"
    )


def _nbgrader_page_texts() -> str:
    """El JavaScript y las plantillas de Formgrader (también la de calificación manual)."""
    folder = TEMPLATES.parent
    paths = [*folder.glob("static/js/*.js"), *TEMPLATES.rglob("*.tpl"), *TEMPLATES.rglob("*.j2")]
    return "\n".join(p.read_text(encoding="utf-8") for p in paths)


def test_every_page_text_still_exists_in_nbgrader():
    """Los textos que el script traduce en el navegador siguen en nbgrader (los de
    DataTables, como «Search:», vienen de su biblioteca y no se buscan aquí)."""
    sources = re.sub(r"\s+", " ", _nbgrader_page_texts().replace("&larr;", "←"))
    sources = sources.replace("&rarr;", "→")
    datatables = {"Search:", "No matching records found", "No data available in table"}
    composed = {"None, None"}  # apellidos, nombre: «None» dos veces
    for english in set(formgrader.PAGE["texts"]) - datatables - composed:
        assert english in sources, f"«{english}» ya no está en Formgrader"


def test_page_patterns_match_the_messages_they_are_for():
    patterns = [(re.compile(e), s) for e, s in formgrader.PAGE["patterns"]]

    def spanish(text):
        return next(
            (p.sub(s.replace("$", "\\"), text) for p, s in patterns if p.fullmatch(text)), None
        )

    assert spanish("Submission #3") == "Entrega n.º 3"
    assert spanish("2 remaining") == "quedan 2"
    assert spanish("Successfully autograded 'lab' for student 'ana'.") == (
        "Se ha autocalificado «lab» (estudiante «ana»)."
    )
    assert (
        spanish("Successfully released feedback of 'lab'.") == "Publicada la devolución de «lab»."
    )
    assert spanish("Student's answer") is None


def test_script_is_served_with_the_texts_and_added_to_every_page():
    code = formgrader.script()
    assert "__DATA__" not in code and "«+»" in code and "Calificación manual" in code
    environment = _environment()
    page = environment.get_template("manage_students.tpl").render(base_url="/base")
    assert '<script defer src="/base/curso-es/formgrader_es.js"></script>' in page
    assert "<script" not in _source(environment, "base.tpl").split("{{ curso_es_script")[1][:60]
    html = formgrader.SpanishExporter(None)
    assert html.exporter is None


def test_manual_grading_page_gets_the_script():
    class Exporter:
        def from_filename(self, filename, resources=None):
            return "<html><head><title>x</title></head><body>Next &rarr;</body></html>", resources

    html, _ = formgrader.SpanishExporter(Exporter()).from_filename("x", {"base_url": "/b"})
    assert '<script defer src="/b/curso-es/formgrader_es.js"></script>\n</head>' in html
