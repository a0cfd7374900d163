"""Calificar una clase: reunir las entregas y calificarlas en paralelo, una a una aparte.

Lo usa ``python -m course grade`` (``course.commands.grade``, que solo pone los argumentos,
la tabla y el código de salida) y la puerta de ``course.grading.door``.

Entregas: ``submitted/<estudiante>/<lab>/<lab>.ipynb`` (la estructura de nbgrader) y
archivos zip descargados de un aula virtual con entradas ``<estudiante>/<lab>/<cuaderno>.ipynb``
o ``<estudiante>/<cuaderno>.ipynb`` (se leen sin escribir en ``submitted/``). Las entradas se
extraen con límites de tamaño y sin enlaces ni rutas que salgan de la carpeta temporal
(``course.grading.files``).

Quién entregó lo dice siempre una carpeta (la que crea nbgrader o el aula virtual para
cada estudiante), nunca el nombre de un archivo: ese nombre lo elige el estudiante, y
mallory podría subir ``ana_01_atencion.ipynb``. El nombre solo puede indicar el
laboratorio. Un cuaderno suelto en la raíz del zip no se califica (se avisa con la
estructura esperada), y dos entregas para el mismo estudiante y laboratorio (dos zips,
un zip y ``submitted/``, dos cuadernos sin ``<lab>.ipynb``) quedan como error que las
nombra: no se elige ninguna. Cada cuaderno se lee sin seguir enlaces y solo si es un
archivo normal de un solo nombre; lo demás es un error de esa entrega.

Diseño: cada proceso de trabajo importa nbgrader una vez y toma entregas de una cola
común, las caras primero (``course.grading.work_queue``); cada una se califica en su
propio curso temporal (``course.grading.grade_notebook``) y con su núcleo nuevo, que
arranca mientras se califica la anterior (``course.grading.pool``): nada se comparte
entre estudiantes. Deja ``autograded/<estudiante>/<lab>/<lab>.ipynb`` y un
``calificacion.json``; quien llama (el proceso principal, el único que escribe en
``gradebook.db``) une después los resultados (``course.grading.results.merge``). Una
entrega rota se anota como error y no detiene las demás.
"""

import contextlib
import os
import re
import sys
import tempfile
import time
import zlib
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from fnmatch import fnmatch
from pathlib import Path

from course import labs, names
from course.grading import files, results, students, work_queue
from course.labs import CourseError
from course.text import PATH, printable, shorten

LAYOUT = (
    "el zip debe tener una carpeta por estudiante: <estudiante>/<lab>/<cuaderno>.ipynb"
    " o <estudiante>/<cuaderno>.ipynb con el laboratorio en el nombre"
    " (p. ej. ana/01_atencion.ipynb); el nombre de un archivo nunca dice quién lo entregó"
)
TIMESTAMP_MAX_BYTES = 1024
PR_SET_PDEATHSIG = 1  # prctl: la señal que recibe un proceso cuando muere su padre


@dataclass(frozen=True)
class Settings:
    """Cómo se califica cada entrega (igual para todas)."""

    timeout: int | None = None  # segundos por celda; None: los de nbgrader_config.py
    sandboxed: bool = True  # núcleo dentro de bubblewrap (course.grading.sandbox)
    memory_gib: float = 4.0  # memoria de cada núcleo aislado
    notebook_timeout: int | None = None  # segundos por cuaderno; None: 900


@dataclass(frozen=True)
class Task:
    """Una entrega por calificar: de quién, de qué laboratorio y su cuaderno (o por qué no)."""

    student: str
    lab: str
    notebook: Path | None  # None: no hay cuaderno en la entrega
    problem: str = ""
    origin: str = ""  # de dónde viene, para nombrarla (submitted/… o aula.zip: …)
    note: str = ""  # aviso que no impide calificar (otros cuadernos que no se usan)
    name: str = ""  # nombre completo para mostrar (carpeta de Moodle), si se sabe


