"""Errores típicos de cada ejercicio: nombrarlos en el mensaje sin dar la respuesta.

Cada laboratorio tiene un catálogo ``course/mistakes/<módulo de referencia>.py`` con
``LAB`` y ``MISTAKES``: mutantes de la referencia, cada uno con UN error realista y el
mensaje en español que lo nombra. El código de un mutante vale tanto como la respuesta:
los catálogos nunca llegan al estudiante (ni al paquete ni al núcleo aislado).

Lo que sí llega son las huellas (``fingerprints/<laboratorio>.json``): la salida de
cada mutante en la comprobación de la prueba visible donde falla, sobre las entradas
visibles. Son salidas equivocadas, nunca valores de la referencia ni entradas ocultas.
``python -m course build LAB`` las regenera ejecutando aquí el cuaderno de solución con
cada mutante en lugar del nombre que sustituye.

Al fallar una comprobación, ``course.student.checks`` llama a :func:`diagnose`: si el valor del
estudiante coincide con una huella de esa comprobación, el mensaje nombra el error. Las
pruebas ocultas pueden además pedir :func:`hints`, que ejecuta los mutantes sobre sus
entradas (solo en el proceso de calificación, donde el catálogo se puede importar, y solo
cuando la comparación ya ha fallado).
"""

import contextlib
import functools
import importlib
import io
import json
import os
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import numpy as np
import torch
from torch import nn

from course import labs, notebooks

FINGERPRINTS = Path(__file__).resolve().parent / "fingerprints"
ATOL, RTOL = 1e-5, 1e-4  # las de course.student.checks, para comprobaciones sin tolerancia propia


@dataclass(frozen=True)
class Mistake:
    exercise: str  # grade_id de la celda de solución, p. ej. "ej1_puntuaciones"
    replaces: str  # nombre del cuaderno al que sustituye el mutante
    mutant: Callable  # función o clase con la misma firma que la del cuaderno
    message: str  # en español: nombra el error sin dar la respuesta

    @property
    def id(self) -> str:
        """``ejercicio.mutante``: único en su laboratorio."""
        return f"{self.exercise}.{self.mutant.__name__}"

    @property
    def held_out(self) -> bool:
        """Mitad de medida, fija por el hash del id: se mide sin sus propias huellas.

        La otra mitad es la de ajuste. Sirve para estimar cuántos errores que no están en
        el catálogo nombraría la prueba visible (``tests/test_mistakes.py``).
        """
        return zlib.crc32(self.id.encode()) % 2 == 1


def for_exercise(exercise: str, replaces: str, *rows: tuple[Callable, str]) -> list[Mistake]:
    """Los errores de un ejercicio, una fila ``(mutante, mensaje)`` por error.

    En los catálogos, ``MISTAKES`` es una lista de grupos ``*for_exercise(...)``: el
    ejercicio y el nombre sustituido se escriben una vez por grupo, no en cada fila.
    """
    return [Mistake(exercise, replaces, mutant, message) for mutant, message in rows]


# --- catálogos (solo donde existen: el repositorio y el proceso de calificación) --------


def catalogue(lab_id: str) -> list[Mistake]:
    """Los errores del catálogo de ``lab_id``; ``[]`` si no tiene catálogo."""
    name = f"{__name__}.{labs.LABS[lab_id].reference[0]}"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name:
            raise
        return []
    return list(module.MISTAKES)


def active(mistakes: Iterable[Mistake]) -> list[Mistake]:
    """Los de ``mistakes`` que no están apartados (:func:`excluding`).

    Todo lo que ejecuta mutantes para dar pistas pasa por aquí: un error apartado se mide
    como si fuera nuevo, así que ni su mutante ni sus huellas pueden nombrarlo.
    """
    return [m for m in mistakes if m.id not in _excluded]


def _catalogued(exercise: str) -> list[Mistake]:
    """Los errores de ``exercise``, del catálogo que los tenga (apartados incluidos)."""
    for lab_id in labs.LABS:
        found = [m for m in catalogue(lab_id) if m.exercise == exercise]
        if found:
            return found
    raise KeyError(f"ningún catálogo tiene errores del ejercicio «{exercise}»")


