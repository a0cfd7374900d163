"""La devolución no enseña las pruebas ocultas, la escriba quien la escriba.

Tres caminos escriben ``feedback/<estudiante>/<lab>/<lab>.html``: ``python -m course
feedback``, el botón *Generate Feedback* de Formgrader (``NbGraderAPI.generate_feedback``)
y ``nbgrader generate_feedback``. Las pruebas de integración montan, sin ejecutar ningún
núcleo, un curso con una entrega ya calificada (el cuaderno que deja ``grade`` y su
``calificacion.json``, unido al libro de notas) cuyas celdas de pruebas ocultas imprimen
líneas de la solución y cuyo error cita la referencia, con una salida enorme y una imagen
enorme; después comparan las tres páginas.
"""

import base64
import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from leaks import secret_lines
from nbformat.v4 import new_code_cell, new_notebook, new_output
from nbgrader.apps import NbGraderAPI
from nbgrader.coursedir import CourseDirectory

from course import grading, labs
from course.commands import feedback
from course.grading import results
from course.grading.feedback import REMOVED, SafeFeedback, strip_hidden_source

LAB = labs.get("01_atencion")
STUDENT = "beto"
HUGE_LINES = 3000  # ~100 bytes cada una: 300 kB, muy por encima del tope de 20 000 bytes
LAST_HUGE = f"línea enorme {HUGE_LINES - 1:05d}"
BIG_IMAGE = base64.b64encode(bytes(range(256)) * 12_000).decode()  # 4 MB en la página
SMALL_IMAGE = base64.b64encode(b"imagen-pequena" * 40).decode()
CUT_NOTE = "[Devolución: salidas de esta celda recortadas"
PAGE = f"{STUDENT}/{LAB.id}/{LAB.id}.html"


def _grade_id(cell) -> str:
    return cell.metadata.get("nbgrader", {}).get("grade_id", "")


def _secret() -> set[str]:
    return secret_lines(cell.source for cell in nbformat.read(LAB.source, 4).cells)


def _graded_notebook(secret: set[str]) -> nbformat.NotebookNode:
    """Lo que deja ``grade`` para quien entrega la versión de estudiante sin tocar, con las
    celdas de prueba repuestas desde el libro de notas y salidas puestas a mano."""
    tests = {_grade_id(c): c.source for c in nbformat.read(LAB.source, 4).cells}
    notebook = nbformat.read(LAB.release, 4)
    hidden_output = "\n".join(sorted(secret))
    visible_done = False
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("grade") or meta.get("solution"):
            continue
        cell.source = tests[meta["grade_id"]]
        if meta["grade_id"].endswith("_oculta"):
            cell.outputs = [
                new_output("stream", name="stdout", text=hidden_output),
                new_output(
                    "error",
                    ename="AssertionError",
                    evalue=max(secret, key=len),
                    traceback=["\x1b[0;31mAssertionError\x1b[0m", *sorted(secret)],
                ),
            ]
        elif not visible_done:
            visible_done = True
            huge = "".join(f"línea enorme {i:05d} " + "x" * 80 + "\n" for i in range(HUGE_LINES))
            cell.outputs = [
                new_output("stream", name="stdout", text=huge),
                new_output("display_data", data={"image/png": BIG_IMAGE, "text/plain": "<Fig>"}),
            ]
        else:
            cell.outputs = [
                new_output("display_data", data={"image/png": SMALL_IMAGE}),
                new_output(
                    "error",
                    ename="NotImplementedError",
                    evalue="",
                    traceback=["NotImplementedError: falta el ejercicio"],
                ),
            ]
    return notebook


def _result(notebook: nbformat.NotebookNode, secret: set[str]) -> results.Result:
    cells = []
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            manual = meta.get("solution", False)
            message = (
                f"AssertionError: {max(secret, key=len)}"
                if meta["grade_id"].endswith("_oculta")
                else ""
                if manual
                else "NotImplementedError: falta el ejercicio"
            )
            cells.append(
                {"grade_id": meta["grade_id"], "points": None if manual else 0,
                 "max_points": meta["points"], "message": message}
            )  # fmt: skip
    return results.Result(STUDENT, LAB.id, cells, graded_at="2025-01-01 10:00")


def _visible(page: str) -> set[str]:
    """Las líneas que ve quien abre la página (sin etiquetas, estilos ni guiones)."""
    page = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.S | re.I)
    return {_normal(line) for line in html.unescape(re.sub(r"<[^>]+>", "", page)).splitlines()}


def _normal(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, dict[str, str]]:
    """Lo que cada uno de los tres caminos deja en ``feedback/``: ruta -> texto."""
    root = tmp_path_factory.mktemp("curso")
    secret = _secret()
    notebook = _graded_notebook(secret)
    results.write(root / "autograded", result := _result(notebook, secret))
    nbformat.write(notebook, root / "autograded" / STUDENT / LAB.id / f"{LAB.id}.ipynb")
    assert results.merge([result], root / "gradebook.db") == 1
    out = root / "feedback"

    def collect() -> dict[str, str]:
        files = {
            path.relative_to(out).as_posix(): path.read_text(encoding="utf-8")
            for path in out.rglob("*")
            if path.is_file()
        }
        shutil.rmtree(out)
        return files

    found = {}
    assert feedback.run(root=root) == 0
    found["course"] = collect()

    config = grading.nbgrader_config(root)
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    done = api.generate_feedback(LAB.id, STUDENT)  # lo que llama el botón de Formgrader
    assert done["success"], done.get("error") or done.get("log")
    found["formgrader"] = collect()

    shutil.copy(labs.REPO / "nbgrader_config.py", root)  # el curso es esa carpeta
    cli = subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_feedback", LAB.id],
        cwd=root, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr[-3000:]
    found["nbgrader"] = collect()
    return found


