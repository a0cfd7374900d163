"""``python -m course grade``: califica en paralelo todas las entregas de la clase.

Aquí solo están los argumentos, lo que se imprime y el código de salida; reunir las
entregas (``submitted/`` y los zip del aula virtual) y calificarlas, cada una aparte, es de
``course.grading.batch``.

Si se interrumpe (Ctrl+C, el proceso muere, se apaga la máquina), basta con volver a
ejecutar la orden: reanuda. Las entregas que ya tienen su ``calificacion.json`` sin error y
con la huella de lo que decidió su nota (la entrega, el laboratorio, la configuración, el
código del calificador y las opciones: ``course.grading.resume``) no se califican otra vez;
si algo de eso cambió, sí. Los procesos de trabajo mueren con el proceso principal y al
morir destruyen sus núcleos, cgroups y carpetas temporales. Un corte no deja nada a
medias: cada JSON y cada cuaderno calificado se escriben aparte y se renombran, y
``gradebook.db`` se toca solo al final, en una transacción (con una copia ``.bak`` antes),
así que conserva las notas anteriores hasta que se confirma la unión entera. Quien quiera
aprovechar lo que sí terminó sin calificar nada más puede unirlo con ``--merge-only``.

Para un planificador (un array de Slurm, un Job indexado de Kubernetes), cada tarea
califica su fragmento con ``--shard i/n`` y no toca ``gradebook.db``: su registro lista solo
sus entregas. Una última tarea con ``--merge-only`` (y los mismos ``--zip``) une todo y
comprueba que no falta ninguna entrega. El código de salida (:data:`EXIT`) distingue una
clase calificada con entregas rotas (1: mirar esas filas) de un calificador que falló
(3: volver a lanzar).
"""

import argparse
import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from course import labs
from course.labs import CourseError
from course.text import printable, shorten

if TYPE_CHECKING:  # el calificador (nbgrader, PyTorch) se importa al ejecutar la orden
    from course.grading.results import Result

HELP = "califica en paralelo todas las entregas de submitted/"
EXIT = {
    0: "todas las entregas calificadas",
    1: "alguna entrega no se pudo calificar (su fila dice «error»; la clase está bien)",
    2: "orden mal escrita o entorno sin preparar (p. ej. sin bubblewrap)",
    3: "falló el calificador o (con --merge-only) faltan entregas: volver a lanzar",
}
EPILOG = "códigos de salida:\n" + "\n".join(f"  {code}  {text}" for code, text in EXIT.items())
UNPACKED = "course-zip-"  # course-zip-<pid>-…: los zip extraídos de una orden


