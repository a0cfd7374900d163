"""El repositorio cumple lo que promete el README: instalación fijada y la misma orden de pruebas en CI."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEST_COMMAND = "python -m pytest -q"


def test_readme_and_ci_run_the_same_test_command():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "pip install -r requirements.txt" in readme
    assert TEST_COMMAND in readme
    assert TEST_COMMAND in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_every_direct_dependency_is_pinned():
    lines = [
        line.split("#")[0].strip()
        for line in (REPO / "requirements.txt").read_text().splitlines()
        if line.split("#")[0].strip()
    ]
    assert lines[-1] == "-e ."
    unpinned = [
        line for line in lines[:-1] if not re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[\w.]+", line)
    ]
    assert not unpinned
    assert "torch==2.13.0" in lines


def test_every_course_package_is_declared_in_pyproject():
    declared = set(
        tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(init.parent.relative_to(REPO).parts)
        for init in (REPO / "course").rglob("__init__.py")
    }
    assert found == declared


def test_importing_the_course_skips_the_iri_grammar_that_costs_seconds():
    code = "import course, nbformat, sys; print(bool(sys.modules.get('rfc3987_syntax')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr
