"""Construye entregas manipuladas del laboratorio 1 para tests/test_integrity.py.

Se parte de la versión de estudiante (``release/``) y se rellenan las celdas de solución
con las de ``source/``; después cada función de este módulo estropea algo concreto. Todas
devuelven un cuaderno nuevo y nunca tocan los archivos del repositorio.
"""

import copy
from pathlib import Path

import nbformat

from course import labs

LAB = labs.get("01_atencion")

# Respuestas alternativas, una celda de solución completa cada una.
BAD_ANSWERS = {
    "numpy": (
        "ej1_puntuaciones",
        "import numpy as np\n"
        "def attention_scores(query, key):\n"
        "    s = query.numpy() @ np.swapaxes(key.numpy(), -2, -1)\n"
        "    return s / np.sqrt(query.shape[-1])\n",
    ),
    "list": (
        "ej2_softmax",
        "def softmax(x):\n"
        "    y = (x - x.amax(dim=-1, keepdim=True)).exp()\n"
        "    return (y / y.sum(dim=-1, keepdim=True)).tolist()\n",
    ),
    "subclass": (
        "ej3_relleno",
        "class MiTensor(torch.Tensor):\n"
        "    pass\n"
        "def padding_mask(tokens, pad_idx):\n"
        "    return (tokens != pad_idx).unsqueeze(-2).as_subclass(MiTensor)\n",
    ),
    "always_equal": (
        "ej4_causal",
        "class SiempreIgual:\n"
        "    shape = dtype = None\n"
        "    def __eq__(self, other):\n"
        "        return True\n"
        "    def __getattr__(self, name):\n"
        "        return lambda *a, **k: self\n"
        "def causal_mask(size):\n"
        "    return SiempreIgual()\n",
    ),
    "wrong_dtype": (
        "ej5_atencion",
        "def scaled_dot_product_attention(query, key, value, mask=None):\n"
        "    q, k, v = query.double(), key.double(), value.double()\n"
        "    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))\n"
        "    if mask is not None:\n"
        "        s = s.masked_fill(~mask, float('-inf'))\n"
        "    w = torch.softmax(s, dim=-1).nan_to_num(0.0)\n"
        "    return w @ v, w\n",
    ),
    "wrong_shape": (
        "ej1_puntuaciones",
        "def attention_scores(query, key):\n"
        "    s = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))\n"
        "    return s.unsqueeze(0)\n",
    ),
    "nan": (
        "ej2_softmax",
        "def softmax(x):\n"
        "    y = x.exp()\n"
        "    y = y / y.sum(dim=-1, keepdim=True)\n"
        "    return y.masked_fill(torch.ones_like(y, dtype=torch.bool).triu(), float('nan'))\n",
    ),
    "meta_device": (
        "ej3_relleno",
        "def padding_mask(tokens, pad_idx):\n"
        "    return (tokens != pad_idx).unsqueeze(-2).to('meta')\n",
    ),
    "reference_import": (
        "ej4_causal",
        "from course.reference.attention import causal_mask\n",
    ),
}


def _grade_id(cell) -> str:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")


def solutions(lab: labs.Lab = LAB) -> dict[str, str]:
    """Código de cada celda de solución (de código) del cuaderno fuente, por grade id."""
    source = nbformat.read(lab.source, 4)
    return {
        _grade_id(c): c.source
        for c in source.cells
        if c.cell_type == "code" and c.get("metadata", {}).get("nbgrader", {}).get("solution")
    }


def solved(lab: labs.Lab = LAB) -> nbformat.NotebookNode:
    """La versión de estudiante de ``lab`` con todas las celdas de solución resueltas."""
    notebook = nbformat.read(lab.release, 4)
    answers = solutions(lab)
    for cell in notebook.cells:
        if _grade_id(cell) in answers:
            cell.source = answers[_grade_id(cell)]
    return notebook


def index(notebook, grade_id: str) -> int:
    return next(i for i, c in enumerate(notebook.cells) if _grade_id(c) == grade_id)


def cell(notebook, grade_id: str):
    return notebook.cells[index(notebook, grade_id)]


def answer(notebook, grade_id: str, code: str) -> None:
    """Sustituye la celda de solución ``grade_id`` por ``code``."""
    cell(notebook, grade_id).source = code


def bad_answer(notebook, case: str) -> str:
    """Pone la respuesta defectuosa ``case`` de BAD_ANSWERS; devuelve el ejercicio tocado."""
    exercise, code = BAD_ANSWERS[case]
    answer(notebook, exercise, code)
    return exercise


def append_to_answer(notebook, grade_id: str, code: str) -> None:
    """Añade ``code`` al final de la celda de solución (tras la definición correcta)."""
    target = cell(notebook, grade_id)
    target.source = target.source.rstrip("\n") + "\n\n" + code


def delete(notebook, grade_id: str) -> None:
    del notebook.cells[index(notebook, grade_id)]


def insert_code(notebook, position: int, code: str) -> None:
    """Inserta una celda de código sin metadatos de nbgrader (una celda del estudiante)."""
    notebook.cells.insert(position, nbformat.v4.new_code_cell(code))


def duplicate_grade_id(notebook, grade_id: str) -> None:
    """Copia la celda ``grade_id`` (metadatos incluidos) justo después de sí misma."""
    i = index(notebook, grade_id)
    clone = copy.deepcopy(notebook.cells[i])
    clone.source = "print('copia del estudiante')"
    notebook.cells.insert(i + 1, clone)


def write(notebook, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path
