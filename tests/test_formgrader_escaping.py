"""Cada plantilla de Formgrader, leída como la lee el curso (``course.jupyter.safety``),
escribe los valores escapados: un identificador hostil no sale de su cadena de JavaScript
ni se convierte en una etiqueta. La prueba en Chromium está en ``tests/test_names_door.py``.
"""

import re
from pathlib import Path

import nbgrader
import pytest
from jinja2 import Environment, FileSystemLoader

from course.jupyter import safety
from course.jupyter.escaping import VALUE, escape_values

TEMPLATES = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"
# formgrade_404.tpl importa un formgrade_macros.tpl que nbgrader 0.9.6 no trae
PAGES = sorted(p.name for p in TEMPLATES.glob("*.tpl") if p.name != "formgrade_404.tpl")
BREAK_OUT = 'x";window.__pwned=1;"'
TAG = '<img src=x onerror="window.__pwned=2">'
HOSTILE = f"{BREAK_OUT}</script>{TAG}"
RESOURCES = ("base_url", "submission_id", "notebook_id", "assignment_id", "notebook_path",
             "student", "first_name", "last_name")  # fmt: skip


def _render(name: str) -> str:
    loader = safety.NonceLoader(FileSystemLoader([str(TEMPLATES)]), bool, None, set())
    names = set()
    for path in TEMPLATES.glob("*.tpl"):
        names |= {m[2] for m in VALUE.finditer(path.read_text())}
    values = {n: HOSTILE for n in names if "." not in n}  # todos los valores, hostiles
    return Environment(loader=loader).get_template(name).render(**values)


@pytest.mark.parametrize("name", PAGES)
def test_every_formgrader_page_writes_values_inert(name):
    page = _render(name)
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", page, re.S)
    for code in scripts:
        assert not re.search(r'(?<!\\)";window\.__pwned', code), code  # la cadena sigue
        assert "</script>" not in code and "<img" not in code
    outside = re.sub(r"<script\b[^>]*>.*?</script>", "", page, flags=re.S)
    assert "<img" not in outside and "onerror=" not in outside.replace("onerror=&#34;", "")


def test_the_student_id_is_one_json_string_in_its_script():
    page = _render("manage_students_assignments.tpl")
    line = next(x for x in page.splitlines() if x.startswith("var student_id"))
    assert line == (
        'var student_id = "x\\";window.__pwned=1;\\"\\u003c/script\\u003e\\u003cimg src=x'
        ' onerror=\\"window.__pwned=2\\"\\u003e";'
    )
    assert '<li class="active">x&#34;;window.__pwned=1;&#34;&lt;/script&gt;&lt;img' in page


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ('<script>var a = "{{ x }}/y";</script>', '<script>var a = "{{ (x | string | tojson)[1:-1] }}/y";</script>'),
        ("<script>var n = {{ x }};</script>", "<script>var n = {{ x | tojson }};</script>"),
        ("<script>var s = 'a\\'{{ x }}';</script>", "<script>var s = 'a\\'{{ (x | string | tojson)[1:-1] }}';</script>"),
        ('<a href="{{ base_url }}/x">{{- a.b -}}</a>', '<a href="{{ base_url | e }}/x">{{- a.b | e -}}</a>'),
        ("<style>{{ css }}</style>", "<style>{{ css }}</style>"),
        ("{{ header(resources) }} {{ cell.source | markdown2html }}", "{{ header(resources) }} {{ cell.source | markdown2html }}"),
    ],
)  # fmt: skip
def test_each_value_is_escaped_for_where_it_goes(template, expected):
    assert escape_values(template) == expected


def test_the_grading_page_header_writes_the_student_and_names_inert():
    """La cabecera de la página de calificación (nbconvert, ``formgrade_macros.html.j2``)."""
    loader = safety.NonceLoader(
        FileSystemLoader([str(TEMPLATES / "formgrade")]), safety._is_trusted_nbconvert, None, set()
    )
    page = (
        Environment(loader=loader)
        .from_string(
            "{% from 'formgrade_macros.html.j2' import header, nav %}"
            "{{ header(resources) }}{{ nav(resources) }}"
        )
        .render(resources={k: HOSTILE for k in RESOURCES} | {"index": 0, "total": 1})
    )
    for code in re.findall(r"<script\b[^>]*>(.*?)</script>", page, re.S):
        assert not re.search(r'(?<!\\)";window\.__pwned', code), code
        assert "</script>" not in code and "<img" not in code
    outside = re.sub(r"<script\b[^>]*>.*?</script>", "", page, flags=re.S)
    assert "<img" not in outside and HOSTILE not in outside
    assert outside.count("x&#34;;window.__pwned=1;&#34;&lt;/script&gt;&lt;img") >= 3
