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
