"""``course.student.hints``: una línea en español para los errores reales de PyTorch y de Python."""

import math
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from course.student import hints


class Forgetful(nn.Module):
    def __init__(self):
        self.w_q = nn.Linear(2, 2)


class WithoutLayer(nn.Module):
    def forward(self, x):
        return self.w_q(x)


def no_return(x):
    x + 1


class Renamed(nn.Module):
    """El enunciado pide ``self.embedding``; el estudiante la llama ``self.emb``."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)


def attention_pair(x):
    """Como la atención del curso: devuelve (salida, pesos)."""
    return x, x.softmax(dim=-1)


def learned_positions(x, table):
    """Posiciones con ``arange(D)`` en lugar de ``arange(T)``: x (B, T, D), table (max_len, D)."""
    return x + table[torch.arange(x.size(-1))]


def cross_attention_swapped(x, memory):
    """Atención cruzada con consultas de ``memory``: la residual ya no casa con ``x``."""
    scores = memory @ x.transpose(-2, -1)
    return x + scores.softmax(dim=-1) @ x


CASES = [
    (lambda: torch.ones(3, 4) @ torch.ones(5, 6), ["3x4", "5x6", ".shape"]),
    (lambda: nn.Linear(4, 2)(torch.ones(3, 5)), ["3x5", "4x2", ".shape"]),
    (lambda: torch.ones(2, 3, 4) @ torch.ones(2, 5, 4), ["[2, 4]", "[2, 5]", ".shape"]),
    (lambda: torch.ones(2, 3) + torch.ones(2, 4), ["eje 1", "3", "4", ".shape"]),
    (lambda: torch.ones(2, 3, 4).transpose(1, 2).view(2, 12), ["reshape"]),
    (lambda: torch.ones(2, 3).view(7), ["[7]", "6 elementos"]),
    (lambda: nn.Linear(2, 2)(torch.ones(2), torch.ones(2)), ["`Linear.forward`", "argumentos"]),
    (lambda: no_return(), ["`no_return`", "argumentos"]),
    (lambda: torch.ones(2)(1), ["Tensor", "mismo nombre"]),
    (lambda: torch.ones(2, 3).softmax(dim=2), ["2 ejes", "eje 2", "-1"]),
    (lambda: nn.Embedding(5, 2)(torch.tensor([5])), ["vocabulario"]),
    (lambda: torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64), ["float64"]),
    (lambda: torch.ones(2).masked_fill(torch.ones(2), 0.0), ["booleana"]),
    (lambda: bool(torch.ones(2)), [".all()"]),
    (lambda: torch.ones(2).sum().backward(), [".detach()"]),
    (Forgetful, ["super().__init__()"]),
    (lambda: WithoutLayer()(torch.ones(2)), ["`WithoutLayer`", "`w_q`", "self.w_q"]),
    (lambda: no_return(torch.ones(2)).shape, ["None", "return"]),
    (lambda: (torch.ones(2), torch.ones(2)).shape, ["tupla", "salida, pesos"]),
    (lambda: torch.softmaxx, ["PyTorch"]),
    (lambda: torch.ones(2).lenght, ["PyTorch"]),
    (lambda: __import__("course.reference.layers_que_no_existe"), ["no existe"]),
    (lambda: Renamed().embedding, ["`embedding`", "enunciado", "no los cambies"]),
    (lambda: torch.ones(2, 3) + attention_pair(torch.ones(2, 3)), ["tupla", "[0]"]),
    (lambda: nn.Dropout(0.1)(attention_pair(torch.ones(2, 3))), ["tupla", "[0]"]),
    (lambda: attention_pair(torch.ones(2)) + torch.ones(2), ["tupla", "[0]"]),
    (lambda: learned_positions(torch.ones(2, 3, 4), torch.ones(10, 4)), ["arange(D)", "eje 1"]),
    (lambda: cross_attention_swapped(torch.ones(2, 3, 4), torch.ones(2, 5, 4)), ["consultas"]),
    (lambda: torch.ones(2, 3, 4).add_(torch.ones(4, 4)), ["eje 1", "arange(D)"]),
    (lambda: math.exp(sum([300.0, 200.0, 250.0])), ["media", "exp"]),
    # Un error de cada tipo que puede lanzar el código de un estudiante (la tabla entera).
    (lambda: 1.0 / sum([]), ["divides entre cero", "clamp"]),
    (lambda: 7 // len([]), ["divides entre cero"]),
    (lambda: torch.ones(2, 3)[0, 1, 2], ["más índices", "(2)"]),
    (lambda: torch.ones(2, 3)[5], ["índice 5", "eje 0", "mide 2"]),
    (lambda: [1, 2][2], ["lista", "len(...)"]),
    (lambda: {"weight": 1}["wieght"], ["`wieght`", "keys()"]),
    (lambda: nn.Linear(2, 2).state_dict()["w"], ["`w`", "state_dict"]),
    (lambda: no_return(torch.ones(2))[0], ["None", "return"]),
    (lambda: list(no_return(torch.ones(2))), ["None", "return"]),
    (lambda: _unpack(torch.ones(2).sum().item()), ["float", "pareja"]),
    (lambda: torch.softmax(torch.ones(2), "x"), ["`dim`", "`softmax`", "int", "str"]),
    (lambda: torch.ones(2).view("a"), ["`view`", "tipos"]),
    (lambda: torch.full(2, 1.0), ["`size`", "`full`", "tuple of ints", "int"]),
    (lambda: [1, 2, 3][torch.tensor([0, 1])], [".item()"]),
    (lambda: len([])[0], ["int", "type(...)"]),
    (lambda: None + torch.ones(2), ["None", "type(...)"]),
    (lambda: _unpack((1, 2, 3)), ["a, b", "B, T, D"]),
    (lambda: math.log(0.0), ["math.log", "dominio"]),
    (lambda: float(torch.ones(3)), [".item()", ".mean()"]),
    (lambda: torch.ones(3).item(), [".item()", ".mean()"]),
    (lambda: _backward_twice(), ["dos veces", ".item()"]),
    (lambda: _inplace_after_use(), ["en su sitio", "masked_fill"]),
    (lambda: nn.Parameter(torch.ones(2)).add_(1.0), ["torch.no_grad()"]),
    (
        lambda: F.cross_entropy(torch.randn(2, 3, 5), torch.zeros(2, 4, dtype=torch.long)),
        ["reshape(-1, V)"],
    ),
    (
        lambda: F.cross_entropy(torch.randn(6, 5), torch.zeros(4, dtype=torch.long)),
        ["6 filas", "4 objetivos"],
    ),
    (lambda: torch.cat([torch.ones(2, 3), torch.ones(4, 5)], dim=0), ["torch.cat", "dim"]),
    (lambda: torch.stack([torch.ones(2), torch.ones(3)]), ["torch.stack"]),
    (
        lambda: torch.ones(2, 3).gather(-1, torch.zeros(2, dtype=torch.long)),
        ["gather", "unsqueeze(-1)"],
    ),
    (lambda: nn.Embedding(5, 2)(torch.ones(3)), ["enteros", "torch.long"]),
    (lambda: nn.LayerNorm(4)(torch.ones(2, 3)), ["LayerNorm", "[4]"]),
    (lambda: torch.ones(2, 3).permute(1, 0, 2), ["permute"]),
    (lambda: torch.ones(2, 1).add_(torch.ones(2, 3)), ["en su sitio", "[2, 1]", "[2, 3]"]),
    (lambda: undefined_name + 1, ["`undefined_name`", "celda"]),  # noqa: F821
    (lambda: _unbound(), ["antes de asignarla"]),
    (lambda: _recursive(1), ["sí misma"]),
    (lambda: __import__("torch").nn.functional.__dict__["no_existe"], ["`no_existe`"]),
    (lambda: exec("from torch import no_existe"), ["`torch` no tiene `no_existe`"]),
    (lambda: open("/no/existe/archivo.txt"), ["carpeta del cuaderno"]),
    (lambda: next(iter([])), ["next(...)"]),
    (lambda: _assert_without_message(), ["`assert` sin mensaje"]),
    (lambda: exec("if True\n    x = 1"), ["paréntesis", "dos puntos"]),
    (lambda: _not_implemented(), ["raise NotImplementedError()"]),
    (lambda: torch.ones(2).requires_grad_().view(-1, 3), ["[-1, 3]", "2 elementos"]),
    (lambda: torch.ones(2, 3).to(torch.float64) @ torch.ones(3, 2), ["float64"]),
    (lambda: torch.empty(2, 3).uniform_(2.0, 1.0), ["PyTorch no pudo"]),
]


def _unpack(value):
    a, b = value
    return a, b


def _backward_twice():
    x = torch.ones(2, requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    loss.backward()


def _inplace_after_use():
    x = torch.ones(3, requires_grad=True)
    y = x.exp()
    y.add_(1.0)
    y.sum().backward()


def _unbound():
    if False:
        total = 0
    return total  # noqa: F821


def _recursive(n):
    return _recursive(n + 1)


def _assert_without_message():
    raise AssertionError  # lo que lanza un `assert` sin mensaje fuera de pytest


def _not_implemented():
    raise NotImplementedError()


@pytest.mark.parametrize(("fails", "words"), CASES)
def test_real_errors_get_one_spanish_line(fails, words):
    with pytest.raises(Exception) as raised:
        fails()
    line = hints.hint(type(raised.value).__name__, str(raised.value))
    assert line is not None, f"sin pista para {type(raised.value).__name__}: {raised.value}"
    assert line.startswith("Pista: ") and "\n" not in line
    for word in words:
        assert word in line, (word, line)


def test_a_missing_reference_module_names_the_lab_that_provides_it():
    line = hints.hint("ModuleNotFoundError", "No module named 'course.reference.layers'")
    assert "05_capas" in line and "Capas del codificador y del decodificador" in line
    assert "06_" not in line
    line = hints.hint("ModuleNotFoundError", "No module named 'course'")
    assert "python -m course doctor" in line


def test_an_empty_exercise_says_what_to_do():
    assert "raise NotImplementedError()" in hints.hint("NotImplementedError", "")
    other = hints.hint("NotImplementedError", "otra cosa")
    assert other == hints.PREFIX + hints.FALLBACK["NotImplementedError"]


def test_the_course_checks_already_speak_spanish():
    assert hints.hint("AssertionError", "`salida`: forma incorrecta.") is None


@pytest.mark.parametrize(
    ("ename", "evalue"),
    [
        ("ValueError", "mat1 and mat2 shapes cannot be multiplied (3x4 and 5x6)"),
        ("RuntimeError", "algo que PyTorch dirá mañana"),
        ("IndexError", "otra cosa"),
    ],
)
def test_any_other_message_of_a_known_type_gets_the_line_of_its_type(ename, evalue):
    assert hints.hint(ename, evalue) == hints.PREFIX + hints.FALLBACK[ename]
    assert "3x4" not in hints.FALLBACK[ename]


def test_an_exception_of_any_other_type_gets_the_generic_line():
    assert hints.hint("MiErrorPropio", "0.1234") == hints.PREFIX + hints.GENERIC


def test_the_kernel_keeps_the_traceback_and_adds_the_line():
    """En IPython, importar ``course.student.checks`` engancha la pista; el error sigue siendo error."""
    script = """
from IPython.testing.globalipapp import start_ipython
shell = start_ipython()
shell.run_cell("from course.student import checks")
result = shell.run_cell("import torch\\ntorch.ones(3, 4) @ torch.ones(5, 6)")
assert isinstance(result.error_in_exec, RuntimeError), result
result = shell.run_cell("1 +")
assert result.error_before_exec is not None
result = shell.run_cell("x = 1")
assert result.success
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    output = done.stdout + done.stderr
    assert "mat1 and mat2 shapes cannot be multiplied" in output  # la traza original
    assert "Traceback" in output or "RuntimeError" in output
    assert "Pista: producto de matrices con formas 3x4 y 5x6" in output
    assert "SyntaxError" in output
    assert "Pista: Python no entiende cómo está escrita la línea" in output
    assert output.count("Pista:") == 2
