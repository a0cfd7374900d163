"""Ningún hecho del núcleo se cree: las ayudas de ``course.student.probe`` cambiadas en el núcleo.

Al calificar, una ayuda de ``course.student.probe`` con un objeto del estudiante se ejecuta en
su núcleo, y el núcleo puede cambiarla (``course.student.probe.gradients = …``): su respuesta
vale lo que valen los datos que devuelve. Cada prueba califica con el calificador de
verdad (``course.grading.grade_notebook``, núcleo aislado) un cuaderno con errores
honestos y el mismo cuaderno con las ayudas falsificadas, y exige que la falsificación
no suba ninguna nota. Además, una muestra del catálogo de errores pasa por el mismo
camino (``bench/mutants_trusted.py``): cada mutante pierde puntos en su ejercicio.
"""

import importlib.util
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
import pytest

from course import grading, labs, mistakes
from course.grading import sandbox

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(sandbox.available()), reason=f"sin aislamiento aquí: {sandbox.available()}"
    ),
]

REPO = Path(__file__).resolve().parents[1]

# La máscara sumada como sesgo de -inf (el gradiente llega a todas las puntuaciones) y los NaN
# de la fila sin posiciones permitidas quitados después: la salida es 0, pero los gradientes
# de query y key son NaN.
NAN_GRADIENTS = """
def scaled_dot_product_attention(query, key, value, mask=None):
    scores = attention_scores(query, key)
    if mask is not None:
        scores = scores + torch.zeros_like(scores).masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.where(torch.isnan(weights), torch.zeros_like(weights), weights)
    return weights @ value, weights
"""
# Lab 5: un codificador que corta el grafo y un decodificador cuya primera capa es el prototipo.
DETACHED_ENCODER = """
class _DetachedEncoder(Encoder):
    def forward(self, x, mask=None):
        return super().forward(x, mask).detach()


Encoder = _DetachedEncoder
"""
REUSING_DECODER = """
class _ReusingDecoder(Decoder):
    def __init__(self, layer, num_layers):
        super().__init__(layer, num_layers)
        self.layers[0] = layer


Decoder = _ReusingDecoder
"""
# Las ayudas falsificadas en el núcleo: gradientes que solo «existen», todas las capas
# distintas y parámetros que nunca se ponen a cero.
FORGED_PROBE = """
import course.student.probe as _probe


def _gradients(function, *inputs, upstream=None, pick=None):
    ones = [torch.ones_like(t) if isinstance(t, torch.Tensor) and t.is_floating_point() else None for t in inputs]
    named = dict(function.named_parameters()) if isinstance(function, torch.nn.Module) else {}
    return _probe._detached(function(*inputs)), ones, {n: torch.ones_like(p) for n, p in named.items()}


_probe.gradients = _gradients
_probe.distinct = lambda *objects: len(objects)
_probe.zero_parameters = lambda module, *paths: None
"""


def _grade(lab_id: str, additions: dict[str, str], folder: str) -> dict[str, float]:
    """Puntos por celda del cuaderno de solución con ``additions`` al final de esas celdas."""
    lab = labs.get(lab_id)
    notebook = nbformat.read(lab.source, 4)
    for cell in notebook.cells:
        extra = additions.get(cell.metadata.get("nbgrader", {}).get("grade_id"))
        if extra:
            cell.source += "\n" + extra
    path = Path(folder) / f"{lab.id}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    result = grading.grade_notebook(path, lab)
    return {c.grade_id: c.points or 0.0 for c in result.cells}


def _full(lab_id: str) -> dict[str, float]:
    """Puntos posibles de cada celda de prueba (las preguntas abiertas se corrigen a mano)."""
    notebook = nbformat.read(labs.get(lab_id).source, 4)
    return {
        meta["grade_id"]: float(meta["points"])
        for cell in notebook.cells
        if (meta := cell.metadata.get("nbgrader", {})).get("points") is not None
        and not meta["grade_id"].startswith("pregunta")
    }


CASES = {
    "lab1_honesto": ("01_atencion", {"ej5_atencion": NAN_GRADIENTS}),
    "lab1_falso": ("01_atencion", {"ej5_atencion": NAN_GRADIENTS + FORGED_PROBE}),
    "lab5_honesto": ("05_capas", {"ej4_encoder": DETACHED_ENCODER, "ej5_decoder": REUSING_DECODER}),
    "lab5_falso": (
        "05_capas",
        {"ej4_encoder": DETACHED_ENCODER + FORGED_PROBE, "ej5_decoder": REUSING_DECODER},
    ),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Las cuatro calificaciones, dos a la vez."""
    root = tmp_path_factory.mktemp("hechos")
    with ProcessPoolExecutor(2, initializer=_bench().one_thread) as pool:
        jobs = {
            name: pool.submit(_grade, lab_id, additions, str(root / name))
            for name, (lab_id, additions) in CASES.items()
        }
        return {name: job.result() for name, job in jobs.items()}


def _lost(points: dict[str, float], full: dict[str, float]) -> set[str]:
    return {grade_id for grade_id, most in full.items() if points.get(grade_id, 0.0) < most}


def test_nan_gradients_lose_points_even_with_forged_gradients(graded):
    full = _full("01_atencion")
    assert _lost(graded["lab1_honesto"], full) == {"ej5_atencion_oculta"}
    assert _lost(graded["lab1_falso"], full) >= {"ej5_atencion_oculta"}
    for grade_id, points in graded["lab1_falso"].items():
        assert points <= graded["lab1_honesto"][grade_id], grade_id


def test_detached_encoder_and_reused_prototype_lose_points_even_with_a_forged_probe(graded):
    """El ataque del informe: 85/85 en lugar de 75 (codificador) y 80 -> 85 (prototipo)."""
    full = _full("05_capas")
    honest = graded["lab5_honesto"]
    assert _lost(honest, full) == {
        "ej4_encoder_oculta",
        "ej5_decoder_prueba",
        "ej5_decoder_oculta",
    }
    assert sum(graded["lab5_falso"].values()) <= sum(honest.values())
    for grade_id, points in graded["lab5_falso"].items():
        assert points <= honest[grade_id], grade_id


def _bench():
    spec = importlib.util.spec_from_file_location(
        "mutants_trusted", REPO / "bench" / "mutants_trusted.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutants_trusted"] = module  # los procesos de trabajo lo encuentran por nombre
    spec.loader.exec_module(module)
    return module


def test_a_sample_of_mutants_loses_points_through_the_trusted_grader():
    """Un mutante de cada laboratorio 1–6, calificado como una entrega (el banco entero:
    ``python bench/mutants_trusted.py``)."""
    bench = _bench()
    chosen = [
        (lab_id, len(mistakes.catalogue(lab_id)) // 2)
        for lab_id in list(labs.LABS)[:6]
        if mistakes.catalogue(lab_id)
    ]
    with ProcessPoolExecutor(2, initializer=bench.one_thread) as pool:
        jobs = [pool.submit(bench.grade_mutant, lab_id, index) for lab_id, index in chosen]
        results = [job.result() for job in jobs]
    kept = [(name, got, most) for name, got, most in results if got >= most]
    assert len(results) == 6 and not kept, kept
