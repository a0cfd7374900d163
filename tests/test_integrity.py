"""Entregas manipuladas del laboratorio 1 calificadas con nbgrader real (docs/reliability.md).

Cada prueba es un caso con un resultado definido: ninguna entrega tumba la calificación y
cada una saca 0 o los puntos que ganó, con un motivo legible. Para ahorrar tiempo, los
casos que tocan ejercicios distintos comparten cuaderno (una ejecución de nbgrader cada
grupo, unos 5 s); ``graded`` los califica una sola vez por sesión.
"""

import hashlib
import json
import re
from pathlib import Path

import leaks
import nbformat
import pytest
import tampering as t

from course import grading, labs
from course.commands.check import report
from course.grading import integrity
from course.labs import CourseError

FULL = {"ej1_puntuaciones": 14, "ej2_softmax": 14, "ej3_relleno": 14, "ej4_causal": 14}
FULL["ej5_atencion"] = 24
LOOP_TIMEOUT = 10  # s por celda en el caso del bucle infinito (80 s en nbgrader_config.py: 60)

WRONG = {  # respuestas incorrectas pero bien tipadas: las pruebas restauradas deben verlas
    "ej1_puntuaciones": "def attention_scores(query, key):\n    return query @ key.transpose(-2, -1)\n",
    "ej2_softmax": "def softmax(x):\n    return x.exp()\n",
    "ej3_relleno": "def padding_mask(tokens, pad_idx):\n    return ~(tokens != pad_idx).unsqueeze(-2)\n",
    "ej4_causal": "def causal_mask(size):\n    return torch.ones(size, size, dtype=torch.bool).triu()\n",
    "ej5_atencion": (
        "def scaled_dot_product_attention(query, key, value, mask=None):\n"
        "    w = torch.softmax(query @ key.transpose(-2, -1), dim=-1)\n"
        "    return w @ value, w\n"
    ),
}
# Ejercicio 5 correcto sin usar las funciones anteriores del estudiante.
SELF_CONTAINED_EJ5 = (
    "def scaled_dot_product_attention(query, key, value, mask=None):\n"
    "    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))\n"
    "    if mask is not None:\n"
    "        scores = scores.masked_fill(~mask, float('-inf'))\n"
    "    weights = torch.softmax(scores, dim=-1)\n"
    "    if mask is not None:\n"
    "        weights = weights.masked_fill(~mask, 0.0)\n"
    "    return weights @ value, weights\n"
)


def _tests_tampered():
    nb = t.solved()
    t.delete(nb, "ej1_puntuaciones_prueba")  # borradas: se restauran y puntúan
    t.delete(nb, "ej1_puntuaciones_oculta")
    t.answer(nb, "ej2_softmax", WRONG["ej2_softmax"])
    t.cell(nb, "ej2_softmax_prueba").source = "assert True"
    t.cell(nb, "ej2_softmax_oculta").source = ""
    t.answer(nb, "ej3_relleno", WRONG["ej3_relleno"])
    t.cell(
        nb, "ej3_relleno_prueba"
    ).source = "mask = padding_mask(torch.tensor([[1, 0]]), 0)\nprint('Prueba visible superada.')"
    t.duplicate_grade_id(nb, "ej4_causal_prueba")
    t.answer(nb, "ej5_atencion", SELF_CONTAINED_EJ5)  # sin depender de ej2 (incorrecto aquí)
    t.duplicate_grade_id(nb, "ej5_atencion")
    t.insert_code(nb, 0, "import paquete_que_no_existe\n")  # error al importar, 1.ª celda
    t.cell(nb, "preparacion").source = "raise RuntimeError('preparación rota')"
    return nb


def _types():
    nb = t.solved()
    for case in ("numpy", "list", "subclass", "always_equal", "wrong_dtype"):
        t.bad_answer(nb, case)
    return nb


def _values():
    nb = t.solved()
    for case in ("wrong_shape", "nan", "meta_device", "reference_import"):
        t.bad_answer(nb, case)
    t.answer(nb, "ej5_atencion", SELF_CONTAINED_EJ5 + "\nprint('x' * 5_000_000)\n")
    return nb