def gather(
    submitted: Path,
    zips: list[str] | None,
    unpacked: Path,
    lab_ids: list[str] | None = None,
    shard: str | None = None,
    refused: list[str] | None = None,
) -> list[Task]:
    """Las entregas de ``submitted/`` y de los ``zips`` (extraídos en ``unpacked``), una por
    estudiante y laboratorio, solo las del fragmento ``shard`` (:func:`select_shard`).

    Una carpeta cuyo nombre no dice quién entregó (``course.grading.students``) no es una
    tarea: se avisa por stderr y el motivo se añade a ``refused``, para el resumen.
    """
    refused = [] if refused is None else refused
    tasks = find_submissions(submitted, lab_ids, refused)
    for number, name in enumerate(zips or []):
        tasks += _unzip(Path(name), unpacked / str(number), lab_ids, refused)
    return select_shard(_one_per_submission(_one_spelling(tasks)), shard)


def find_submissions(
    submitted: Path, lab_ids: list[str] | None = None, refused: list[str] | None = None
) -> list[Task]:
    """Una tarea por ``submitted/<estudiante>/<lab>/``; una carpeta enlazada es un error."""
    tasks = []
    for folder in sorted(submitted.glob("*/*")):
        if folder.name not in labs.LABS or (lab_ids and folder.name not in lab_ids):
            continue
        relative = folder.relative_to(submitted)
        try:
            student = students.identify(folder.parent.name)
        except names.BadName as bad:
            _refuse(refused, f"submitted/{names.shown(folder.parent.name)}/", bad)
            continue
        origin = f"submitted/{relative.as_posix()}"
        linked = files.linked_folder(submitted, relative)
        if linked:
            problem = f"se rechaza la entrega: {linked}"
            tasks.append(Task(student.id, folder.name, None, problem, origin, name=student.name))
        elif folder.is_dir():
            notebooks = sorted(folder.glob("*.ipynb"))
            task = _task(student.id, folder.name, notebooks, f"{origin}/")
            tasks.append(replace(task, name=student.name))
    return tasks


def _refuse(refused: list[str] | None, where: str, bad: names.BadName) -> None:
    """Avisa de una carpeta que no se califica y la anota para el resumen."""
    line = printable(f"{where}: se rechaza la carpeta: {bad}")
    print(f"aviso: {line}", file=sys.stderr)
    if refused is not None and line not in refused:
        refused.append(line)


def _task(student: str, lab: str, notebooks: list[Path], origin: str = "") -> Task:
    """La entrega con su cuaderno: ``<lab>.ipynb`` (el nombre que fija nbgrader) o el único.

    Si hay ``<lab>.ipynb`` y otros, se califica ``<lab>.ipynb`` y se avisa de los otros; si
    hay varios y ninguno se llama así, no se elige: error que los nombra.
    """
    names = ", ".join(f"«{p.name}»" for p in notebooks)
    preferred = [p for p in notebooks if p.name == f"{lab}.ipynb"]
    source = f"{origin}{(preferred or notebooks)[0].name}" if notebooks else origin
    if preferred or len(notebooks) == 1:
        others = [f"«{p.name}»" for p in notebooks if p != (preferred or notebooks)[0]]
        note = f"se califica {lab}.ipynb; no se usan {', '.join(others)}" if others else ""
        return Task(student, lab, (preferred or notebooks)[0], "", source, note)
    if not notebooks:
        return Task(
            student, lab, None, f"no hay ningún cuaderno en la entrega ({lab}.ipynb)", source
        )
    problem = f"hay {len(notebooks)} cuadernos ({names}) y ninguno se llama {lab}.ipynb"
    return Task(student, lab, None, f"{problem}: deja solo uno y vuelve a calificar", source)


