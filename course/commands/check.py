"""``python -m course check``: califica un cuaderno con las pruebas ocultas, sin modificarlo.

En el paquete del estudiante, que no lleva el calificador ni las pruebas ocultas, ejecuta
las pruebas visibles (``course.student.visible``).
"""

import sys
from pathlib import Path

from course import labs, notebooks
from course.commands import present
from course.text import printable, shorten

HELP = (
    "califica tu cuaderno con las pruebas ocultas"
    if present("grading")
    else "ejecuta las pruebas visibles de tu cuaderno"
)


def add_arguments(parser) -> None:
    parser.add_argument(
        "notebook", metavar="CUADERNO", help="ruta del cuaderno .ipynb (no se modifica)"
    )
    parser.add_argument("--lab", help="laboratorio del cuaderno si no se reconoce solo")


def main(args) -> int:
    return run(args.notebook, args.lab)


def run(notebook: str, lab_id: str | None) -> int:
    if not present("grading"):
        from course.student import visible

        return visible.run(Path(notebook), lab_id)
    from course.grading import sandbox, staging

    lab = labs.get(lab_id) if lab_id else None
    reason = sandbox.available()
    if reason:
        print(f"aviso: califico sin aislamiento ({reason}); {sandbox.RISK}.", file=sys.stderr)
        from course import grading

        result = grading.grade_notebook(Path(notebook), lab, sandboxed=False)
    else:  # el núcleo arranca mientras se importa nbgrader (``course.grading.staging``)
        with staging.staged(Path(notebook), lab) as stage:
            from course import grading

            result = grading.grade_notebook(Path(notebook), stage.lab, stage=stage)
    print(printable(report(result), multiline=True))
    from course.report import progress

    progress.save(result, Path(notebook))  # para «python -m course progreso»
    return 0


def _points(value: float) -> str:
    return f"{value:g}"


def report(result) -> str:
    """Informe en español, un renglón por ejercicio, con el motivo de cada fallo."""
    lab = labs.LABS[result.lab]
    lines = [f"Laboratorio {lab.id} · {lab.title}", ""]
    exercises: dict[str, list] = {}
    for cell in result.cells:
        exercises.setdefault(cell.exercise, []).append(cell)
    for name, cells in exercises.items():
        maximum = sum(c.max_points for c in cells)
        if any(c.points is None for c in cells):
            lines.append(f"  {name:<24} pendiente de corrección manual (máx. {_points(maximum)})")
            continue
        got = sum(c.points for c in cells)
        if notebooks.is_written(name) and got == 0:
            lines.append(f"✘ {name:<24} sin responder (0 / {_points(maximum)})")
            continue
        mark = "✔" if got == maximum else "✘"
        lines.append(f"{mark} {name:<24} {_points(got):>3} / {_points(maximum)}")
        for cell in cells:
            if cell.points < cell.max_points:
                kind = "prueba oculta" if notebooks.is_hidden_test(cell.grade_id) else "prueba"
                reason = cell.message or "sin respuesta"
                lines.append(f"      {kind}: {shorten(reason.splitlines()[0])}")
    lines += [
        "",
        f"Puntos automáticos: {_points(result.auto_points)} / {_points(result.auto_max)}",
        f"Preguntas abiertas (corrección manual): {_points(result.manual_max)} puntos más.",
    ]
    if result.findings:
        lines += ["", "Informe de integridad (revísalo; no cambia la nota):"]
        lines += [f"  ⚠ {finding}" for finding in result.findings]
    return "\n".join(lines)
