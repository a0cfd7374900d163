"""El estudiante trabaja en su copia (``empezar``), el zip de estudiantes sale de ``source/``
y su línea de órdenes solo ofrece las órdenes del estudiante (issues 14 y 15)."""

import ast
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from course import labs
from course.commands import bundle, empezar
from course.labs import CourseError

LAB = labs.get("01_atencion")
INSTRUCTOR = ("build", "grade", "feedback", "export", "bundle")
STUDENT = ("empezar", "check", "doctor", "jupyter-es")


def test_empezar_copies_the_lab_to_trabajo_and_leaves_release_alone(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    before = LAB.release.read_bytes()
    assert empezar.run(LAB.id, tmp_path) == 0
    copy = tmp_path / "trabajo" / LAB.id / f"{LAB.id}.ipynb"
    assert copy.read_bytes() == before
    assert LAB.release.read_bytes() == before
    out = capsys.readouterr().out
    assert f"jupyter lab trabajo/{LAB.id}/{LAB.id}.ipynb" in out


def test_empezar_never_overwrites_a_work_copy(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    copy = tmp_path / "trabajo" / LAB.id / f"{LAB.id}.ipynb"
    copy.parent.mkdir(parents=True)
    copy.write_text("mis respuestas")
    with pytest.raises(CourseError, match="no la sobrescribo"):
        empezar.run(LAB.id, tmp_path)
    assert copy.read_text() == "mis respuestas"


def test_empezar_rejects_an_unknown_lab_listing_the_known_ones(capsys):
    from course import cli

    assert cli.main(["empezar", "01_atencio"]) == 2
    err = capsys.readouterr().err
    assert "Laboratorio desconocido: «01_atencio»" in err and "02_normalizacion" in err


def test_the_work_folder_is_ignored_by_git():
    path = f"trabajo/{LAB.id}/{LAB.id}.ipynb"
    done = subprocess.run(["git", "check-ignore", "-q", path], cwd=labs.REPO)
    assert done.returncode == 0, "trabajo/ debería estar en .gitignore"


def test_readme_sends_students_to_a_work_copy_not_to_release():
    text = (labs.REPO / "README.md").read_text()
    assert "python -m course empezar 01_atencion" in text
    assert "jupyter lab trabajo/01_atencion/01_atencion.ipynb" in text
    assert "jupyter lab release/" not in text


def test_bundle_builds_from_source_not_from_a_release_someone_worked_in(
    tmp_path, monkeypatch, capsys
):
    dirty = tmp_path / "release"
    (dirty / LAB.id).mkdir(parents=True)
    notebook = nbformat.read(LAB.release, 4)
    answer = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("solution"))
    stub, answer.source = answer.source, "RESPUESTA_DEL_PROFESOR = 42\n"
    nbformat.write(notebook, dirty / LAB.id / f"{LAB.id}.ipynb")
    monkeypatch.setattr(labs, "RELEASE", dirty)
    target = tmp_path / "zip" / "b.zip"
    assert bundle.run(LAB.id, str(target)) == 0
    assert f"release/{LAB.id} no coincide con source/" in capsys.readouterr().err
    shipped = zipfile.ZipFile(target).read(f"transformer-es/release/{LAB.id}/{LAB.id}.ipynb")
    assert b"RESPUESTA_DEL_PROFESOR" not in shipped
    cells = {
        c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nbformat.reads(shipped, 4).cells
    }
    assert cells[answer.metadata.nbgrader.grade_id].source == stub


def test_bundle_leaves_the_mistake_catalogues_out_and_keeps_the_fingerprints(tmp_path, monkeypatch):
    for name in (
        "course/__init__.py",
        "course/mistakes/__init__.py",
        "course/mistakes/attention.py",
        "course/mistakes/normalization.py",
        "course/mistakes/fingerprints/01_atencion.json",
        "course/mistakes/fingerprints/notas.txt",
        "course/jupyter/es_ES.json",
        "requirements.txt",
        "pyproject.toml",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    monkeypatch.setattr(labs, "REPO", tmp_path)
    files = bundle.contents("07_multi30k", tmp_path / "release")
    assert "course/jupyter/es_ES.json" in files  # los datos de jupyter-es, sí
    mistakes = sorted(name for name in files if "mistakes" in name)
    assert mistakes == [
        "course/mistakes/__init__.py",
        "course/mistakes/fingerprints/01_atencion.json",
    ]


@pytest.fixture(scope="module")
def student_bundle(tmp_path_factory) -> Path:
    """El zip de estudiantes hasta el laboratorio 2, descomprimido (cuadernos de release/,
    que ``test_release_is_up_to_date`` mantiene iguales a una generación nueva)."""
    folder = tmp_path_factory.mktemp("paquete")
    with zipfile.ZipFile(folder / "b.zip", "w") as archive:
        for name, path in bundle.contents("02_normalizacion").items():
            archive.write(path, f"transformer-es/{name}")
    zipfile.ZipFile(folder / "b.zip").extractall(folder)
    return folder / "transformer-es"


def _course(root: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root), "MPLBACKEND": "Agg"}
    return subprocess.run(
        [sys.executable, "-m", "course", *argv],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def test_the_bundle_cli_offers_only_student_commands(student_bundle):
    done = _course(student_bundle, "--help")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    listed = {line.split()[0] for line in lines if line[:4] == "    " and line[4] != " "}
    assert set(STUDENT) <= listed
    assert not listed & set(INSTRUCTOR), listed
    for command in INSTRUCTOR:
        refused = _course(student_bundle, command)
        assert refused.returncode == 2
        assert "opción no válida" in refused.stderr and "Traceback" not in refused.stderr


@pytest.mark.slow  # «course check» ejecuta el cuaderno en un núcleo
def test_check_in_the_bundle_runs_the_visible_tests_and_explains_the_hidden_ones(
    student_bundle,
):
    started = _course(student_bundle, "empezar", LAB.id)
    assert started.returncode == 0, started.stderr
    work = f"trabajo/{LAB.id}/{LAB.id}.ipynb"
    before = (student_bundle / work).read_bytes()
    done = _course(student_bundle, "check", work)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "WARNING" not in done.stderr
    assert f"Laboratorio {LAB.id}" in done.stdout
    assert "Pruebas visibles superadas: 0 / " in done.stdout
    assert "✘ ej1_" in done.stdout
    assert "no van en el paquete del estudiante" in done.stdout
    assert (student_bundle / work).read_bytes() == before
    unknown = _course(student_bundle, "check", work, "--lab", "99_nada")
    assert unknown.returncode == 2
    assert "01_atencion, 02_normalizacion." in unknown.stderr


def _course_imports(source: str) -> set[str]:
    """Los módulos ``course.…`` que importa un archivo al cargarse (las importaciones dentro
    de una función pueden estar protegidas: ``check`` y ``doctor`` saben que el zip no
    lleva la calificación)."""
    found = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("course.")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("course"):
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


@pytest.mark.parametrize("through", ["01_atencion", "07_multi30k"])
def test_every_module_in_the_bundle_imports_only_what_the_bundle_ships(through):
    names = set(bundle.contents(through))
    missing = []
    for name in sorted(n for n in names if n.startswith("course/") and n.endswith(".py")):
        for module in _course_imports((labs.REPO / name).read_text(encoding="utf-8")):
            path = module.replace(".", "/")
            in_repo = (labs.REPO / f"{path}.py").is_file() or (labs.REPO / path).is_dir()
            shipped = f"{path}.py" in names or f"{path}/__init__.py" in names
            if in_repo and not shipped:
                missing.append(f"{name} importa {module}")
    assert not missing, "El zip lleva módulos que importan lo que no lleva:\n" + "\n".join(missing)
