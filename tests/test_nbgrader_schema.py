"""nbgrader valida los metadatos de las celdas igual, con cada esquema comprobado una vez
(``course.grading.nbgrader_course``)."""

import copy

import jsonschema
import nbformat
import pytest
from nbgrader.nbgraderformat import MetadataValidator, common

from course import labs
from course.grading import nbgrader_course  # noqa: F401 (pone el validador en nbgrader)


def _graded_cell() -> nbformat.NotebookNode:
    cells = nbformat.read(labs.get("01_atencion").source, 4).cells
    return next(c for c in cells if c.metadata.get("nbgrader", {}).get("points"))


def test_bad_metadata_is_refused_with_the_error_jsonschema_gives():
    validator = MetadataValidator()
    cell = _graded_cell()
    validator.validate_cell(cell)  # la del curso es válida
    cell.metadata.nbgrader["points"] = "diez"
    with pytest.raises(jsonschema.ValidationError) as ours:
        validator.validate_cell(cell)
    with pytest.raises(jsonschema.ValidationError) as plain:
        jsonschema.validate(cell.metadata.nbgrader, validator.schema)
    assert ours.value.message == plain.value.message and "diez" in ours.value.message


def test_each_schema_is_checked_against_the_metaschema_once(monkeypatch):
    schema = copy.deepcopy(MetadataValidator().schema)
    schema["title"] = "esquema nuevo para esta prueba"
    kind = jsonschema.validators.validator_for(schema)
    checked = []
    monkeypatch.setattr(kind, "check_schema", classmethod(lambda cls, s: checked.append(s)))
    for _ in range(3):
        common.jsonschema.validate(dict(_graded_cell().metadata.nbgrader), schema)
    assert len(checked) == 1