def _patches_blocked():
    # Antes de cualquier parche: dos intentos que course.student.checks rechaza sin cambiar nada.
    nb = t.solved()
    t.answer(
        nb, "ej1_puntuaciones", WRONG["ej1_puntuaciones"] + "checks.close = lambda *a, **k: None\n"
    )
    t.append_to_answer(nb, "ej2_softmax", "del checks.shape\n")
    # Después, parches que sí cambian torch y numpy: desde ahí ninguna comprobación se fía.
    t.answer(
        nb,
        "ej3_relleno",
        WRONG["ej3_relleno"] + "torch.Tensor.__eq__ = lambda self, other: torch.tensor(True)\n",
    )
    t.answer(
        nb,
        "ej4_causal",
        WRONG["ej4_causal"]
        + "import numpy\nimport numpy as np\ntorch.allclose = lambda *a, **k: True\n"
        "numpy.allclose = lambda *a, **k: True\nnp.abs = lambda x: x * 0\nexamples.qkv = None\n",
    )
    t.answer(nb, "ej5_atencion", SELF_CONTAINED_EJ5)
    return nb


def _patches_defeating():
    nb = t.solved()
    t.answer(
        nb,
        "ej2_softmax",
        "def softmax(x):\n    y = (x - x.amax(dim=-1, keepdim=True)).exp()\n"
        "    return y / (y.sum(dim=-1, keepdim=True) + 1)\n"
        "F.softmax = lambda x, dim=-1, **k: softmax(x)\n",
    )
    t.answer(
        nb, "ej4_causal", WRONG["ej4_causal"] + "vars(checks)['close'] = lambda *a, **k: None\n"
    )
    t.answer(
        nb,
        "ej5_atencion",
        WRONG["ej5_atencion"] + "import course.reference.attention as r\n"
        "r.scaled_dot_product_attention = lambda q, k, v, mask=None:"
        " scaled_dot_product_attention(q, k, v)\n",
    )
    # Y, en ejercicios que no tocan esos parches: celdas de respuesta y de preparación borradas.
    t.insert_code(nb, t.index(nb, "ej1_puntuaciones"), t.solutions()["ej1_puntuaciones"])
    t.delete(nb, "ej1_puntuaciones")  # la función está en otra celda: cuenta
    t.delete(nb, "ej3_relleno")  # sin respuesta: 0
    t.delete(nb, "preparacion")  # se restaura: los imports vuelven
    return nb


def _patch_before_setup():
    # Una celda nueva al principio, antes de la de preparación (y de importar course.student.checks).
    nb = t.solved()
    t.answer(nb, "ej2_softmax", WRONG["ej2_softmax"])
    t.insert_code(
        nb,
        0,
        "import torch.nn.functional\n\ndef mi_softmax(x, dim=-1, **kwargs):\n    return x.exp()\n\n"
        "torch.nn.functional.softmax = mi_softmax\n",
    )
    return nb


def _loop_and_exit():
    nb = t.solved()
    t.answer(nb, "ej2_softmax", "while True:\n    pass\n\n" + t.solutions()["ej2_softmax"])
    t.append_to_answer(nb, "ej4_causal", "import os\nos._exit(3)\n")
    return nb


def _other_lab():
    other = labs.get("02_normalizacion")
    return nbformat.read(other.source, 4)


def _empty():
    return nbformat.v4.new_notebook()


BUILDERS = {
    "pruebas_manipuladas": _tests_tampered,
    "tipos": _types,
    "valores": _values,
    "parches_bloqueados": _patches_blocked,
    "parches_que_burlan": _patches_defeating,
    "parche_antes_de_preparar": _patch_before_setup,
    "bucle_y_exit": _loop_and_exit,
    "otro_laboratorio": _other_lab,
    "vacio": _empty,
}

_cache: dict[str, grading.Result] = {}


def _digest(path: Path) -> tuple[int, str]:
    return path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest()


def grade(path: Path, **kwargs) -> grading.Result:
    """Califica y comprueba que el archivo entregado no cambió (fecha y contenido)."""
    before = _digest(path)
    result = grading.grade_notebook(path, t.LAB, **kwargs)
    assert _digest(path) == before, f"la calificación modificó {path}"
    report(result)  # el informe se puede escribir siempre
    return result


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("entregas")

    def get(case: str) -> grading.Result:
        if case not in _cache:
            path = t.write(BUILDERS[case](), folder / f"{case}.ipynb")
            timeout = LOOP_TIMEOUT if case == "bucle_y_exit" else None
            _cache[case] = grade(path, timeout=timeout)
        return _cache[case]

    return get


