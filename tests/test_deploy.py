"""El aula en Kubernetes (``deploy/aula/``), comprobada sin clúster: los valores contra el
esquema del chart de Zero to JupyterHub y lo que el curso pide de ellos y de las imágenes.

Helm valida los valores ya mezclados con los del chart: aquí, el archivo solo con el
esquema sin sus ``required`` (los pone el chart): nombres desconocidos
(``additionalProperties: false``) y tipos; y la mezcla con ``z2jh/values.yaml`` con el
esquema entero. Sin Helm no se generan las plantillas (``docs/kubernetes.md``).
"""

import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from course.aula import hubconfig
from course.labs import REPO

DEPLOY = REPO / "deploy" / "aula"


def without_required(node):
    if isinstance(node, dict):
        return {k: without_required(v) for k, v in node.items() if k != "required"}
    if isinstance(node, list):
        return [without_required(v) for v in node]
    return node


@pytest.fixture(scope="module")
def values() -> dict:
    return yaml.safe_load((DEPLOY / "values.yaml").read_text())


def test_values_follow_the_chart_schema(values):
    schema = without_required(yaml.safe_load((DEPLOY / "z2jh" / "values.schema.yaml").read_text()))
    jsonschema.Draft7Validator(schema).validate(values)


def coalesce(chart, ours):
    """Los valores que ve el chart, mezclados como Helm: los mapas se mezclan, lo demás
    se sustituye y un ``null`` nuestro quita la clave."""
    merged = dict(chart)
    for key, value in ours.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(chart.get(key), dict):
            merged[key] = coalesce(chart[key], value)
        else:
            merged[key] = value
    return merged


def test_merged_values_pass_the_whole_schema(values):
    """Lo que Helm valida antes de generar las plantillas: nuestros valores sobre los del
    chart (``z2jh/values.yaml``, del mismo commit que el esquema), con el esquema entero."""
    chart = yaml.safe_load((DEPLOY / "z2jh" / "values.yaml").read_text())
    schema = yaml.safe_load((DEPLOY / "z2jh" / "values.schema.yaml").read_text())
    jsonschema.Draft7Validator(schema).validate(coalesce(chart, values))
    wrong = coalesce(chart, {**values, "hub": {**values["hub"], "image": {"name": None}}})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(schema).validate(wrong)


def test_schema_catches_a_misspelt_key(values):
    """La comprobación de arriba puede fallar: una clave mal escrita no pasa."""
    schema = without_required(yaml.safe_load((DEPLOY / "z2jh" / "values.schema.yaml").read_text()))
    wrong = {**values, "singleuser": {**values["singleuser"], "memoria": {"limit": "3G"}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(schema).validate(wrong)


def test_values_keep_the_course_rules(values):
    config = values["hub"]["config"]
    assert config["Authenticator"]["username_pattern"] == hubconfig.USERNAME_PATTERN
    assert values["cull"]["enabled"] is True
    assert values["singleuser"]["memory"]["limit"]
    compile(values["hub"]["extraConfig"]["aula.py"], "aula.py", "exec")


def test_images_build_what_each_role_may_have():
    student = (DEPLOY / "imagenes" / "estudiantes" / "Dockerfile").read_text()
    instructor = (DEPLOY / "imagenes" / "profesor" / "Dockerfile").read_text()
    assert 'bundle --through "${LAB}"' in student
    stages = re.split(r"(?m)^FROM ", student)
    assert "COPY . ." in stages[1] and "COPY . ." not in stages[2]
    assert "COPY --from=zip /tmp/estudiantes.zip" in stages[2]
    assert "nbgrader.server_extensions.formgrader" in stages[2]
    assert "rm -rf /tmp/curso" in instructor
    for dockerfile in (student, instructor):
        assert "requirements.txt" in dockerfile
        for package in re.findall(r"\b([a-z][a-z0-9-]+)==", dockerfile):
            assert package == "ngshare-exchange"
    assert Path(DEPLOY / "imagenes" / "nbgrader_config.py").is_file()