def hints(
    exercise: str,
    *inputs,
    pick: int | None = None,
    build: Callable[[type], nn.Module] | None = None,
    weights: nn.Module | None = None,
    seed: int | None = None,
    run: Callable[[Callable], object] | None = None,
) -> list[tuple[str, torch.Tensor]]:
    """Parejas ``(mensaje, salida del mutante)`` de cada error de ``exercise`` sobre ``inputs``.

    Para ``checks.close(..., hints=lambda: mistakes.hints(...))`` en las pruebas ocultas:
    dentro de una función, los mutantes solo se ejecutan si la comparación falla. Varias
    formas de una idea comparten mensaje y cada una da su pareja; ``checks.close`` nombra
    la idea si coincide cualquiera de ellas.

    Un mutante función se llama con ``inputs``; un mutante clase (un ``nn.Module``) solo
    con ``build`` (``cls -> instancia``) y ``weights`` (el módulo de referencia): se
    construye, recibe los pesos de ``weights`` (carga estricta: si sus parámetros no son
    los mismos no da pista, no se adivina), se pone en su modo (``train``/``eval``) y se
    llama con ``inputs`` sin gradientes; con ``seed``, la semilla se pone justo antes de
    llamarlo (como ``probe.seeded``, para comparar el dropout). ``run`` (``mutante ->
    salida``) sustituye todo eso cuando el mutante necesita algo nuevo en cada llamada (un
    modelo con los pesos de la referencia, otro método que ``forward``, un optimizador).
    ``pick`` elige un elemento si la salida es una tupla (``pick=1``: pesos). Los mutantes
    apartados (:func:`active`), los que fallan y los que no devuelven un tensor no dan
    pista, y ninguno cambia el estado aleatorio de la prueba que los pide.
    """
    if run is None:
        run = functools.partial(_output, inputs=inputs, build=build, weights=weights, seed=seed)
    found = []
    for mistake in active(_catalogued(exercise)):
        try:
            with torch.random.fork_rng(devices=[]):
                result = run(mistake.mutant)
            if pick is not None:
                result = result[pick]
        except Exception:  # noqa: BLE001 (un mutante puede romperse con otras entradas)
            continue
        if isinstance(result, torch.Tensor):
            found.append((mistake.message, result.detach()))
    return found


def _output(
    mutant: Callable,
    inputs: tuple,
    build: Callable[[type], nn.Module] | None,
    weights: nn.Module | None,
    seed: int | None,
) -> object:
    """La salida de ``mutant`` sobre ``inputs``; ``None`` si es una clase y no hay con qué
    construirla."""
    if not (isinstance(mutant, type) and issubclass(mutant, nn.Module)):
        return mutant(*inputs)
    if build is None or weights is None:
        return None
    module = build(mutant)
    module.load_state_dict(weights.state_dict(), strict=True)  # lanza si no son los mismos
    module.train(weights.training)
    if seed is not None:
        torch.manual_seed(seed)
    with torch.no_grad():
        return module(*inputs)


# --- diagnóstico con huellas ------------------------------------------------------------

_loaded: dict[str, list[dict]] | None = None
_recording: list[dict] | None = None
_excluded: frozenset[str] = frozenset()


def _fingerprints() -> dict[str, list[dict]]:
    """Huellas de todos los laboratorios por nombre de comprobación (se leen una vez)."""
    global _loaded
    if _loaded is None:
        _loaded = {}
        for path in sorted(FINGERPRINTS.glob("*.json")):
            for entry in json.loads(path.read_text(encoding="utf-8"))["fingerprints"]:
                _loaded.setdefault(entry["check"], []).append(entry)
    return _loaded


