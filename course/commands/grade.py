"""``python -m course grade``: califica todas las entregas en paralelo.

Entregas: ``submitted/<estudiante>/<lab>/<lab>.ipynb`` (la estructura de nbgrader) y,
con ``--zip``, archivos descargados de un aula virtual con entradas
``<estudiante>/<lab>/<cuaderno>.ipynb`` o ``<estudiante>_<lab>.ipynb`` (se leen sin
escribir en ``submitted/``). Las entradas se extraen con límites de tamaño y sin enlaces
ni rutas que salgan de la carpeta temporal (``course.grading.files``).

Diseño: cada proceso de trabajo importa nbgrader una vez y califica cada entrega en su
propio curso temporal (``course.grading.grade_notebook``), con su núcleo nuevo: nada
se comparte entre estudiantes. Deja ``autograded/<estudiante>/<lab>/<lab>.ipynb`` y un
``calificacion.json``; al final el proceso principal, el único que escribe en
``gradebook.db``, une los resultados (``course.grading.results.merge``). Una entrega rota se
anota como error y no detiene las demás.

Si se interrumpe (Ctrl+C, el proceso muere, se apaga la máquina), basta con volver a
ejecutar la orden: califica otra vez todas las entregas y termina con el mismo libro de
notas que una ejecución sin cortes. No se reutilizan los ``calificacion.json`` que dejó la
ejecución cortada: habría que demostrar que ni la entrega, ni el laboratorio, ni la
configuración cambiaron desde entonces, y un fallo en esa comprobación dejaría una nota
vieja sin aviso; repetir cuesta solo tiempo de máquina. Lo que sí garantiza el diseño es
que un corte no deja nada a medias: cada JSON y cada cuaderno calificado se escriben
aparte y se renombran, y ``gradebook.db`` se toca solo al final, en una transacción (con
una copia ``.bak`` antes), así que conserva las notas anteriores hasta que se confirma la
unión entera. Quien quiera aprovechar lo que sí terminó puede unirlo con ``--merge-only``.
"""

import os
import re
import sys
import tempfile
import time
import zlib
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from fnmatch import fnmatch
from functools import partial
from pathlib import Path

from course import labs
from course.grading import files, results
from course.labs import CourseError
from course.text import shorten

STUDENT_ID = re.compile(r"^[\w.@+-]+$")
FLAT_ENTRY = re.compile(r"^(?P<student>[\w.@+-]+?)_(?P<lab>\d\d_[a-z0-9]+)\.ipynb$")


@dataclass(frozen=True)
class Settings:
    """Cómo se califica cada entrega (igual para todas)."""

    timeout: int | None = None  # segundos por celda; None: los de nbgrader_config.py
    sandboxed: bool = True  # núcleo dentro de bubblewrap (course.grading.sandbox)
    memory_gib: float = 4.0  # memoria de cada núcleo aislado
    notebook_timeout: int | None = None  # segundos por cuaderno; None: 900


@dataclass(frozen=True)
class Task:
    student: str
    lab: str
    notebook: Path | None  # None: no hay cuaderno en la entrega
    problem: str = ""


def run(
    root: Path = labs.REPO,
    zips: list[str] | None = None,
    jobs: int | None = None,
    shard: str | None = None,
    timeout: int | None = None,
    merge_only: bool = False,
    lab_ids: list[str] | None = None,
    progress: bool = True,
    sandboxed: bool = True,
    memory_gib: float = 4.0,
) -> int:
    autograded = root / "autograded"
    for lab_id in lab_ids or []:
        labs.get(lab_id)  # un laboratorio mal escrito: error con la lista de los que hay
    settings = Settings(timeout, sandboxed, memory_gib)
    if not merge_only:
        _require_sandbox(sandboxed)
        with tempfile.TemporaryDirectory(prefix="course-zip-") as unpacked:
            tasks = find_submissions(root / "submitted", lab_ids)
            for number, name in enumerate(zips or []):
                tasks += _unzip(Path(name), Path(unpacked) / str(number), lab_ids)
            tasks = select_shard(_deduplicate(tasks), shard)
            if not tasks:
                print("No hay entregas que calificar en submitted/ (ni en los zip indicados).")
                return 0
            grade_all(tasks, autograded, jobs or os.cpu_count() or 1, settings, progress)
    everything = results.read_all(autograded)
    merged = results.merge(everything, root / "gradebook.db")
    print(table(results.with_manual_scores(everything, root / "gradebook.db")))
    errors = [r for r in everything if r.error]
    print(f"\n{merged} entregas en gradebook.db; {len(errors)} sin calificar.")
    for result in errors:
        print(f"  ✘ {result.student} · {result.lab}: {shorten(result.error.splitlines()[0])}")
    return 1 if errors else 0


def _require_sandbox(sandboxed: bool) -> None:
    from course.grading import sandbox

    reason = sandbox.available()
    if not sandboxed:
        print(f"aviso: --no-sandbox: {sandbox.RISK}.", file=sys.stderr)
    elif reason:
        raise CourseError(
            f"No califico sin aislar las entregas: {reason}. Instala bubblewrap"
            f" («apt-get install bubblewrap») y comprueba el entorno con «python -m course"
            f" doctor». Si confías en todas las entregas, --no-sandbox califica sin"
            f" aislamiento ({sandbox.RISK})."
        )


