"""Una clase sintética, calificada con ``course grade``: el informe cuenta lo que se inyectó.

Cada estudiante es el cuaderno de solución del laboratorio 1 con errores del catálogo
puestos en su ejercicio (como ``bench/mutants_trusted.py``), elegidos al azar con una
semilla fija. Además: una estudiante con dos errores en un mismo ejercicio (la máscara
causal de un error con el tamaño 3 de la prueba visible y de otro con los demás), uno
con el ejercicio 5 sin hacer, otro que lanza y escribe la frase de un error del catálogo
(el nombre lo pone la comparación del calificador, no el núcleo: no cuenta) y uno en la
lista de clase que no entrega. El informe
(``course.report``, leyendo lo que guardó la calificación) debe dar exactamente esos
recuentos por ejercicio y por error, y ninguna línea de las pruebas ocultas.

Solo entran errores que, puestos en el cuaderno de solución y ejecutados en este proceso
(``mistakes.Solution``), hacen fallar solo su ejercicio y cuyas pruebas los nombran solo a
ellos: así la verdad de cada estudiante es lo que se le puso, sin depender del informe.
Una sola: ``python -m pytest -q --todas tests/test_report_class.py``.
"""

import importlib.util
import os
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import nbformat
import pytest
from classroom import nbgrader_course, submission
from leaks import secret_lines

from course import labs, mistakes, notebooks
from course.commands import grade
from course.grading import diagnosis, sandbox
from course.report import analysis, build, stored

pytestmark = pytest.mark.slow

LAB = labs.get("01_atencion")
SEED = 33
STUDENTS = ("ana", "bruno", "carla", "dario", "elena")  # errores al azar
TWO_IN_ONE = "fatima"  # dos errores en ej4_causal
BLANK = "gonzalo"  # ej5_atencion sin hacer
ABSENT = "hugo"  # en la lista de clase, sin entrega
FORGER = "ivan"  # su ej3_relleno lanza y escribe la frase de un error: no cuenta
FORGED = """
def padding_mask(tokens, pad_idx):
    print({message!r})
    raise AssertionError({message!r})
"""
VISIBLE_SIZE = 3  # la prueba visible de ej4_causal usa causal_mask(3) (cuaderno publicado)
REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _bench():
    spec = importlib.util.spec_from_file_location(
        "mutants_trusted", REPO / "bench" / "mutants_trusted.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutants_trusted"] = module
    spec.loader.exec_module(module)
    return module


def _named(solution: mistakes.Solution, grade_id: str) -> list[str] | None:
    """Las frases con nombre del fallo de ``grade_id`` en este proceso; None si pasa."""
    try:
        solution.test(grade_id)
    except Exception as error:  # noqa: BLE001
        return [s for s in diagnosis.sentences(error) if s in diagnosis.known()]
    return None


def _clean(solution: mistakes.Solution, mistake: mistakes.Mistake) -> bool:
    """¿Falla solo su ejercicio y lo nombran sus pruebas, y nada más?"""
    with solution.substituted(mistake.replaces, mistake.mutant):
        for exercise in solution.exercises:
            for kind in ("prueba", "oculta"):
                named = _named(solution, f"{exercise}_{kind}")
                if exercise != mistake.exercise and named is not None:
                    return False
                if exercise == mistake.exercise and named not in (None, [mistake.message]):
                    return False
            if exercise == mistake.exercise and _named(solution, f"{exercise}_prueba") is None:
                return False
    return True


def _split(solution, first: mistakes.Mistake, second: mistakes.Mistake) -> bool:
    """¿Nombra la visible solo ``first`` y la oculta solo ``second`` con el reparto por tamaño?"""

    def both(size, *rest):
        return (first.mutant if size == VISIBLE_SIZE else second.mutant)(size, *rest)

    with solution.substituted(first.replaces, both):
        return _named(solution, "ej4_causal_prueba") == [first.message] and _named(
            solution, "ej4_causal_oculta"
        ) == [second.message]