def _unzip(
    archive: Path, target: Path, lab_ids: list[str] | None, refused: list[str] | None = None
) -> list[Task]:
    """Lee un zip del aula virtual; cada entrada va a una carpeta temporal.

    Lo que se rechaza al extraer (``course.grading.files``) se avisa por stderr; si es un
    cuaderno, la entrega queda con ese error y no se califica. Dos entradas que irían al
    mismo sitio (``ana/01_atencion.ipynb`` y ``ana/01_atencion/01_atencion.ipynb``) también.
    """
    found: dict[tuple[str, str], list[Path]] = {}
    problems: dict[tuple[str, str], str] = {}
    names: dict[Path, str] = {}  # destino -> nombre de la entrada que lo ocupa
    accept = _Destinations(archive.name, lab_ids, names, refused)
    for entry in files.extract_zip(archive, target, accept):
        owner = entry.path.relative_to(target).parts[:2] if entry.path else None
        if entry.refused:
            reason = f"se rechaza «{entry.name}»: {entry.refused}"
            where = " · ".join(owner or [archive.name])
            print(printable(f"aviso: {where}: {reason}"), file=sys.stderr)
        if owner and entry.path.suffix == ".ipynb":
            if entry.refused:
                problems.setdefault(owner, reason)
            else:
                found.setdefault(owner, []).append(entry.path)
    for owner, clash in accept.clashes.items():
        problems[owner] = f"dos cuadernos van al mismo sitio: {clash}; deja solo uno"
    origin = {target / path: f"{archive.name}: {name}" for path, name in names.items()}
    tasks = {owner: _zip_task(owner, paths, origin) for owner, paths in found.items()}
    tasks |= {
        owner: Task(*owner, None, reason, f"{archive.name}: {'/'.join(owner)}")
        for owner, reason in problems.items()
    }
    return [replace(tasks[owner], name=accept.shown.get(owner[0], "")) for owner in sorted(tasks)]


def _zip_task(owner: tuple[str, str], paths: list[Path], origin: dict[Path, str]) -> Task:
    task = _task(*owner, paths)
    chosen = origin.get(task.notebook) if task.notebook else None
    return Task(*owner, task.notebook, task.problem, chosen or origin[paths[0]], task.note)


class _Destinations:
    """Dónde se extrae cada entrada del zip (``accept`` de ``files.extract_zip``).

    Guarda el nombre para mostrar de cada estudiante (``shown``) y anota en ``refused`` las
    carpetas cuyo nombre no dice quién entregó.
    """

    def __init__(
        self,
        archive: str,
        lab_ids: list[str] | None,
        names: dict[Path, str],
        refused: list[str] | None = None,
    ):
        self.archive, self.lab_ids, self.names, self.refused = archive, lab_ids, names, refused
        self.clashes: dict[tuple[str, str], str] = {}
        self.shown: dict[str, str] = {}

    def __call__(self, parts: tuple[str, ...]) -> Path | None:
        relative = self._destination(tuple(p for p in parts if p != "submitted"))
        if relative is None:
            return None
        if relative in self.names:  # no se sobrescribe: las dos quedan como error
            owner = relative.parts[:2]
            self.clashes[owner] = f"«{self.names[relative]}» y «{'/'.join(parts)}»"
            return None
        self.names[relative] = "/".join(parts)
        return relative

    def _destination(self, parts: tuple[str, ...]) -> Path | None:
        """Dónde se extrae una entrada: ``<estudiante>/<lab>/...``, o ``None`` si no se usa."""
        if not parts or "__MACOSX" in parts:
            return None
        if not parts[-1].endswith(".ipynb"):
            owner = _output_owner(parts)
            return _output_destination(parts, self._student(owner[0])) if owner else None
        owner = _owner(parts)
        if owner is None:
            entry = "/".join(parts)
            print(
                printable(f"aviso: se ignora «{entry}» en {self.archive}: {LAYOUT}"),
                file=sys.stderr,
            )
            return None
        if self.lab_ids and owner[1] not in self.lab_ids:
            return None
        student = self._student(owner[0], refuse=True)
        return Path(student, owner[1], parts[-1]) if student else None

    def _student(self, folder: str, refuse: bool = False) -> str | None:
        """El estudiante de la carpeta ``folder`` del zip (``None`` si el nombre no vale)."""
        try:
            student = students.identify(folder)
        except names.BadName as bad:
            if refuse:
                _refuse(self.refused, f"{self.archive}: {names.shown(folder)}/", bad)
            return None
        self.shown.setdefault(student.id, student.name)
        return student.id