def add_arguments(parser) -> None:
    parser.add_argument("--lab", action="append", help="solo este laboratorio (repetible)")
    parser.add_argument(
        "--zip", action="append", metavar="ARCHIVO",
        help="zip del aula virtual, una carpeta por estudiante: <estudiante>/<lab>/<lab>.ipynb"
        " o la de Moodle («Descargar todas las entregas»)",
    )  # fmt: skip
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="procesos en paralelo (por omisión, uno por CPU que este proceso puede usar:"
        " afinidad, cuota del cgroup, SLURM_CPUS_PER_TASK)",
    )
    parser.add_argument(
        "--shard", metavar="i/n",
        help="califica solo el fragmento i de n y no toca gradebook.db: al final, una"
        " orden con --merge-only une todos los fragmentos",
    )  # fmt: skip
    parser.add_argument(
        "--timeout", type=int, metavar="SEGUNDOS", help="segundos por celda (por omisión, 60)"
    )
    parser.add_argument(
        "--memory", type=float, default=4.0, metavar="GIB",
        help="memoria de cada núcleo aislado en GiB (por omisión, 4)",
    )  # fmt: skip
    parser.add_argument(
        "--no-sandbox", action="store_true",
        help="califica sin bubblewrap: PELIGROSO, el código de los estudiantes podría leer las"
        " soluciones y las pruebas ocultas, cambiar notas de otros, usar la red y dejar"
        " procesos vivos; solo con entregas de confianza",
    )  # fmt: skip
    parser.add_argument(
        "--merge-only", action="store_true",
        help="no califica: une los resultados de autograded/ en gradebook.db y comprueba que"
        " no falta ninguna entrega de submitted/ (ni de los --zip)",
    )  # fmt: skip
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def main(args) -> int:
    """:func:`run`; un fallo inesperado del calificador sale con 3, no con el 1 de Python
    (que un planificador confundiría con «alguna entrega rota»)."""
    try:
        return run(
            zips=args.zip, jobs=args.jobs, shard=args.shard, timeout=args.timeout,
            merge_only=args.merge_only, lab_ids=args.lab, sandboxed=not args.no_sandbox,
            memory_gib=args.memory,
        )  # fmt: skip
    except CourseError:
        raise
    except Exception:  # noqa: BLE001 (cualquier otro fallo: el calificador, no una entrega)
        traceback.print_exc()
        print("error: falló el calificador; vuelve a lanzar la orden (reanuda).", file=sys.stderr)
        return 3


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
    """Califica (salvo ``merge_only``), une en ``gradebook.db`` (salvo ``shard``) e imprime
    la tabla de notas.

    Devuelve el código de :data:`EXIT`: 1 si alguna entrega quedó sin calificar, 3 si con
    ``merge_only`` falta alguna por calificar, 0 si no.
    """
    from course.grading import batch, scratch

    for lab_id in lab_ids or []:
        labs.get(lab_id)  # un laboratorio mal escrito: error con la lista de los que hay
    if shard and merge_only:
        raise CourseError("--shard califica sin unir y --merge-only une sin calificar: elige una.")
    refused: list[str] = []  # carpetas cuyo nombre no dice quién entregó
    settings = batch.Settings(timeout, sandboxed, memory_gib)
    _sweep_unpacked()
    with scratch.run_folder():
        if not merge_only:
            batch.select_shard([], shard)  # un --shard mal escrito, antes de preparar nada
        return _grade(root, zips, jobs, shard, merge_only, lab_ids, progress, settings, refused)


def _grade(root, zips, jobs, shard, merge_only, lab_ids, progress, settings, refused) -> int:
    """Reúne las entregas y las califica, une o solo comprueba (ver :func:`run`)."""
    from course.grading import batch, cpus

    prefix = f"{UNPACKED}{os.getpid()}-"
    with tempfile.TemporaryDirectory(prefix=prefix) as unpacked:
        tasks = batch.gather(
            root / "submitted", zips, Path(unpacked), lab_ids, shard, None if shard else refused
        )
        if merge_only:
            return max(_merge_and_report(root), _report_refused(refused), _missing(tasks, root))
        if not tasks:
            where = f"el fragmento {shard}" if shard else "submitted/ (ni en los zip indicados)"
            print(f"No hay entregas que calificar en {where}.")
            return _report_refused(refused)
        _before_grading(settings.sandboxed)
        jobs = jobs or cpus.usable()
        graded = batch.grade_all(tasks, root / "autograded", jobs, settings, progress)
    if shard:
        return _report_shard(graded, shard)
    return max(_merge_and_report(root), _report_refused(refused))


def _before_grading(sandboxed: bool) -> None:
    """Antes de calificar a nadie, y solo si hay a quién (un fragmento vacío no paga estos
    segundos): el aislamiento, qué ve el núcleo aislado de este curso y la memoria."""
    from course.grading import kernel_view

    _require_sandbox(sandboxed)
    if sandboxed:
        kernel_view.require()
        _memory_guard()


def _report_shard(graded: list["Result"], shard: str) -> int:
    """La tabla y los errores de las entregas de este fragmento, sin tocar gradebook.db."""
    print(table(graded))
    errors = [r for r in graded if r.error]
    print(
        f"\nFragmento {shard}: {len(graded)} entregas, {len(errors)} sin calificar;"
        " gradebook.db sin tocar (únelo al final con --merge-only)."
    )
    _report_problems(graded)
    return 1 if errors else 0