def diagnose(name: str, actual: object, atol: float = ATOL, rtol: float = RTOL) -> str | None:
    """El error típico cuya salida visible coincide con ``actual`` en la comprobación ``name``.

    Coincidir es tener la misma forma y dtype y valores iguales con la tolerancia de la
    comprobación (``nan`` con ``nan``). Si varios errores dan la misma salida, los nombra
    todos.
    """
    values = _values(actual)
    if values is None:
        return None
    if _recording is not None:
        _recording.append({"check": name, **values, "atol": atol, "rtol": rtol})
        return None
    messages = []
    for entry in _fingerprints().get(name, []):
        if entry.get("mistake") in _excluded:
            continue
        if _matches(values, entry) and entry["message"] not in messages:
            messages.append(entry["message"])
    return " ".join(messages) or None


def _values(actual: object) -> dict | None:
    """Forma, dtype y valores de un tensor de verdad; ``None`` para cualquier otra cosa."""
    if type(actual) is not torch.Tensor:
        return None
    if actual.is_meta or actual.is_complex():
        return None  # sin datos que comparar
    t = actual.detach().to("cpu")
    return {
        "shape": list(t.shape),
        "dtype": str(t.dtype).removeprefix("torch."),
        "values": t.double().flatten().tolist(),
    }


def _matches(values: dict, entry: dict) -> bool:
    if values["shape"] != entry["shape"] or values["dtype"] != entry["dtype"]:
        return False
    got, want = np.array(values["values"]), np.array(entry["values"], dtype=np.float64)
    return bool(np.allclose(got, want, atol=entry["atol"], rtol=entry["rtol"], equal_nan=True))


@contextlib.contextmanager
def _recorder() -> Iterator[list[dict]]:
    """Mientras dura, :func:`diagnose` apunta cada fallo en vez de diagnosticarlo."""
    global _recording
    _recording = []
    try:
        yield _recording
    finally:
        _recording = None


@contextlib.contextmanager
def excluding(ids: set[str]) -> Iterator[None]:
    """Mientras dura, ni :func:`diagnose` ni :func:`hints` usan los errores ``ids``.

    Para medir la mitad apartada del catálogo como si fueran errores nuevos.
    """
    global _excluded
    previous, _excluded = _excluded, frozenset(ids)
    try:
        yield
    finally:
        _excluded = previous


# --- el cuaderno de solución, ejecutado en este proceso --------------------------------


class _QuietHandle:
    def update(self, *objects, **kwargs) -> None:
        pass


def _quiet_display(*objects, display_id=None, **kwargs) -> _QuietHandle | None:
    """``display`` fuera de Jupyter: no muestra nada; con ``display_id``, un asa que tampoco.

    Las demostraciones que se redibujan (``handle = display(display_id=True)``, lab 6) corren.
    """
    return _QuietHandle() if display_id else None