def _owner(parts: tuple[str, ...]) -> tuple[str, str] | None:
    """Carpeta del estudiante y laboratorio de un cuaderno del zip; el estudiante, siempre
    de una carpeta.

    ``…/<estudiante>/<lab>/<cuaderno>.ipynb`` (nbgrader) o ``…/<estudiante>/<cuaderno>.ipynb``
    (la carpeta por estudiante del aula virtual) con un solo laboratorio en el nombre.
    Dentro de una carpeta de Moodle, el estudiante es esa carpeta: las subcarpetas las crea
    el estudiante al subir, y ``mallory_…_assignsubmission_file_/ana/`` no es de ana.
    """
    moodle = next((i for i, part in enumerate(parts[:-1]) if students.MOODLE.fullmatch(part)), None)
    if moodle is not None:
        parts = (parts[moodle], *parts[moodle + 1 :][-2:])
        parts = parts if len(parts) < 3 or parts[-2] in labs.LABS else (parts[0], parts[-1])
    if len(parts) >= 3 and parts[-2] in labs.LABS:
        student, lab = parts[-3], parts[-2]
    elif len(parts) >= 2:
        named = [lab_id for lab_id in labs.LABS if lab_id in parts[-1]]
        student, lab = parts[-2], named[0] if len(named) == 1 else None
    else:
        return None
    return (student, lab) if lab else None


def _output_owner(parts: tuple[str, ...]) -> tuple[str, str] | None:
    """``<estudiante>/<lab>/…`` de un archivo de la ejecución completa del lab 7."""
    return (parts[0], parts[1]) if len(parts) >= 4 and parts[1] in labs.LABS else None


def _output_destination(parts: tuple[str, ...], student: str | None) -> Path | None:
    """``<estudiante>/<lab>/<lab.outputs>/...`` (la ejecución completa del lab 7).

    Solo lo que las pruebas ocultas leen: ni el estado para reanudar ni otros archivos.
    """
    if student is None:
        return None
    outputs = labs.LABS[parts[1]].outputs
    if outputs is None or any(fnmatch(parts[-1], pattern) for pattern in labs.NOT_GRADED):
        return None
    inside = Path(*parts[2:])
    return Path(student, parts[1], inside) if inside.is_relative_to(outputs) else None


def _one_spelling(tasks: list[Task]) -> list[Task]:
    """``Ana`` y ``ana`` son el mismo estudiante (``course.names.key``): si llegan las dos
    formas, cada entrega de ambas queda como error que nombra las carpetas; no se elige."""
    clashes = names.clashes([t.student for t in tasks])
    if not clashes:
        return tasks
    folders = {
        k: " y ".join(f"«{t.origin}»" for t in tasks if names.key(t.student) == k) for k in clashes
    }
    chosen = []
    for task in tasks:
        k = names.key(task.student)
        if k in clashes:
            spellings = " y ".join(f"«{s}»" for s in clashes[k])
            problem = (
                f"{spellings} son el mismo estudiante (no se distinguen mayúsculas) y llegan"
                f" con dos nombres: {folders[k]}; deja uno solo y vuelve a calificar"
            )
            task = replace(task, notebook=None, problem=problem, note="")
        chosen.append(task)
    return chosen


