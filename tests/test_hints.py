"""``course.student.hints``: una línea en español para los errores reales de PyTorch y de Python."""

import math
import subprocess
import sys

import pytest
import torch
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
]


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
    assert hints.hint("NotImplementedError", "otra cosa") is None


@pytest.mark.parametrize(
    ("ename", "evalue"),
    [
        ("AssertionError", "`salida`: forma incorrecta."),
        ("ValueError", "mat1 and mat2 shapes cannot be multiplied (3x4 and 5x6)"),
        ("RuntimeError", "CUDA out of memory"),
    ],
)
def test_unknown_errors_get_nothing(ename, evalue):
    assert hints.hint(ename, evalue) is None


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
    assert output.count("Pista:") == 1