def find_submissions(submitted: Path, lab_ids: list[str] | None = None) -> list[Task]:
    tasks = []
    for folder in sorted(submitted.glob("*/*")):
        if not folder.is_dir() or folder.name not in labs.LABS:
            continue
        if lab_ids and folder.name not in lab_ids:
            continue
        tasks.append(_task(folder.parent.name, folder.name, sorted(folder.glob("*.ipynb"))))
    return tasks


def _task(student: str, lab: str, notebooks: list[Path]) -> Task:
    preferred = [p for p in notebooks if p.name == f"{lab}.ipynb"]
    if preferred or len(notebooks) == 1:
        return Task(student, lab, (preferred or notebooks)[0])
    problem = "no hay ningún cuaderno" if not notebooks else "hay varios cuadernos y ninguno"
    return Task(student, lab, None, f"{problem} llamado {lab}.ipynb en la entrega")


def _unzip(archive: Path, target: Path, lab_ids: list[str] | None) -> list[Task]:
    """Lee un zip del aula virtual; cada entrada va a una carpeta temporal.

    Lo que se rechaza al extraer (``course.grading.files``) se avisa por stderr; si es un
    cuaderno, la entrega queda con ese error y no se califica.
    """
    found: dict[tuple[str, str], list[Path]] = {}
    refused: dict[tuple[str, str], str] = {}
    accept = partial(_destination, archive.name, lab_ids)
    for entry in files.extract_zip(archive, target, accept):
        owner = entry.path.relative_to(target).parts[:2] if entry.path else None
        if entry.refused:
            reason = f"se rechaza «{entry.name}»: {entry.refused}"
            print(f"aviso: {' · '.join(owner or [archive.name])}: {reason}", file=sys.stderr)
        if owner and entry.path.suffix == ".ipynb":
            if entry.refused:
                refused.setdefault(owner, reason)
            else:
                found.setdefault(owner, []).append(entry.path)
    tasks = {owner: _task(*owner, paths) for owner, paths in found.items()}
    tasks |= {owner: Task(*owner, None, reason) for owner, reason in refused.items()}
    return [tasks[owner] for owner in sorted(tasks)]


def _destination(name: str, lab_ids: list[str] | None, parts: tuple[str, ...]) -> Path | None:
    """Dónde se extrae una entrada: ``<estudiante>/<lab>/...``, o ``None`` si no se usa."""
    parts = tuple(p for p in parts if p != "submitted")
    if not parts or "__MACOSX" in parts:
        return None
    if not parts[-1].endswith(".ipynb"):
        return _output_destination(parts)
    flat = FLAT_ENTRY.match(parts[-1])
    if len(parts) >= 3 and parts[-2] in labs.LABS:
        student, lab = parts[-3], parts[-2]
    elif flat and flat["lab"] in labs.LABS:
        student, lab = flat["student"], flat["lab"]
    else:
        print(f"aviso: se ignora «{'/'.join(parts)}» en {name}", file=sys.stderr)
        return None
    if not STUDENT_ID.match(student) or (lab_ids and lab not in lab_ids):
        return None
    return Path(student, lab, parts[-1])


def _output_destination(parts: tuple[str, ...]) -> Path | None:
    """``<estudiante>/<lab>/<lab.outputs>/...`` (la ejecución completa del lab 7).

    Solo lo que las pruebas ocultas leen: ni el estado para reanudar ni otros archivos.
    """
    if len(parts) < 4 or parts[1] not in labs.LABS or not STUDENT_ID.match(parts[0]):
        return None
    outputs = labs.LABS[parts[1]].outputs
    if outputs is None or any(fnmatch(parts[-1], pattern) for pattern in labs.NOT_GRADED):
        return None
    inside = Path(*parts[2:])
    return Path(parts[0], parts[1], inside) if inside.is_relative_to(outputs) else None


def _deduplicate(tasks: list[Task]) -> list[Task]:
    """Si una entrega aparece dos veces (submitted/ y un zip), vale la última leída."""
    return sorted({(t.student, t.lab): t for t in tasks}.values(), key=lambda t: (t.student, t.lab))


def select_shard(tasks: list[Task], shard: str | None) -> list[Task]:
    """``i/n``: las entregas cuyo ``crc32("estudiante/lab") % n == i - 1``.

    Depende solo del nombre de cada entrega, no de qué otras hay en la máquina: los
    fragmentos 1/n..n/n no se solapan y juntos lo cubren todo.
    """
    if not shard:
        return tasks
    match = re.fullmatch(r"(\d+)/(\d+)", shard)
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise CourseError(
            f"--shard debe tener la forma i/n con 1 ≤ i ≤ n (p. ej. 2/4), no «{shard}»."
        )
    index, count = int(match[1]) - 1, int(match[2])
    return [t for t in tasks if zlib.crc32(f"{t.student}/{t.lab}".encode()) % count == index]