def points(result: grading.Result) -> dict[str, float]:
    by_exercise: dict[str, float] = {}
    for cell in result.cells:
        if cell.points is not None and not cell.grade_id.startswith("pregunta"):
            by_exercise[cell.exercise] = by_exercise.get(cell.exercise, 0) + cell.points
    return by_exercise


def reasons(result: grading.Result, exercise: str) -> str:
    return " | ".join(c.message for c in result.cells if c.exercise == exercise and c.message)


def expect(result, exercise: str, got: float, reason: str = "") -> None:
    assert points(result)[exercise] == got, (exercise, points(result), reasons(result, exercise))
    if reason:
        assert re.search(reason, reasons(result, exercise)), reasons(result, exercise)


# --- Celdas de prueba borradas o editadas --------------------------------------------------


@pytest.mark.slow
def test_deleted_test_cells_are_restored_and_scored(graded):
    expect(graded("pruebas_manipuladas"), "ej1_puntuaciones", 14)


@pytest.mark.slow
def test_assert_true_and_emptied_tests_are_restored(graded):
    expect(graded("pruebas_manipuladas"), "ej2_softmax", 0, "filas deben sumar 1|valores difieren")


@pytest.mark.slow
def test_weakened_visible_test_is_restored(graded):
    expect(graded("pruebas_manipuladas"), "ej3_relleno", 0, "valores difieren")


@pytest.mark.slow
def test_duplicated_grade_ids_are_graded_once(graded):
    result = graded("pruebas_manipuladas")
    expect(result, "ej4_causal", 14)
    expect(result, "ej5_atencion", 24)
    assert [c.grade_id for c in result.cells].count("ej4_causal_prueba") == 1
    assert any("duplicado «ej4_causal_prueba»" in f for f in result.findings)
    assert any("duplicado «ej5_atencion»" in f for f in result.findings)


@pytest.mark.slow
def test_exception_in_an_added_first_cell_and_broken_setup_cost_nothing(graded):
    assert sum(points(graded("pruebas_manipuladas")).values()) == 14 + 0 + 0 + 14 + 24


# --- Tipos y valores equivocados -----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("exercise", "reason"),
    [
        ("ej1_puntuaciones", "se obtuvo numpy.ndarray"),
        ("ej2_softmax", "se obtuvo builtins.list"),
        ("ej3_relleno", "se obtuvo __main__.MiTensor"),
        ("ej4_causal", "se obtuvo __main__.SiempreIgual"),
        ("ej5_atencion", "Se esperaba torch.float32 y se obtuvo torch.float64"),
    ],
    ids=["numpy", "lista", "subclase_de_tensor", "eq_siempre_cierto", "dtype"],
)
def test_wrong_return_type_gets_zero_with_reason(graded, exercise, reason):
    expect(graded("tipos"), exercise, 0, reason)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("exercise", "reason"),
    [
        ("ej1_puntuaciones", "forma incorrecta"),
        ("ej2_softmax", "no finitos"),
        ("ej3_relleno", "dispositivo «meta»"),
    ],
    ids=["forma", "nan", "dispositivo"],
)
def test_wrong_values_get_zero_with_reason(graded, exercise, reason):
    expect(graded("valores"), exercise, 0, reason)


@pytest.mark.slow
def test_importing_the_reference_fails_in_the_sandbox_and_is_reported(graded):
    # El núcleo aislado no tiene la referencia del laboratorio que se califica.
    result = graded("valores")
    expect(result, "ej4_causal", 0, "causal_mask")
    assert any("importa course.reference.attention.causal_mask" in f for f in result.findings)


@pytest.mark.slow
def test_megabytes_of_output_are_graded_normally(graded):
    expect(graded("valores"), "ej5_atencion", 24)


# --- Parches sobre torch, numpy y course ---------------------------------------------------
# Las pruebas se ejecutan en el proceso calificador: lo que el cuaderno parchee en su núcleo
# no cambia ninguna comprobación. Una respuesta incorrecta sigue suspendiendo y una correcta
# sigue puntuando, haya o no parches.


