"""``python -m course build``: regenera ``release/`` y las huellas de errores, y lo valida.

El calificador (nbgrader, PyTorch) se importa al ejecutar la orden, no al leer sus
argumentos: la ayuda y los errores de uso son inmediatos (``course.commands``).
"""

from course import labs

HELP = "regenera release/ desde source/ y lo valida"


def add_arguments(parser) -> None:
    parser.add_argument(
        "lab", nargs="?", help="un laboratorio (p. ej. 01_atencion); todos si se omite"
    )


def main(args) -> int:
    return run(args.lab)


def run(lab_id: str | None) -> int:
    from course import grading, mistakes

    selected = [labs.get(lab_id)] if lab_id else labs.available()
    failures = 0
    for lab in selected:
        release = grading.generate(lab, labs.REPO)
        problems = _problems(lab)
        failures += bool(problems)
        status = "correcto" if not problems else "con problemas"
        print(f"{lab.id}: generado {release.relative_to(labs.REPO)} ({status})")
        fingerprints = mistakes.write_fingerprints(lab.id)
        if fingerprints is not None:
            print(f"  huellas de errores típicos: {fingerprints.relative_to(labs.REPO)}")
        for problem in problems:
            print(f"  - {problem}")
    return 1 if failures else 0


def _problems(lab: labs.Lab) -> list[str]:
    """Lo que falla: la solución debe pasar todas las pruebas; la versión de estudiante, ninguna."""
    from course import grading

    problems = []
    solution = grading.validate(lab.source)
    for cell in solution.get("failed", []):
        problems.append(f"la solución falla la celda {cell['source'].splitlines()[0]!r}")
    release = grading.validate(lab.release, invert=True)
    for cell in release.get("passed", []):
        if _only_comments(cell["source"]):
            continue  # celda de pruebas ocultas: en la versión de estudiante solo queda el aviso
        problems.append(
            f"la versión de estudiante ya pasa la celda {cell['source'].splitlines()[0]!r}"
        )
    return problems


def _only_comments(source: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") for line in source.splitlines())