@pytest.fixture(scope="module")
def pages(written) -> dict[str, set[str]]:
    """Las líneas visibles de la página de ``beto`` de cada camino."""
    return {name: _visible(files[PAGE]) for name, files in written.items()}


@pytest.mark.slow
def test_feedback_holds_only_the_page(written):
    for name, files in written.items():
        assert list(files) == [PAGE], name


@pytest.mark.slow
def test_no_page_shows_a_solution_or_hidden_test_line(written, pages):
    secret = {_normal(line) for line in _secret()}
    assert any("from course.reference import" in line for line in secret)
    long_lines = {line for line in secret if len(line) >= 40}
    for name, lines in pages.items():
        text = "\n".join(lines)
        leaked = sorted(secret & lines) + sorted(line for line in long_lines if line in text)
        assert not leaked, f"{name}: {leaked[:3]}"
        assert "HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text, name
        assert _normal(REMOVED) in lines, name


@pytest.mark.slow
def test_the_three_pages_show_the_same_notebook_content(pages):
    probes = set()
    for cell in _graded_notebook(_secret()).cells:
        texts = [cell.source]
        for output in cell.get("outputs", []):
            texts += [output.get("text", ""), *output.get("traceback", [])]
            texts += [str(value) for value in output.get("data", {}).values()]
        probes |= {_normal(line) for text in texts for line in text.splitlines()}
    shown = {name: probes & lines for name, lines in pages.items()}
    assert shown["course"] == shown["formgrader"] == shown["nbgrader"]
    assert "NotImplementedError: falta el ejercicio" in shown["course"]
    assert "línea enorme 00000 " + "x" * 80 in shown["course"]


@pytest.mark.slow
def test_huge_outputs_are_cut_by_bytes_with_a_spanish_note(written, pages):
    for name, lines in pages.items():
        page = written[name][PAGE]
        assert not any(LAST_HUGE in line for line in lines), name
        assert "[… salida recortada en la devolución …]" in lines, name
        assert any(line.startswith(CUT_NOTE) for line in lines), name
        assert BIG_IMAGE[-64:] not in page and SMALL_IMAGE in page, name
        assert len(page.encode()) < len(BIG_IMAGE), name


def _cell(source: str, grade_id: str = "", outputs=()) -> nbformat.NotebookNode:
    cell = new_code_cell(source, outputs=list(outputs))
    if grade_id:
        cell.metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "points": 5}
    return cell


def _filtered(*cells, **limits) -> list[nbformat.NotebookNode]:
    notebook, _ = SafeFeedback(**limits).preprocess(new_notebook(cells=list(cells)), {})
    return notebook.cells


def test_hidden_regions_become_one_spanish_line():
    source = "# antes\n### BEGIN HIDDEN TESTS\nsecreto = 1\n### END HIDDEN TESTS\nvisible = 2"
    assert strip_hidden_source(source) == f"# antes\n{REMOVED}\nvisible = 2"
    assert strip_hidden_source("a = 1\n### BEGIN HIDDEN TESTS\nsecreto = 1") == f"a = 1\n{REMOVED}"
    assert strip_hidden_source("### END HIDDEN TESTS\nb = 2") == "b = 2"


def test_hidden_test_cells_keep_no_output_at_all():
    printed = new_output("stream", name="stdout", text="valor de la referencia: 0.1234")
    failed = new_output("error", ename="AssertionError", evalue="se esperaba 0.1234", traceback=[])
    by_id, by_marker, visible = _filtered(
        _cell("checks.close(x, y)", "ej1_oculta", [printed, failed]),
        _cell("### BEGIN HIDDEN TESTS\nprint(ref)\n### END HIDDEN TESTS", "", [printed]),
        _cell("print(1)", "ej1_prueba", [printed]),
    )
    assert by_id.outputs == [] and by_id.source == "checks.close(x, y)"
    assert by_marker.outputs == [] and by_marker.source == REMOVED
    assert visible.outputs == [printed]


def test_outputs_are_capped_per_cell_in_bytes():
    big = "ñ" * 1000  # 2000 bytes
    (cell,) = _filtered(
        _cell(
            "f()",
            outputs=[
                new_output("stream", name="stdout", text=big),
                new_output("stream", name="stdout", text="no cabe"),
                new_output("display_data", data={"image/png": "A" * 600, "text/plain": "<Fig>"}),
                new_output("display_data", data={"image/png": "B" * 300}),
                new_output("error", ename="E", evalue="", traceback=["\x1b[0;31m" + "t" * 50]),
            ],
        ),
        max_text_bytes=1501,
        max_image_bytes=500,
    )
    first, image, error, note = cell.outputs
    shown = first.text.removesuffix("\n[… salida recortada en la devolución …]")
    assert shown == "ñ" * 750 and len(shown.encode()) == 1500
    assert image.data == {"image/png": "B" * 300}
    assert error.traceback == [""] and note.text.startswith("[Devolución: salidas")
    assert "1 501 bytes de texto y 500 bytes de imágenes" in note.text


def test_small_outputs_are_left_as_they_are():
    outputs = [
        new_output("stream", name="stdout", text="hola\n"),
        new_output("display_data", data={"image/png": "A" * 100, "text/plain": "<Fig>"}),
    ]
    (cell,) = _filtered(_cell("f()", outputs=outputs))
    assert cell.outputs == outputs


def test_the_course_config_puts_the_filter_in_nbgrader_feedback():
    steps = grading.nbgrader_config(Path("/tmp")).GenerateFeedback.preprocessors
    assert steps[0] is SafeFeedback and len(steps) == 3