@pytest.mark.slow
@pytest.mark.parametrize(
    ("exercise", "got", "reason"),
    [
        ("ej1_puntuaciones", 0, "valores difieren"),  # checks.close = ... en el núcleo
        ("ej2_softmax", 14, ""),  # del checks.shape en el núcleo
        ("ej3_relleno", 0, "invertida|valores difieren"),  # torch.Tensor.__eq__ parcheado
        ("ej4_causal", 0, "traspuesta|valores difieren"),  # allclose y np.abs parcheados
        ("ej5_atencion", 24, ""),  # correcto, después de los parches
    ],
    ids=["checks.close", "del_checks.shape", "Tensor.__eq__", "allclose+np.abs", "después"],
)
def test_monkeypatches_in_the_kernel_change_no_check(graded, exercise, got, reason):
    expect(graded("parches_bloqueados"), exercise, got, reason)


@pytest.mark.slow
def test_blocked_monkeypatches_are_reported(graded):
    findings = "\n".join(graded("parches_bloqueados").findings)
    for what in ("checks.close", "torch.allclose", "numpy.allclose", "torch.Tensor.__eq__"):
        assert f"modifica {what}" in findings
    assert "modifica np.abs" in findings and "modifica examples.qkv" in findings
    assert "modifica checks.shape" in findings  # del


@pytest.mark.slow
def test_monkeypatches_that_used_to_defeat_the_kernel_gain_nothing(graded):
    # F.softmax = softmax hacía que la prueba oculta comparase al estudiante consigo mismo,
    # vars(checks) esquivaba el bloqueo y parchear la referencia la igualaba a la respuesta
    # incorrecta: ahora la prueba y la referencia viven fuera del núcleo; el informe lo señala.
    result = graded("parches_que_burlan")
    findings = "\n".join(result.findings)
    assert "modifica F.softmax (módulo torch.nn.functional)" in findings
    assert "usa vars(checks)" in findings
    expect(result, "ej2_softmax", 0, "valores difieren")
    expect(result, "ej4_causal", 0, "traspuesta|valores difieren")
    expect(result, "ej5_atencion", 0, "valores difieren|√d_k")


@pytest.mark.slow
def test_a_patch_before_the_setup_cell_gains_nothing(graded):
    # softmax incorrecta y F.softmax cambiada antes de la preparación: suspenden ej2 y ej5
    # (que usa esa softmax); el resto, correcto, puntúa.
    result = graded("parche_antes_de_preparar")
    assert points(result) == FULL | {"ej2_softmax": 0, "ej5_atencion": 0}


@pytest.mark.slow
def test_deleted_answer_and_setup_cells_are_restored(graded):
    result = graded("parches_que_burlan")
    expect(result, "ej1_puntuaciones", 14)
    expect(result, "ej3_relleno", 0, "NameError: name 'padding_mask'")


# --- Bucle infinito y núcleo que muere -----------------------------------------------------


@pytest.mark.slow
def test_infinite_loop_costs_only_its_exercise(graded):
    result = graded("bucle_y_exit")
    expect(result, "ej1_puntuaciones", 14)
    expect(result, "ej2_softmax", 0, "NameError")
    expect(result, "ej3_relleno", 14)


@pytest.mark.slow
def test_os_exit_costs_only_its_cell_and_what_depends_on_it(graded):
    # El núcleo muere en la celda de ej4: se arranca otro, se repiten las celdas anteriores
    # (salvo la del bucle) y la calificación sigue; ej5 usa la softmax perdida de ej2.
    result = graded("bucle_y_exit")
    expect(result, "ej4_causal", 0, "causal_mask")
    expect(result, "ej5_atencion", 0, "softmax")


# --- Cuadernos equivocados -----------------------------------------------------------------


@pytest.mark.slow
def test_notebook_from_another_lab_gets_zero_and_is_reported(graded):
    result = graded("otro_laboratorio")
    assert points(result) == dict.fromkeys(FULL, 0)
    assert any("otro laboratorio" in f for f in result.findings)
    assert grading.identify(_other_lab()).id == "02_normalizacion"


@pytest.mark.slow
def test_empty_notebook_gets_zero(graded):
    result = graded("vacio")
    assert points(result) == dict.fromkeys(FULL, 0)
    assert "NameError" in reasons(result, "ej1_puntuaciones")


@pytest.mark.parametrize(
    "content", [b"", b"{no es json", b'{"cells": 3}', json.dumps({"nbformat": 4}).encode()]
)
def test_broken_files_are_a_clear_error(tmp_path, content):
    path = tmp_path / "01_atencion.ipynb"
    path.write_bytes(content)
    with pytest.raises(CourseError, match="no es un cuaderno válido"):
        grading.grade_notebook(path, t.LAB)