def _one_per_submission(tasks: list[Task]) -> list[Task]:
    """Una tarea por estudiante y laboratorio; si hay dos (dos zips, un zip y ``submitted/``),
    un error que nombra las dos: no se elige ninguna en silencio."""
    grouped: dict[tuple[str, str], list[Task]] = {}
    for task in tasks:
        grouped.setdefault((task.student, task.lab), []).append(task)
    chosen = []
    for (student, lab), same in sorted(grouped.items()):
        if len(same) == 1:
            chosen.append(same[0])
            continue
        named = " y ".join(f"«{t.origin}»" for t in same)
        problem = f"hay {len(same)} entregas ({named}); no se elige ninguna: deja una y vuelve"
        problem += " a calificar"
        chosen.append(Task(student, lab, None, problem, same[0].origin, name=same[0].name))
    return chosen


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
    """Califica ``tasks`` con ``jobs`` procesos; devuelve un resultado por entrega, en el
    orden de ``tasks`` (el mismo acabe antes el proceso que acabe).

    Los procesos toman las entregas de una cola común, las caras primero
    (``course.grading.work_queue``). Si un proceso de trabajo muere (no el núcleo: eso lo
    resuelve ``course.grading``), las entregas que tenía tomadas se repiten, cada una en un
    proceso nuevo, para que solo la culpable quede con error; las que nadie había tomado
    siguen en otra ronda con todos los procesos.

    Lo que ya está calificado y no cambió desde entonces (una orden anterior que murió a
    mitad) no se califica otra vez (``course.grading.resume``).
    """
    from tqdm import tqdm

    bar = tqdm(total=len(tasks), desc="Calificando", unit="entrega", disable=not progress)
    settings = settings or Settings()
    found = _previous(tasks, autograded, settings)
    bar.update(len(found))
    order = [i for i in work_queue.queue_order(tasks) if i not in found]
    while order:
        done, held, untouched = _queue_round(
            [tasks[i] for i in order], autograded, jobs, settings, bar
        )
        found |= {order[i]: result for i, result in done.items()}
        if untouched and not done and not held:  # murió antes de tomar ninguna
            held, untouched = untouched, []
        for i in held:
            found[order[i]] = _alone(tasks[order[i]], autograded, settings, bar)
        order = [order[i] for i in untouched]
    bar.close()
    return [found[i] for i in range(len(tasks))]


def _previous(tasks: list[Task], autograded: Path, settings: Settings) -> dict:
    """Posición -> resultado de las entregas ya calificadas que siguen valiendo."""
    from course.grading import resume

    found = {}
    for index, task in enumerate(tasks):
        result = resume.previous(task, autograded, settings)
        if result is not None:
            found[index] = result
    if found:
        print(
            f"Reanudo: {len(found)} de {len(tasks)} entregas ya estaban calificadas y no han"
            " cambiado; no se califican otra vez."
        )
    return found


def _alone(task: Task, autograded: Path, settings: Settings, bar) -> results.Result:
    """Una entrega en un proceso propio; si ese proceso también muere, queda con error."""
    done, _, _ = _queue_round([task], autograded, 1, settings, bar)
    if done:
        return done[0]
    result = results.Result(
        task.student, task.lab, error="el proceso que la calificaba murió (¿memoria?)"
    )
    results.write(autograded, result)
    bar.update()
    return result


_queue: work_queue.WorkQueue | None = None  # la de este proceso de trabajo (_init_queue)


def _init_queue(queue: work_queue.WorkQueue) -> None:
    global _queue
    _queue = queue
    _die_with_parent()
    init_worker()


def _die_with_parent() -> None:
    """Si el proceso principal muere, este proceso de trabajo termina con él (SIGTERM) y,
    al terminar, destruye su núcleo, su cigoto, su cgroup y sus carpetas temporales."""
    import ctypes
    import signal

    signal.signal(signal.SIGTERM, _main_died)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


_orphaned = False  # murió el proceso principal (_main_died): no se escribe ningún resultado


def _main_died(*_) -> None:
    """SIGTERM del proceso de trabajo: recuerda que murió el principal y sale.

    nbgrader atrapa cualquier excepción, ``SystemExit`` incluida, y la da como «nbgrader
    falló»: :func:`grade_one` mira :data:`_orphaned` para no guardar ese error falso como
    calificación (la orden siguiente, que reanuda, la califica de nuevo).
    """
    global _orphaned
    _orphaned = True
    sys.exit("el proceso principal murió")