def grade_all(
    tasks: list[Task],
    autograded: Path,
    jobs: int,
    settings: Settings | None = None,
    progress: bool = True,
) -> list[results.Result]:
    """Califica ``tasks`` con ``jobs`` procesos; devuelve un resultado por entrega.

    Si un proceso de trabajo muere (no el núcleo: eso lo resuelve ``course.grading``),
    las entregas que tenía pendientes el grupo se repiten, cada una en un proceso nuevo,
    para que solo la culpable quede con error.
    """
    from tqdm import tqdm

    bar = tqdm(total=len(tasks), desc="Calificando", unit="entrega", disable=not progress)
    settings = settings or Settings()
    done, broken = _pool_round(tasks, autograded, jobs, settings, bar)
    for task in broken:
        again, still_broken = _pool_round([task], autograded, 1, settings, bar)
        done += again
        for lost in still_broken:
            result = results.Result(
                lost.student, lost.lab, error="el proceso que la calificaba murió (¿memoria?)"
            )
            results.write(autograded, result)
            done.append(result)
            bar.update()
    bar.close()
    return done


def _pool_round(tasks, autograded, jobs, settings, bar) -> tuple[list, list[Task]]:
    done, broken = [], []
    with ProcessPoolExecutor(max(1, min(jobs, len(tasks))), initializer=_init_worker) as pool:
        futures = {pool.submit(grade_one, t, autograded, settings): t for t in tasks}
        for future in as_completed(futures):
            task = futures[future]
            try:
                result = future.result()
            except BrokenProcessPool:
                broken.append(task)
                continue
            done.append(result)
            bar.set_postfix_str(f"{task.student} · {task.lab}", refresh=False)
            bar.update()
    return done, broken


def _init_worker() -> None:
    """Se importa nbgrader una sola vez por proceso (unos 3 s que no se repiten).

    Un hilo de PyTorch por proceso: el proceso de trabajo nace de ``fork`` y, si el padre
    ya usó su equipo de hilos OpenMP, la primera operación paralela del hijo (una prueba
    oculta que llama a ``tril``) esperaría para siempre a hilos que no se copiaron.
    """
    import torch

    import course.grading  # noqa: F401

    torch.set_num_threads(1)


def grade_one(task: Task, autograded: Path, settings: Settings | None = None) -> results.Result:
    """Califica una entrega; cualquier fallo queda en ``Result.error``, nunca se propaga."""
    from course import grading
    from course.grading import sandbox

    start = time.perf_counter()
    result = results.Result(task.student, task.lab, graded_at=time.strftime("%Y-%m-%d %H:%M:%S"))
    keep = autograded / task.student / task.lab / f"{task.lab}.ipynb"
    try:
        if task.notebook is None:
            raise CourseError(task.problem)
        stamp = task.notebook.parent / "timestamp.txt"  # lo deja nbgrader collect
        result.timestamp = stamp.read_text().strip() if stamp.is_file() else ""
        settings = settings or Settings()
        limits = sandbox.Limits(memory=int(settings.memory_gib * sandbox.GIB))
        graded = grading.grade_notebook(
            task.notebook, labs.get(task.lab), settings.timeout, keep=keep,
            sandboxed=settings.sandboxed, limits=limits,
            notebook_timeout=settings.notebook_timeout,
        )  # fmt: skip
        result.cells = [
            {"grade_id": c.grade_id, "points": c.points, "max_points": c.max_points,
             "message": c.message}
            for c in graded.cells
        ]  # fmt: skip
        result.findings = list(graded.findings)
    except Exception as error:  # noqa: BLE001 (una entrega rota no detiene las demás)
        result.error = (
            str(error) if isinstance(error, CourseError) else f"{type(error).__name__}: {error}"
        )
        keep.unlink(missing_ok=True)  # que feedback no use una calificación antigua
    result.seconds = round(time.perf_counter() - start, 2)
    results.write(autograded, result)
    return result


def _points(value: float) -> str:
    return f"{value:g}"


def table(found: list[results.Result]) -> str:
    """Tabla estudiante × laboratorio: puntos / máximo del laboratorio (``error`` si no se pudo).

    Con ``found`` de :func:`results.with_manual_scores`, la misma nota que ``gradebook.db``.
    """
    lab_ids = [lab for lab in labs.LABS if any(r.lab == lab for r in found)]
    students = sorted({r.student for r in found})
    cell = {(r.student, r.lab): r for r in found}
    width = max([len("estudiante"), *map(len, students)])
    lines = [f"{'estudiante':<{width}}  " + "  ".join(f"{lab:>16}" for lab in lab_ids)]
    for student in students:
        row = []
        for lab in lab_ids:
            result = cell.get((student, lab))
            if result is None:
                text = "—"
            elif result.error:
                text = "error"
            else:
                pending = "*" if result.auto_max < result.max_points else ""
                text = f"{_points(result.auto_points)}/{_points(result.max_points)}{pending}"
            row.append(f"{text:>16}")
        lines.append(f"{student:<{width}}  " + "  ".join(row))
    lines.append("(* con preguntas abiertas pendientes de corrección manual en Formgrader)")
    return "\n".join(lines)
