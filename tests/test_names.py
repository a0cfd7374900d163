"""La regla de los nombres (course.names): lo que vale, lo que no y por qué."""

import pytest

from course import names

GOOD = ["ana", "Ana", "ana.garcia", "ana_garcia-2", "12345", "01_atencion", "_notas.txt", "a" * 64]
BAD = [
    "",
    ".oculto",
    "-rf",
    "a" * 65,
    "ana garcía",
    "josé",
    "ana@uni.es",
    "ana+01",
    "../bob",
    "ana/01",
    "<img src=x onerror=alert(1)>",
    '"-alert(1)-"',
    "ana\x1b[2J",
    "ana\n",
    "Ａna",  # letra de ancho completo: \w la aceptaría
]


@pytest.mark.parametrize("name", GOOD)
def test_good_names_pass_unchanged(name):
    assert names.problem(name, "estudiante") == ""
    assert names.check(name, "estudiante") == name


@pytest.mark.parametrize("name", BAD)
def test_bad_names_are_refused_in_spanish(name):
    with pytest.raises(names.BadName) as refused:
        names.check(name, "estudiante")
    message = str(refused.value)
    assert "no vale como nombre de estudiante" in message
    assert "solo letras sin tilde" in message and "64 caracteres" in message
    assert "\x1b" not in message and "\n" not in message


def test_bad_name_is_a_course_error():
    from course.labs import CourseError

    assert issubclass(names.BadName, CourseError)


def test_case_only_differences_are_one_identity():
    assert names.key("Ana") == names.key("ana") == names.key("ANA")
    assert names.key("ana") != names.key("ana2")
    assert names.clashes(["Ana", "bob", "ana", "ana", "Bob", "eva"]) == {
        "ana": ["Ana", "ana"],
        "bob": ["Bob", "bob"],
    }
    assert names.clashes(["ana", "ana", "eva"]) == {}