def _plan(solution) -> tuple[dict[str, list[mistakes.Mistake]], tuple]:
    """Qué errores lleva cada estudiante (semilla fija) y la pareja de ``TWO_IN_ONE``."""
    usable = [m for m in mistakes.catalogue(LAB.id) if _clean(solution, m)]
    by_exercise: dict[str, list[mistakes.Mistake]] = {}
    for mistake in usable:
        by_exercise.setdefault(mistake.exercise, []).append(mistake)
    chance = random.Random(SEED)
    plan = {}
    for student in STUDENTS:
        chosen = chance.sample(sorted(by_exercise), chance.randint(1, min(3, len(by_exercise))))
        plan[student] = [chance.choice(by_exercise[exercise]) for exercise in sorted(chosen)]
    causal = by_exercise["ej4_causal"]
    pair = next(
        (a, b) for a in causal for b in causal if a.message != b.message and _split(solution, a, b)
    )
    return plan, pair


SPLIT = """
_primero, _segundo = {replaces}, _sys.modules[{defined_in!r}].{second}
def {replaces}(size, *rest):
    return (_primero if size == {size} else _segundo)(size, *rest)
"""


def _cell(notebook, grade_id: str):
    (found,) = [c for c in notebook.cells if notebooks.grade_id(c) == grade_id]
    return found


def _injection(bench, mistake: mistakes.Mistake) -> str:
    """El código que el banco añade a la celda del ejercicio para poner ``mistake``."""
    original = _cell(nbformat.read(LAB.source, 4), mistake.exercise).source
    return _cell(bench.mutant_notebook(LAB, mistake), mistake.exercise).source[len(original) :]


def _notebook(bench, plan: list[mistakes.Mistake], pair=None, blank: str | None = None):
    """La solución con los errores de ``plan``, la pareja repartida por tamaño en su
    ejercicio y el ejercicio ``blank`` con la plantilla sin hacer."""
    notebook = nbformat.read(LAB.source, 4)
    for mistake in plan:
        _cell(notebook, mistake.exercise).source += _injection(bench, mistake)
    if pair is not None:
        first, second = pair
        split = SPLIT.format(
            replaces=first.replaces, defined_in=second.mutant.__module__,
            second=second.mutant.__name__, size=VISIBLE_SIZE,
        )  # fmt: skip
        _cell(notebook, first.exercise).source += _injection(bench, first) + split
    if blank is not None:
        cell = _cell(notebook, blank)
        name = re.search(r"^def (\w+)", cell.source, flags=re.M)[1]
        cell.source = f"def {name}(*args, **kwargs):\n    raise NotImplementedError()\n"
    return notebook


def _truth(plan, pair) -> tuple[dict[str, Counter], dict[str, set]]:
    """Lo inyectado: ejercicio -> Counter(error -> estudiantes) y estudiante -> {(ej, error)}."""
    counts: dict[str, Counter] = {}
    by_student: dict[str, set] = {}
    for student, chosen in plan.items():
        for mistake in chosen:
            counts.setdefault(mistake.exercise, Counter())[mistake.message] += 1
            by_student.setdefault(student, set()).add((mistake.exercise, mistake.message))
    for mistake in pair:
        counts.setdefault(mistake.exercise, Counter())[mistake.message] += 1
        by_student.setdefault(TWO_IN_ONE, set()).add((mistake.exercise, mistake.message))
    return counts, by_student


@pytest.fixture(scope="module")
def graded(tmp_path_factory, solutions):
    if sandbox.available():
        pytest.skip(f"sin aislamiento aquí: {sandbox.available()}")
    from nbgrader.api import Gradebook

    bench = _bench()
    plan, pair = _plan(solutions(LAB.id))
    root = nbgrader_course(tmp_path_factory.mktemp("clase_sintetica"), LAB)
    for student, chosen in plan.items():
        nbformat.write(_notebook(bench, chosen), submission(root, student, LAB))
    nbformat.write(_notebook(bench, [], pair), submission(root, TWO_IN_ONE, LAB))
    nbformat.write(_notebook(bench, [], blank="ej5_atencion"), submission(root, BLANK, LAB))
    forged = nbformat.read(LAB.source, 4)
    message = next(m.message for m in mistakes.catalogue(LAB.id) if m.exercise == "ej3_relleno")
    _cell(forged, "ej3_relleno").source += FORGED.format(message=message)
    nbformat.write(forged, submission(root, FORGER, LAB))
    assert grade.run(root=root, jobs=2, progress=False) == 0
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:  # la lista de clase
        gradebook.update_or_create_student(ABSENT, first_name="Hugo", last_name="Sinentrega")
    return root, plan, pair


