"""Topes de salida al calificar: el texto se corta pronto, las figuras llegan a la devolución."""

import base64

import nbformat

from course.grading import execute

PNG = base64.b64encode(b"\x89PNG" + bytes(range(256)) * 240).decode()  # ~80 KB en base64


def _cell(*outputs):
    cell = nbformat.v4.new_code_cell("figura()")
    cell.outputs = list(outputs)
    return cell


def _texts(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def test_a_figure_survives_the_text_cap():
    figure = nbformat.v4.new_output(
        "display_data", data={"image/png": PNG, "text/plain": "<Figure>"}
    )
    cell = _cell(figure)
    execute._cap_outputs(cell)
    assert len(PNG) > 2 * execute.MAX_OUTPUT_BYTES
    assert cell.outputs[0].data["image/png"] == PNG
    assert "recortada" not in _texts(cell)


def test_an_interactive_figure_keeps_its_png_when_its_data_is_too_big():
    plotly = {"data": [{"y": list(range(6000))}]}
    output = nbformat.v4.new_output(
        "display_data", data={"application/vnd.plotly.v1+json": plotly, "image/png": PNG}
    )
    cell = _cell(output)
    execute._cap_outputs(cell)
    assert set(cell.outputs[0].data) == {"image/png"}
    assert "salida recortada" in _texts(cell)


def test_text_floods_are_still_cut_with_one_note():
    flood = nbformat.v4.new_output("stream", name="stdout", text="x" * 50_000)
    cell = _cell(flood, nbformat.v4.new_output("stream", name="stdout", text="más"))
    execute._cap_outputs(cell, cut=True)
    text = _texts(cell)
    assert text.count("salida recortada") == 1
    assert cell.outputs[0].text == "x" * execute.MAX_OUTPUT_BYTES
    assert "más" not in text


def test_too_many_images_are_cut():
    figures = [nbformat.v4.new_output("display_data", data={"image/png": PNG}) for _ in range(40)]
    cell = _cell(*figures)
    execute._cap_outputs(cell)
    kept = [o for o in cell.outputs if o.output_type == "display_data"]
    assert len(kept) == execute.MAX_IMAGE_BYTES // len(PNG)
    assert "salida recortada" in _texts(cell)


def test_the_grading_cap_counts_utf8_bytes():
    accents = nbformat.v4.new_output("stream", name="stdout", text="ñ" * 15_000)  # 30 000 bytes
    cell = _cell(accents)
    execute._cap_outputs(cell)
    assert cell.outputs[0].text == "ñ" * (execute.MAX_OUTPUT_BYTES // 2)
    assert "salida recortada" in _texts(cell)


def test_a_huge_error_keeps_its_name_and_a_short_message():
    value = "se esperaba " + "9" * 100_000
    error = nbformat.v4.new_output(
        "error", ename="AssertionError", evalue=value, traceback=[f"AssertionError: {value}"]
    )
    cell = _cell(error)
    execute._cap_outputs(cell)
    kept = cell.outputs[0]
    assert kept.ename == "AssertionError" and kept.evalue == value[:500]
    assert len("\n".join(kept.traceback).encode()) <= execute.MAX_OUTPUT_BYTES
    assert kept.traceback[0].startswith("AssertionError: se esperaba 999")
    assert "salida recortada" in _texts(cell)