class Solution:
    """El cuaderno de solución de un laboratorio ejecutado en este proceso.

    Corre todas las celdas de código salvo las de prueba calificadas, con las
    demostraciones en su forma corta de calificación (``NBGRADER_EXECUTION``), en la
    carpeta del cuaderno y sin escribir en la terminal. Después, :meth:`test` ejecuta una celda de prueba y
    :meth:`substituted` cambia un nombre del cuaderno por un mutante.
    """

    def __init__(self, lab_id: str):
        import nbformat

        self.lab = labs.LABS[lab_id]
        notebook = nbformat.read(self.lab.source, as_version=4)
        code = [cell for cell in notebook.cells if cell.cell_type == "code"]
        self.tests = {notebooks.grade_id(c): c.source for c in code if notebooks.is_test(c)}
        self.exercises = [notebooks.exercise(i) for i in self.tests if notebooks.is_visible_test(i)]
        self.namespace: dict = {"__name__": "__main__", "display": _quiet_display}
        with self._environment():
            for cell in code:
                if not notebooks.is_test(cell):
                    exec(
                        compile(cell.source, f"<{notebooks.grade_id(cell) or 'celda'}>", "exec"),
                        self.namespace,
                    )

    @contextlib.contextmanager
    def _environment(self) -> Iterator[None]:
        previous_dir, previous_env = Path.cwd(), os.environ.get("NBGRADER_EXECUTION")
        os.environ["NBGRADER_EXECUTION"] = "autograde"
        os.chdir(self.lab.source.parent)
        try:
            import matplotlib

            matplotlib.use("Agg")
            with (
                contextlib.redirect_stdout(io.StringIO()),
                mock.patch("IPython.display.display", _quiet_display),
            ):
                yield
        finally:
            os.chdir(previous_dir)
            if previous_env is None:
                os.environ.pop("NBGRADER_EXECUTION", None)
            else:
                os.environ["NBGRADER_EXECUTION"] = previous_env
            import matplotlib.pyplot as plt

            plt.close("all")

    def test(self, grade_id: str) -> None:
        """Ejecuta la celda de prueba ``grade_id`` (la oculta, sin sus marcas); lanza si falla."""
        source = re.sub(
            r"^\s*### (BEGIN|END) HIDDEN TESTS\s*$", "", self.tests[grade_id], flags=re.M
        )
        with self._environment():
            exec(compile(source, f"<{grade_id}>", "exec"), dict(self.namespace))

    @contextlib.contextmanager
    def substituted(self, name: str, value: object) -> Iterator[None]:
        """``name`` vale ``value`` en el cuaderno (también para sus funciones) mientras dura."""
        if name not in self.namespace:
            raise KeyError(f"el cuaderno de {self.lab.id} no define «{name}»")
        original = self.namespace[name]
        self.namespace[name] = value
        try:
            yield
        finally:
            self.namespace[name] = original


# --- generación de huellas --------------------------------------------------------------


def fingerprints(lab_id: str, solution: Solution | None = None) -> list[dict]:
    """Huellas de cada error del catálogo: su salida donde falla cada prueba visible.

    Primero la prueba de su ejercicio; después, las de los ejercicios siguientes del
    cuaderno, que usan la función con el error (la atención completa usa las
    puntuaciones): un estudiante que comete el mismo error escrito dentro de la función
    compuesta da la misma salida, y el mensaje nombra la idea donde aparezca. Un mutante
    que la prueba de su ejercicio no detecta, o que la hace fallar sin pasar por una
    comprobación con un tensor, no deja huella ahí (``tests/test_mistakes.py`` lo señala).
    ``solution``: el cuaderno de ``lab_id`` ya ejecutado en este proceso, para no repetirlo.
    """
    mistakes = catalogue(lab_id)
    if not mistakes:
        return []
    solution = solution or Solution(lab_id)
    entries = []
    for mistake in mistakes:
        later = solution.exercises[solution.exercises.index(mistake.exercise) + 1 :]
        for exercise in (mistake.exercise, *later):
            for failure in _failures(solution, mistake, exercise)[-1:]:
                entries.append(
                    {
                        "exercise": exercise,
                        "mistake": mistake.id,
                        "message": mistake.message,
                        **failure,
                    }
                )
    return entries


def _failures(solution: Solution, mistake: Mistake, exercise: str) -> list[dict]:
    """Los fallos de comprobación de la prueba visible de ``exercise`` con ``mistake`` puesto.

    El último es el que detuvo la celda.
    """
    with solution.substituted(mistake.replaces, mistake.mutant), _recorder() as failures:
        try:
            solution.test(notebooks.visible_test(exercise))
        except Exception:  # noqa: BLE001 (se apunta el fallo, sea cual sea)
            pass
    return list(failures)


def write_fingerprints(lab_id: str) -> Path | None:
    """Regenera ``fingerprints/<lab_id>.json``; sin catálogo no escribe nada."""
    entries = fingerprints(lab_id)
    if not entries:
        return None
    path = FINGERPRINTS / f"{lab_id}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(dump(lab_id, entries), encoding="utf-8")
    global _loaded
    _loaded = None
    return path


def dump(lab_id: str, entries: list[dict]) -> str:
    """Texto JSON de un archivo de huellas (``nan`` e ``inf`` como en Python)."""
    body = {"lab": lab_id, "fingerprints": entries}
    return json.dumps(body, ensure_ascii=False, indent=1, allow_nan=True) + "\n"