def test_empty_notebook_without_lab_is_a_clear_error(tmp_path):
    path = t.write(_empty(), tmp_path / "vacio.ipynb")
    with pytest.raises(CourseError, match="No se reconoce el laboratorio"):
        grading.grade_notebook(path)


@pytest.mark.slow
def test_renamed_notebook_in_a_folder_with_extra_files(tmp_path):
    folder = tmp_path / "entrega"
    path = t.write(t.solved(), folder / "copia de 01_atencion (1).ipynb")
    for name in ("course.py", "torch.py", "checks.py"):
        (folder / name).write_text("raise SystemExit('archivo del estudiante')\n")
    (folder / "datos.bin").write_bytes(b"\0" * 2_000_000)
    result = grade(path)
    assert points(result) == FULL
    assert not result.findings


# --- Determinismo --------------------------------------------------------------------------


@pytest.mark.slow
def test_regrading_gives_identical_scores(graded, tmp_path):
    path = t.write(_tests_tampered(), tmp_path / "otra_vez.ipynb")
    again = grade(path)
    first = graded("pruebas_manipuladas")
    assert [(c.grade_id, c.points) for c in again.cells] == [
        (c.grade_id, c.points) for c in first.cells
    ]


# --- Informe estático (sin nbgrader) -------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "finding"),
    [
        ("import torch\ntorch.allclose = lambda *a: True", "modifica torch.allclose"),
        ("import numpy as np\nnp.testing.assert_allclose = print", "modifica np.testing"),
        ("from torch import Tensor\nTensor.__eq__ = None", "modifica Tensor.__eq__"),
        ("import course.student.checks as c\nsetattr(c, 'close', print)", "setattr sobre c"),
        ("from course.student import checks\nchecks.__dict__['close'] = 1", "usa checks.__dict__"),
        ("from course.reference import attention", "importa course.reference.attention"),
        ("import course.reference.attention as r", "importa course.reference.attention"),
        ("import importlib\nimportlib.import_module('course.reference')", "importa course.ref"),
        (
            "from course.student import checks\nchecks = None",
            "reasigna checks (era course.student.checks)",
        ),
        ("import torch.nn.functional as F\nimport mi_modulo as F", "reasigna F (era torch.nn"),
    ],
)
def test_integrity_scan_finds(code, finding):
    found = integrity.scan_code(code)
    assert any(finding in what for _, what in found), found


def test_integrity_scan_is_quiet_on_honest_code():
    assert integrity.scan(t.solved()) == []
    assert integrity.scan_code("x = torch.zeros(3)\nx[0] = 1\nself.w = 2") == []


@pytest.mark.parametrize("lab", labs.available(), ids=lambda lab: lab.id)
def test_integrity_scan_is_quiet_on_every_lab_solution(lab):
    # Cada laboratorio resuelto como lo tendría el estudiante, informado como al calificar.
    source = nbformat.read(lab.source, 4)
    assert integrity.scan(t.solved(lab), grading.grade_ids(source), original=source) == []