def _queue_round(tasks, autograded, jobs, settings, bar) -> tuple[dict, list[int], list[int]]:
    """Una ronda de la cola: resultados por posición, tomadas sin terminar y sin tomar.

    Las tomadas y las sin tomar solo quedan si un proceso murió (``BrokenProcessPool``).
    """
    workers = max(1, min(jobs, len(tasks)))
    queue = work_queue.WorkQueue(tasks, workers)
    done: dict[int, results.Result] = {}
    broken = False
    with ProcessPoolExecutor(workers, initializer=_init_queue, initargs=(queue,)) as pool:
        futures = [pool.submit(_drain, rank, autograded, settings) for rank in range(workers)]
        shown = set()
        while futures:
            finished, futures = wait(futures, timeout=0.5, return_when=FIRST_COMPLETED)
            shown = _show(queue, shown, bar)
            for future in finished:
                try:
                    done |= dict(future.result())
                except BrokenProcessPool:
                    broken = True
    if not broken:
        return done, [], []
    held, untouched = queue.unfinished()
    for index in shown - set(done):  # terminó antes de que su proceso muriera
        done[index] = results.read(autograded, tasks[index].student, tasks[index].lab)
    return done, held, untouched


def _show(queue: work_queue.WorkQueue, shown: set[int], bar) -> set[int]:
    """Avanza la barra con las entregas terminadas desde la última vez."""
    now = queue.done()
    for index in sorted(now - shown):
        task = queue.tasks[index]
        bar.set_postfix_str(printable(f"{task.student} · {task.lab}"), refresh=False)
        bar.update()
    return now


def _drain(rank: int, autograded: Path, settings: Settings) -> list[tuple[int, results.Result]]:
    """Lo que hace cada proceso: calificar entregas de la cola hasta que se vacía."""
    done = []
    several = len(_queue.tasks) > _queue.workers  # si no, cada proceso califica una sola
    turns = _grade_in_turn(_queue.taker(rank), autograded, settings, several)
    try:
        for index, result in turns:
            done.append((index, result))
            _queue.finished(index)
    except SystemExit:  # murió el proceso principal (_die_with_parent): nada más que hacer
        turns.close()  # su núcleo, su cigoto y sus carpetas, destruidos
        os._exit(1)
    return done


def grade_series(
    tasks: list[Task], autograded: Path, settings: Settings | None = None
) -> list[results.Result]:
    """Califica ``tasks`` en orden en este proceso (como un proceso de trabajo con su cola)."""
    pending = iter(enumerate(tasks))
    settings = settings or Settings()
    found = _grade_in_turn(lambda: next(pending, None), autograded, settings, len(tasks) > 1)
    return [result for _, result in found]


def _grade_in_turn(take, autograded: Path, settings: Settings, several: bool):
    """Califica lo que devuelve ``take()`` hasta ``None``; mientras califica una entrega,
    toma la siguiente y su núcleo arranca.

    Cada núcleo adelantado es de su entrega (:class:`_Ahead`) y se destruye al terminarla,
    pase lo que pase: nunca califica a otra. Con ``several`` (más de una entrega para este
    proceso), los núcleos nacen de un cigoto del proceso (:func:`_zygote`), que muere al
    terminar la serie; para una sola entrega, arrancarlo costaría lo que ahorra. Da
    ``(posición, resultado)`` de cada una.
    """
    with contextlib.ExitStack() as stack:
        zygote = _zygote(settings) if several else None
        if zygote is not None:
            stack.callback(zygote.close)
        taken = take()
        ahead = _Ahead(taken[1], settings, zygote) if taken else None
        try:
            while taken is not None:
                (index, task), current = taken, ahead
                taken = take()
                ahead = _Ahead(taken[1], settings, zygote) if taken else None
                try:
                    result = grade_one(task, autograded, settings, current)
                finally:
                    current.close()
                yield index, result
        finally:
            if ahead is not None:
                ahead.close()