def _compare(report: analysis.LabReport, counts: dict[str, Counter], by_student) -> None:
    """Los recuentos del informe son exactamente la verdad (por ejercicio y por error)."""
    for item in report.items:
        if not item.written:
            assert Counter(dict(item.mistakes)) == counts.get(item.name, Counter()), item.name
    found = {s: set(pairs) for s, pairs in report.by_student.items()}
    assert found == by_student


def test_the_report_counts_exactly_what_was_injected(graded, tmp_path):
    root, plan, pair = graded
    counts, by_student = _truth(plan, pair)
    room = stored.load(root)
    report = analysis.analyse(room, LAB.id)
    _compare(report, counts, by_student)
    submitted = len(STUDENTS) + 3
    assert sorted(report.submitted) == sorted([*STUDENTS, TWO_IN_ONE, BLANK, FORGER])
    assert report.missing == [ABSENT] and report.failed == []
    items = {item.name: item for item in report.items}
    for name, item in items.items():
        if item.written:
            assert item.pending == submitted, name  # nadie ha corregido las preguntas aún
            continue
        wrong = {s for s, pairs in by_student.items() for ex, _ in pairs if ex == name}
        blank = {BLANK} if name == "ej5_atencion" else set()
        wrong |= {FORGER} if name == "ej3_relleno" else set()  # falla, sin error con nombre
        assert item.submitted == submitted, name
        assert item.attempted == submitted - len(blank), name
        assert item.passed == submitted - len(wrong | blank), name
    # El mismo informe, escrito: la tabla de errores en CSV dice lo mismo.
    build.write(root, tmp_path / "informe")
    rows = (tmp_path / "informe" / f"{LAB.id}_errores.csv").read_text(encoding="utf-8-sig")
    table = Counter()
    for line in rows.splitlines()[1:]:
        _, exercise, text, count, _ = line.split(";")
        table[exercise, text] += int(count)
    assert table == Counter({(ex, t): n for ex, c in counts.items() for t, n in c.items()})


def test_an_off_by_one_count_is_caught(graded):
    """La comparación es exacta: un estudiante de más en un error la hace fallar."""
    root, plan, pair = graded
    counts, by_student = _truth(plan, pair)
    report = analysis.analyse(stored.load(root), LAB.id)
    exercise, counter = next(iter(counts.items()))
    counter[next(iter(counter))] += 1
    with pytest.raises(AssertionError):
        _compare(report, counts, by_student)


def test_no_hidden_test_line_reaches_the_report(graded, tmp_path):
    root, _, _ = graded
    written = build.write(root, tmp_path / "informe")
    text = "\n".join(path.read_text(encoding="utf-8-sig") for path in written)
    cells = nbformat.read(LAB.source, 4).cells
    secret = secret_lines(
        c.source for c in cells if notebooks.is_hidden_test(notebooks.grade_id(c) or "")
    )
    assert len(secret) > 20  # hay de verdad líneas que buscar
    leaked = [line for line in secret if line in text]
    assert not leaked, leaked[:3]


def test_the_nbgrader_door_gives_the_same_report(graded):
    """``nbgrader autograde`` (la puerta del botón de Formgrader) vuelve a calificar a la
    estudiante de los dos errores: el informe no cambia en nada."""
    root, _, _ = graded
    before = analysis.analyse(stored.load(root), LAB.id)
    done = subprocess.run(
        [str(BIN / "nbgrader"), "autograde", LAB.id, "--force", f"--student={TWO_IN_ONE}"],
        cwd=root, capture_output=True, text=True, timeout=900,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert analysis.analyse(stored.load(root), LAB.id) == before
