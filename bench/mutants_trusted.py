"""El catálogo de errores típicos calificado de verdad: cada mutante, por el calificador aislado.

``tests/test_mistakes.py`` ejecuta los mutantes en su propio proceso, donde una prueba
ve los objetos tal como son. Al calificar, en cambio, el código del estudiante vive en
un núcleo aislado y las pruebas solo ven lo que el calificador comprueba con valores:
una comprobación que se cree lo que dice el núcleo (o que mira una copia) puede pasar
sin que el error se note. Aquí cada mutante va en un cuaderno (la solución con el nombre
del ejercicio cambiado por el mutante, al final de su celda) y se califica con
``course.grading.grade_notebook``, como una entrega; el mutante debe perder puntos en
las celdas de su ejercicio (la prueba visible o la oculta).

El cuaderno lleva el código de los módulos de referencia que el núcleo no tiene y el del
catálogo, porque los mutantes heredan de la referencia: es un cuaderno del banco de
pruebas, nunca de un estudiante.

Uso: python bench/mutants_trusted.py [LAB ...] [--muestra N] [--procesos N] [--detalle]
Sale con 1 si algún mutante no pierde puntos en su ejercicio o no se pudo calificar.
"""

import importlib
import sys
import tempfile
import types
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat

from course import grading, labs, mistakes
from course.argparse_es import ArgumentParser

REFERENCE = Path(labs.__file__).resolve().parent / "reference"

_INJECTION = """
# --- mutante del catálogo (bench/mutants_trusted.py), no es código de un estudiante ---
import sys as _sys
import types as _types

import course.reference as _reference


def _module(_name, _source):
    _new = _types.ModuleType(_name)
    _sys.modules[_name] = _new
    exec(compile(_source, _name, "exec"), _new.__dict__)
    return _new


for _name, _source in {modules!r}:
    setattr(_reference, _name, _module("course.reference." + _name, _source))
for _name, _source in {catalogues!r}:
    _module(_name, _source)
{replaces} = _sys.modules[{defined_in!r}].{mutant}
"""


def hidden_references(lab: labs.Lab) -> list[str]:
    """Los módulos de referencia que el núcleo aislado no tiene: los de ``lab`` y siguientes."""
    order = list(labs.LABS)
    return [m for lab_id in order[order.index(lab.id) :] for m in labs.LABS[lab_id].reference]


def catalogue_modules(lab: labs.Lab) -> list[tuple[str, str]]:
    """(nombre, código) de los módulos del catálogo de ``lab``, primero los que importa
    (``model_forms`` antes de ``model``): un mutante puede vivir en cualquiera."""
    main = importlib.import_module(f"course.mistakes.{lab.reference[0]}")
    used = [
        module
        for module in vars(main).values()
        if isinstance(module, types.ModuleType) and module.__name__.startswith("course.mistakes.")
    ]
    return [(m.__name__, Path(m.__file__).read_text()) for m in (*used, main)]


def mutant_notebook(lab: labs.Lab, mistake: mistakes.Mistake) -> nbformat.NotebookNode:
    """La solución de ``lab`` con ``mistake.replaces`` cambiado por el mutante tras su celda."""
    notebook = nbformat.read(lab.source, 4)
    modules = [(name, (REFERENCE / f"{name}.py").read_text()) for name in hidden_references(lab)]
    injection = _INJECTION.format(
        modules=modules,
        catalogues=catalogue_modules(lab),
        defined_in=mistake.mutant.__module__,
        replaces=mistake.replaces,
        mutant=mistake.mutant.__name__,
    )
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == mistake.exercise:
            cell.source += "\n" + injection
            return notebook
    raise KeyError(f"{lab.id}: no hay celda «{mistake.exercise}»")


def exercise_points(result: grading.Result, exercise: str) -> tuple[float, float]:
    """Puntos obtenidos y posibles en las celdas de prueba de ``exercise``."""
    cells = [c for c in result.cells if c.grade_id in (f"{exercise}_prueba", f"{exercise}_oculta")]
    return sum(c.points or 0 for c in cells), sum(c.max_points for c in cells)