SUSPICIOUS = [  # (código de una celda nueva, lo que dice su hallazgo)
    ("get_ipython().events.register('pre_run_cell', f)", "usa get_ipython().events"),
    ("ip = get_ipython()\nip.run_cell = lambda *a, **k: None", "usa get_ipython().run_cell"),
    ("get_ipython().ast_transformers.append(t)", "get_ipython().ast_transformers"),
    ("get_ipython().input_transformers_post.append(f)", "get_ipython().input_transformers_post"),
    ("!rm -rf runs", "ejecuta la orden del sistema !rm -rf runs"),
    ("archivos = !ls", "ejecuta la orden del sistema !ls"),
    ("%%bash\necho hola\n", "usa la orden mágica %%bash"),
    ("%%writefile course/student/checks.py\nclose = print\n", "usa la orden mágica %%writefile"),
    ("%time eval('1 + 1')", "usa eval (código dinámico)"),
    ("exec('checks = None')", "usa exec (código dinámico)"),
    ("e = eval\ne('1')", "usa eval como e (código dinámico)"),
    ("codigo = compile(src, 'x', 'exec')", "usa compile (código dinámico)"),
    ("m = __import__(nombre)", "usa __import__ (importación calculada)"),
    ("import importlib\nimportlib.import_module('course.' + n)", "importlib.import_module (import"),
    ("import importlib\nimportlib.reload(checks)", "usa importlib.reload (módulos cargados)"),
    (
        "import sys\nsys.modules['course.student.checks'] = falso",
        "usa sys.modules (módulos cargados)",
    ),
    ("from sys import modules\ndel modules['torch']", "usa sys.modules como modules"),
    ("f.__code__ = g.__code__", "usa f.__code__ (introspección)"),
    ("celda = checks.close.__closure__[0]", "usa checks.close.__closure__ (introspección)"),
    ("g = attention_scores.__globals__", "usa attention_scores.__globals__"),
    ("__builtins__.print = p", "modifica __builtins__.print (módulo builtins)"),
    ("import inspect\nmarco = inspect.currentframe().f_back", "usa inspect.currentframe ("),
    ("import sys\nsys._getframe(1).f_globals['x'] = 1", "usa sys._getframe (introspección)"),
    ("lib = torch.library.Library('aten', 'IMPL')", "torch.library.Library (registro de op"),
    ("torch._C._set_grad_enabled(False)", "usa torch._C._set_grad_enabled (registro"),
    ("torch.ops.load_library('op.so')", "usa torch.ops.load_library (registro de operadores"),
    ("import builtins", "importa builtins (funciones integradas)"),
    ("import builtins as b\nb.print = p", "modifica b.print (módulo builtins)"),
    ("import subprocess as sp\nsp.run(['ls'])", "usa subprocess.run como sp.run (procesos)"),
    ("from os import system\nsystem('ls')", "usa os.system como system (procesos)"),
    ("import os\nos.popen('ls')", "usa os.popen (procesos)"),
    ("import os\nos.fork()", "usa os.fork (procesos)"),
    ("import os\nimport signal\nos.kill(os.getppid(), signal.SIGKILL)", "usa os.kill (procesos)"),
    ("import ctypes", "importa ctypes (procesos)"),
    ("from multiprocessing import Process", "importa multiprocessing.Process (procesos)"),
    ("import pty", "importa pty (procesos)"),
    ("import os\ngetattr(os, 'sys' + 'tem')('ls')", "getattr sobre os con un nombre calculado"),
    ("import os\ngetattr(os, 'system')('ls')", "usa os.system como getattr(os, 'system')"),
    ("open('runs/metrics.json', 'w').write('{}')", "abre un archivo para escribir: open(…, 'w')"),
    ("with open(ruta, mode='a') as f:\n    f.write('x')", "para escribir: open(…, 'a')"),
    ("Path('notas.txt').write_text('10')", "escribe un archivo con Path('notas.txt').write_text"),
    ("Path('checks.py').write_bytes(b'')", "escribe un archivo con Path('checks.py').write_bytes"),
    ("import shutil\nshutil.rmtree('runs')", "usa shutil.rmtree (borrado o cambio de archivos)"),
    ("from shutil import copy\ncopy('a', 'checks.py')", "usa shutil.copy como copy (escritura"),
    ("os.remove('gradebook.db')", "usa os.remove (borrado o cambio de archivos)"),
    ("import os as sistema\nsistema.replace('a', 'b')", "usa os.replace como sistema.replace"),
    ("os.chmod('a', 0o777)", "usa os.chmod (borrado o cambio de archivos)"),
    ("import sqlite3\nsqlite3.connect('gradebook.db')", "importa sqlite3 (base de datos)"),
    ("from sqlalchemy import create_engine", "importa sqlalchemy.create_engine (base de datos)"),
    ("import socket\nsocket.create_connection(('x', 80))", "usa socket.create_connection (red)"),
    ("from urllib.request import urlopen\nurlopen(u)", "usa urllib.request.urlopen como urlopen"),
    ("import requests\nrequests.post(u, data=datos)", "usa requests.post (red)"),
    ("globals()['checks'] = None", "usa globals (introspección)"),
    ("vars(os)['system']('ls')", "usa vars(os)"),
]
INNOCENT = [
    "from IPython.display import HTML, clear_output, display\n"
    "display(HTML('<b>hola</b>'))\nclear_output(wait=True)",
    "handle = display(display_id=True)\nhandle.update(fig)",
    "%matplotlib inline\nmodel.eval()",
    "%time pesos = softmax(torch.randn(3, 4))",
    "rapido = torch.compile(model)\nimport re\npatron = re.compile('a+')",
    "with open('datos.txt', encoding='utf-8') as f:\n    texto = f.read()",
    "texto = Path('datos.txt').read_text()",
    "valor = getattr(model, nombre)",
    "ruta = os.path.join('runs', os.environ.get('CARPETA', ''))",
    "import importlib\nnp2 = importlib.import_module('numpy')",
    "import json\nprint(json.dumps({'r': math.sqrt(2)}))",
    "def evaluate(model, batches):\n    model.eval()\n    return sum(model(b) for b in batches)",
    "import inspect\nfirma = inspect.signature(softmax)",
    "import tempfile\ncarpeta = tempfile.gettempdir()",
    "x = torch.zeros(3)\nx[0] = 1\nfrase = 'a b'.replace(' ', '_')",
]