def _zygote(settings: Settings):
    """El cigoto de esta serie (:mod:`course.grading.zygote`), si hay aislamiento y somos
    root; si no arranca, ``None`` y cada núcleo se lanza con su propio ``bwrap``."""
    from course.grading import sandbox, zygote

    uid = sandbox.kernel_uid()
    if not settings.sandboxed or sandbox.available() or uid is None:
        return None
    try:
        return zygote.Zygote(uid)
    except OSError:
        return None


class _Ahead:
    """Una entrega preparada antes de su turno: su copia y su núcleo aislado ya lanzado.

    Si la copia se rechaza o falla, el error se guarda para :func:`grade_one` (nunca
    detiene la serie); si la preparación del curso falla, ``stage`` queda vacío y
    ``grade_notebook`` lo intentará de nuevo y dará el error en su turno.
    """

    def __init__(self, task: Task, settings: Settings, zygote=None):
        from course.grading import sandbox, staging

        self._stack = contextlib.ExitStack()
        self.path: Path | None = None
        self.stage = None
        self.refused: Exception | None = None
        if task.notebook is None:
            return
        try:
            temporary = tempfile.TemporaryDirectory(prefix="course-entrega-")
            self.path = _staged(task, Path(self._stack.enter_context(temporary)))
        except Exception as refusal:  # noqa: BLE001 (el error de esa entrega, en su turno)
            self.refused = refusal
            return
        if not settings.sandboxed or sandbox.available():
            return
        limits = sandbox.Limits(memory=int(settings.memory_gib * sandbox.GIB))
        try:
            stage = staging.staged(self.path, labs.get(task.lab), True, limits, zygote)
            self.stage = self._stack.enter_context(stage)
        except Exception:  # noqa: BLE001 (se repite en su turno, y ahí se informa)
            self.stage = None

    def close(self) -> None:
        """Destruye el núcleo (usado o no) y borra la copia."""
        self._stack.close()


def init_worker() -> None:
    """Se importa nbgrader una sola vez por proceso (unos 3 s que no se repiten).

    Un hilo de PyTorch por proceso: el proceso de trabajo nace de ``fork`` y, si el padre
    ya usó su equipo de hilos OpenMP, la primera operación paralela del hijo (una prueba
    oculta que llama a ``tril``) esperaría para siempre a hilos que no se copiaron.
    """
    import torch

    import course.grading  # noqa: F401

    torch.set_num_threads(1)


def grade_one(
    task: Task,
    autograded: Path,
    settings: Settings | None = None,
    ahead: "_Ahead | None" = None,
) -> results.Result:
    """Califica una entrega; cualquier fallo queda en ``Result.error``, nunca se propaga.

    Con ``ahead`` (preparado para esta misma entrega) se usa su copia y su núcleo; si no,
    se prepara aquí.
    """
    from course import grading
    from course.grading import resume, sandbox

    start = time.perf_counter()
    result = results.Result(task.student, task.lab, graded_at=time.strftime("%Y-%m-%d %H:%M:%S"))
    result.name = task.name
    keep = autograded / task.student / task.lab / f"{task.lab}.ipynb"
    result.warnings = [task.note] if task.note else []
    try:
        if task.notebook is None:
            raise CourseError(task.problem)
        result.timestamp = _timestamp(task.notebook.parent, result.warnings)
        settings = settings or Settings()
        result.fingerprint = resume.fingerprint(task, settings)
        limits = sandbox.Limits(memory=int(settings.memory_gib * sandbox.GIB))
        with contextlib.ExitStack() as stack:
            if ahead is None:
                ahead = _Ahead(task, settings)
                stack.callback(ahead.close)
            if ahead.refused is not None:
                raise ahead.refused
            graded = grading.grade_notebook(
                ahead.path, labs.get(task.lab), settings.timeout, keep=keep,
                sandboxed=settings.sandboxed, limits=limits,
                notebook_timeout=settings.notebook_timeout, stage=ahead.stage,
            )  # fmt: skip
        result.cells = graded.cells
        result.findings = list(graded.findings)
    except Exception as error:  # noqa: BLE001 (una entrega rota no detiene las demás)
        result.error = _message(error, task, ahead.path if ahead is not None else None)
        keep.unlink(missing_ok=True)  # que feedback no use una calificación antigua
    result.seconds = round(time.perf_counter() - start, 2)
    if _orphaned:  # lo interrumpido no es una calificación
        sys.exit("el proceso principal murió")
    results.write(autograded, result)
    return result