def grade_mutant(lab_id: str, index: int, timeout: int | None = None) -> tuple[str, float, float]:
    """Califica el mutante ``index`` del catálogo de ``lab_id``: (nombre, puntos, máximo)."""
    lab = labs.get(lab_id)
    mistake = mistakes.catalogue(lab_id)[index]
    with tempfile.TemporaryDirectory(prefix="mutante-") as tmp:
        path = Path(tmp) / f"{lab.id}.ipynb"
        nbformat.write(mutant_notebook(lab, mistake), path)
        result = grading.grade_notebook(path, lab, timeout=timeout)
    got, most = exercise_points(result, mistake.exercise)
    return f"{mistake.exercise}:{mistake.mutant.__name__}", got, most


def sample(count: int, size: int | None) -> list[int]:
    """``size`` índices repartidos por el catálogo (todos si ``size`` es ``None``)."""
    if size is None or size >= count:
        return list(range(count))
    return sorted({round(i * (count - 1) / max(1, size - 1)) for i in range(size)})


def one_thread() -> None:
    """Un hilo de PyTorch en cada proceso de trabajo, como en ``grade``: el proceso nace de
    ``fork`` y los hilos OpenMP del padre no se copian (la primera operación paralela esperaría)."""
    import torch

    torch.set_num_threads(1)


def grade_lab(pool, lab_id: str, indices: list[int], args) -> int:
    """Califica esos mutantes de ``lab_id`` y escribe el resumen; devuelve cuántos fallan.

    Fallar es no perder puntos en su ejercicio o no poder calificarse (un fallo del
    calificador, que se cuenta aparte y nunca como puntos perdidos).
    """
    jobs = [pool.submit(grade_mutant, lab_id, i, args.tiempo) for i in indices]
    graded, failed = [], []
    for index, job in zip(indices, jobs, strict=True):
        try:
            graded.append(job.result())
        except Exception as error:  # noqa: BLE001 (un fallo del calificador no es un resultado)
            failed.append((index, str(error).splitlines()[-1][:300]))
            continue
        if args.detalle:
            name, got, most = graded[-1]
            print(f"  {lab_id} {name}: {got:g}/{most:g}", flush=True)
    kept = [(name, got, most) for name, got, most in graded if got >= most]
    print(
        f"{lab_id}: {len(indices)} mutantes, {len(graded) - len(kept)} pierden puntos,"
        f" {len(kept)} no, {len(failed)} sin calificar"
    )
    for name, got, most in kept:
        print(f"  NO pierde puntos: {name} ({got:g}/{most:g})")
    for index, reason in failed:
        print(f"  sin calificar: mutante {index} ({reason})")
    sys.stdout.flush()
    return len(kept) + len(failed)


def main() -> int:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labs", nargs="*", help="laboratorios (por omisión, todos con catálogo)")
    parser.add_argument("--muestra", type=int, help="solo N mutantes de cada laboratorio")
    parser.add_argument("--procesos", type=int, default=2, help="calificaciones a la vez")
    parser.add_argument(
        "--detalle", action="store_true", help="una línea por mutante, según se califica"
    )
    parser.add_argument(
        "--tiempo", type=int, help="segundos por celda (por omisión, los del curso)"
    )
    args = parser.parse_args()
    chosen = args.labs or [lab_id for lab_id in labs.LABS if mistakes.catalogue(lab_id)]
    for lab_id in chosen:
        if lab_id not in labs.LABS or not mistakes.catalogue(lab_id):
            parser.error(f"«{lab_id}» no es un laboratorio con catálogo de errores")
    if (args.muestra is not None and args.muestra < 1) or args.procesos < 1:
        parser.error("--muestra y --procesos deben ser al menos 1")
    with ProcessPoolExecutor(args.procesos, initializer=one_thread) as pool:
        vacuous = sum(
            grade_lab(pool, lab_id, sample(len(mistakes.catalogue(lab_id)), args.muestra), args)
            for lab_id in chosen
        )
    return 1 if vacuous else 0


if __name__ == "__main__":
    sys.exit(main())