def _missing(tasks, root: Path) -> int:
    """3 si alguna entrega de ``tasks`` no tiene resultado en ``autograded/`` (un fragmento
    que no terminó); 0 si no. Una entrega que cambió después de calificarse no se nota
    aquí: la califica otra vez el fragmento que la tiene."""
    from course.grading import results

    autograded = root / "autograded"
    missing = [t for t in tasks if not results.path_for(autograded, t.student, t.lab).is_file()]
    if missing:
        print(
            f"\nerror: faltan {len(missing)} entregas por calificar; vuelve a lanzar los"
            " fragmentos que no terminaron y después esta unión:"
        )
        for task in missing:
            print(printable(f"  · {task.student} · {task.lab}"))
    return 3 if missing else 0


def _report_refused(refused: list[str]) -> int:
    """Las carpetas que no se calificaron por su nombre; 1 si hay alguna."""
    for line in refused:
        print(f"  ✘ {line}")
    return 1 if refused else 0


def _merge_and_report(root: Path) -> int:
    """Une ``autograded/`` en ``gradebook.db`` e imprime la tabla, los errores y los avisos."""
    from course.grading import results

    everything = results.read_all(root / "autograded")
    merged = results.merge(everything, root / "gradebook.db")
    print(table(results.with_manual_scores(everything, root / "gradebook.db")))
    errors = [r for r in everything if r.error]
    print(f"\n{merged} entregas en gradebook.db; {len(errors)} sin calificar.")
    _report_problems(everything)
    return 1 if errors else 0


def _report_problems(found: list["Result"]) -> None:
    """Una línea por entrega sin calificar y otra por cada aviso."""
    for result in found:
        if result.error:
            first = shorten(result.error.splitlines()[0])
            print(printable(f"  ✘ {result.student} · {result.lab}: {first}"))
    for result in found:
        for warning in result.warnings:
            print(printable(f"  aviso: {result.student} · {result.lab}: {warning}"))


def _sweep_unpacked() -> None:
    """Borra las carpetas de zips extraídos que dejó un ``grade`` que murió (su pid ya no
    vive); las de uno vivo, no."""
    from course.grading import scratch

    stale = scratch.sweep()
    for folder in Path(tempfile.gettempdir()).glob(f"{UNPACKED}*"):
        pid = folder.name.removeprefix(UNPACKED).split("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(folder, ignore_errors=True)
            stale.append(folder)
    if stale:
        print(
            f"aviso: borradas {len(stale)} carpetas temporales que dejó una calificación"
            " interrumpida.",
            file=sys.stderr,
        )


def _memory_guard() -> None:
    """El calificador, lo último que mata el sistema si falta memoria; sin cgroups por
    núcleo, un aviso; los cgroups que dejó una calificación muerta, borrados."""
    from course.grading import cgroups

    cgroups.protect_grader()
    reason = cgroups.available()
    if reason:
        print(f"aviso: cgroups: {reason}.", file=sys.stderr)
    stale = cgroups.sweep()
    if stale:
        print(
            f"aviso: borrados {len(stale)} cgroups de núcleos que dejó una calificación"
            " interrumpida.",
            file=sys.stderr,
        )


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


def _points(value: float) -> str:
    return f"{value:g}"


def table(found: list["Result"]) -> str:
    """Tabla estudiante × laboratorio: puntos / máximo del laboratorio (``error`` si no se pudo).

    Con ``found`` de :func:`results.with_manual_scores`, la misma nota que ``gradebook.db``.
    """
    lab_ids = [lab for lab in labs.LABS if any(r.lab == lab for r in found)]
    students = sorted({r.student for r in found})
    cell = {(r.student, r.lab): r for r in found}
    full = {r.student: f"{r.student} ({r.name})" for r in found if r.name}
    names = {student: printable(full.get(student, student)) for student in students}
    width = max([len("estudiante"), *map(len, names.values())])
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
                pending = "*" if result.pending_max else ""
                text = f"{_points(result.auto_points)}/{_points(result.max_points)}{pending}"
            row.append(f"{text:>16}")
        lines.append(f"{names[student]:<{width}}  " + "  ".join(row))
    lines.append("(* con preguntas abiertas pendientes de corrección manual en Formgrader)")
    return "\n".join(lines)