def _with_cell(code: str) -> tuple[nbformat.NotebookNode, int]:
    """El laboratorio 1 resuelto con ``code`` en una celda nueva al final, tras importar os y
    Path; devuelve el cuaderno y el número de esa celda."""
    nb = t.solved()
    t.insert_code(nb, len(nb.cells), "import os\nfrom pathlib import Path\n")
    t.insert_code(nb, len(nb.cells), code)
    return nb, len(nb.cells)


@pytest.mark.parametrize(("code", "finding"), SUSPICIOUS)
def test_integrity_scan_names_the_cell_and_the_construct(code, finding):
    nb, number = _with_cell(code)
    findings = integrity.scan(nb)
    assert any(f.startswith(f"celda {number}, línea ") and finding in f for f in findings), findings


@pytest.mark.parametrize("code", INNOCENT)
def test_integrity_scan_is_quiet_on_innocent_code(code):
    assert integrity.scan(_with_cell(code)[0]) == []


def test_integrity_report_is_deduplicated_and_bounded():
    nb = t.solved()
    for _ in range(100):
        t.duplicate_grade_id(nb, "ej1_puntuaciones")
    t.insert_code(nb, len(nb.cells), "\n".join(f"eval('{i}')" for i in range(10_000)))
    number = len(nb.cells)
    for i in range(100):
        t.insert_code(nb, len(nb.cells), f"exec('{i}')\nexec('{i}')")
    findings = integrity.scan(nb)
    assert findings[0] == (
        f"celda {number}, línea 1: usa eval (código dinámico) (y en 9999 líneas más)"
    )
    assert findings[integrity.SHOWN] == "… y 61 hallazgos más en el código, que no se muestran"
    assert findings[integrity.SHOWN + 1 :] == [
        "grade id duplicado «ej1_puntuaciones»: se califica solo la primera celda"
    ]


def test_integrity_scan_survives_code_too_nested_to_read():
    # Python lo compila (se ejecutaría) pero es demasiado hondo para recorrerlo: se dice.
    code = "x = " + " + ".join(["1"] * 1_000)
    compile(code, "celda", "exec")
    nb, number = _with_cell(code)
    assert integrity.scan(nb) == [
        f"celda {number}, línea 1: no se pudo leer entera: código demasiado anidado"
    ]


def test_what_the_lab_itself_does_is_not_reported_but_more_of_it_is():
    # El laboratorio 7 escribe archivos: el ejercicio 7 pide uno y la celda de entrenamiento
    # guarda y borra los de la ejecución. Otra forma de escribir el del ejercicio no se
    # señala; escribir otro archivo o borrar en el ejercicio, sí.
    lab = labs.get("07_multi30k")
    source = nbformat.read(lab.source, 4)
    nb = t.solved(lab)
    assert any("open(…, 'w')" in f for f in integrity.scan(nb))  # sin el laboratorio al lado
    t.answer(
        nb,
        "ej7_archivo",
        "def translate_test_set(model, tokenizer, pairs, path, max_len, device):\n"
        "    hyps = greedy_translate(model, tokenizer, [de for de, _ in pairs], max_len, device)\n"
        "    Path(path).write_text(''.join(h + '\\n' for h in hyps), encoding='utf-8')\n"
        "    import shutil\n"
        "    shutil.rmtree('runs', ignore_errors=True)\n"
        "    return corpus_bleu(hyps, [en for _, en in pairs])\n",
    )
    t.insert_code(nb, len(nb.cells), "shutil.rmtree(full_dir, ignore_errors=True)")  # la suya
    t.insert_code(nb, len(nb.cells), "(RUN_DIR / 'metrics.json').write_text('{}')")
    findings = integrity.scan(nb, grading.grade_ids(source), original=source)
    assert findings == [
        f"celda {t.index(nb, 'ej7_archivo') + 1}, línea 5: usa shutil.rmtree "
        "(borrado o cambio de archivos)",
        f"celda {len(nb.cells)}, línea 1: escribe un archivo con "
        "(RUN_DIR / 'metrics.json').write_text (escritura de archivos)",
    ]