def _message(error: Exception, task: Task, copy: Path | None) -> str:
    """El error de una entrega sin rutas temporales: su copia se nombra como la entrega
    (``ana/01_atencion/01_atencion.ipynb``) y de las demás rutas de la carpeta temporal
    queda el último nombre."""
    text = str(error) if isinstance(error, CourseError) else f"{type(error).__name__}: {error}"
    if copy is not None:
        text = text.replace(str(copy), f"{task.student}/{task.lab}/{copy.name}")
    temporary = tempfile.gettempdir()
    return PATH.sub(
        lambda path: (path[1] or "…") if path[0].startswith(temporary) else path[0], text
    )


def _staged(task: Task, staging: Path) -> Path:
    """Una copia propia de la entrega (cuaderno y ejecución del lab 7) que se califica.

    El cuaderno se lee sin seguir enlaces y solo si es un archivo normal de un solo nombre
    (``files.open_regular``): un enlace a ``source/…ipynb`` daría la solución, y cambiarlo
    después de esta copia ya no sirve. Si no, :class:`CourseError` (error de esa entrega).
    De la ejecución del lab 7 solo pasan archivos normales; lo omitido se avisa.
    """
    lab = labs.get(task.lab)
    try:
        data = files.read_regular(task.notebook, files.NOTEBOOK_MAX_BYTES)
    except files.Refused as refusal:
        raise CourseError(f"se rechaza «{task.notebook.name}»: {refusal}") from None
    notebook = staging / f"{task.lab}.ipynb"
    notebook.write_bytes(data)
    folder = task.notebook.parent
    if lab.outputs is None or not (folder / lab.outputs).exists():
        return notebook
    linked = files.linked_folder(folder, Path(lab.outputs))
    notes = (
        [f"se omite «{lab.outputs}»: {linked}"]
        if linked
        else files.copy_regular_files(
            folder / lab.outputs, staging / lab.outputs, ignore=labs.NOT_GRADED
        )
    )
    for note in notes:
        print(printable(f"aviso: {task.student} · {task.lab}: {note}"), file=sys.stderr)
    return notebook


def _timestamp(folder: Path, warnings: list[str]) -> str:
    """La hora de ``timestamp.txt`` (lo escribe ``nbgrader submit`` del estudiante).

    Se interpreta como nbgrader (``parse_utc``) y se guarda normalizada; si no es una fecha,
    o no es un archivo normal, la entrega se califica sin hora y con un aviso: un texto
    libre ahí no puede impedir que se unan las notas de toda la clase.
    """
    from nbgrader.utils import parse_utc

    stamp = folder / "timestamp.txt"
    if not stamp.exists() and not stamp.is_symlink():
        return ""
    try:
        raw = files.read_regular(stamp, TIMESTAMP_MAX_BYTES)
    except files.Refused as refusal:
        warnings.append(f"se ignora timestamp.txt: {refusal}; se califica sin hora de entrega")
        return ""
    text = raw.decode("utf-8", "replace").strip()
    try:
        return str(parse_utc(text)) if text else ""
    except (ValueError, OverflowError, TypeError, ArithmeticError):
        warnings.append(
            f"timestamp.txt no es una fecha («{shorten(text, 60)}»); se califica sin hora"
            " de entrega"
        )
        return ""