# --- Fugas: ni soluciones ni pruebas ocultas en release/ ni en el zip de estudiantes ------

REGION = re.compile(r"BEGIN (SOLUTION|HIDDEN TESTS)|END (SOLUTION|HIDDEN TESTS)")


def _sources(text: str) -> list[str]:
    try:
        return [c.get("source", "") for c in json.loads(text).get("cells", [])]
    except ValueError:
        return [text]


def secret_lines(from_lab: str = "") -> set[str]:
    """Las líneas secretas de todos los laboratorios; con ``from_lab``, solo las de ese
    laboratorio y los siguientes (las regiones de los anteriores cuentan como públicas)."""
    sources = []
    for lab in labs.available():
        for source in _sources(lab.source.read_text()):
            text = "".join(source) if isinstance(source, list) else source
            sources.append(REGION.sub("", text) if lab.id < from_lab else text)
    return leaks.secret_lines(sources)


def leaked_lines(name: str, text: str, secrets: set[str]) -> set[str]:
    body = "\n".join(
        "".join(s) if isinstance(s, list) else s
        for s in (_sources(text) if name.endswith(".ipynb") else [text])
    )
    found = secrets & {line.strip() for line in body.splitlines()}
    return found | ({"<marcador>"} if REGION.search(body) else set())


def test_no_solution_or_hidden_test_line_in_release():
    secrets = secret_lines()
    assert len(secrets) > 50  # el criterio ve las soluciones de todos los laboratorios
    leaks = {}
    for path in sorted(labs.RELEASE.rglob("*")):
        if path.is_file() and path.suffix in (".ipynb", ".py", ".md", ".txt"):
            leaks[str(path)] = leaked_lines(path.name, path.read_text(errors="replace"), secrets)
    assert leaks and not {k: v for k, v in leaks.items() if v}


def secret_regions(from_lab: str) -> list[set[str]]:
    """Por cada región secreta de ``from_lab`` y siguientes, sus líneas secretas."""
    secrets, regions = secret_lines(from_lab), []
    for lab in labs.available():
        if lab.id < from_lab:
            continue
        for source in _sources(lab.source.read_text()):
            text = "".join(source) if isinstance(source, list) else source
            for region in re.findall(
                r"### BEGIN (?:SOLUTION|HIDDEN TESTS)(.*?)### END", text, re.S
            ):
                regions.append({line.strip() for line in region.splitlines()} & secrets)
    return [r for r in regions if len(r) >= 2]


@pytest.mark.parametrize("through", [lab.id for lab in labs.available()])
def test_no_solution_or_hidden_test_line_in_the_student_bundle(through):
    # El zip hasta el laboratorio N lleva a propósito la referencia de los anteriores, así
    # que cuentan las regiones de N y de los siguientes. En los cuadernos cuenta cada línea;
    # en el código de course/ (que comparte líneas genéricas como `optimizer.step()`),
    # una región secreta entera copiada.
    from course.commands import bundle

    secrets, regions = secret_lines(from_lab=through), secret_regions(through)
    files = bundle.contents(through)
    later = [m for lab in labs.LABS.values() if lab.id >= through for m in lab.reference]
    assert not [n for n in files if n.startswith("course/reference/") and Path(n).stem in later]
    leaks = {}
    for name, path in files.items():
        text = path.read_text(errors="replace")
        if name.endswith((".ipynb", ".md", ".txt")):
            leaks[name] = leaked_lines(name, text, secrets)
        elif name.endswith(".py"):
            present = {line.strip() for line in text.splitlines()}
            leaks[name] = set().union(*[r for r in regions if r <= present])
    assert any(n.endswith(".ipynb") for n in leaks)
    assert not {k: v for k, v in leaks.items() if v}


def test_check_report_lists_the_findings():
    result = grading.Result("", t.LAB.id, findings=["celda 7, línea 3: modifica checks.close"])
    text = report(result)
    assert "Informe de integridad" in text and "modifica checks.close" in text
    assert "Informe de integridad" not in report(grading.Result("", t.LAB.id))
