"""Análisis de ítems por laboratorio: cada ejercicio y cada pregunta abierta es un ítem.

- **Puntos del ítem**: la suma de sus celdas calificadas (prueba visible y oculta de un
  ejercicio; la respuesta de una pregunta), como proporción de su máximo.
- **Dificultad** (índice *p*): la media de esa proporción entre quienes entregaron; 1 =
  todos con todos los puntos.
- **Discriminación**: la correlación ítem-resto (punto-biserial corregida cuando el ítem
  es de todo o nada): la correlación de Pearson entre la proporción del ítem y los puntos
  del resto del laboratorio, sin el propio ítem. Positiva: quien va bien en el
  laboratorio va bien en el ítem. Sin valor con menos de 3 estudiantes o si nadie difiere.
- **Errores con nombre**: cuántos estudiantes tienen cada error nombrado en alguna celda
  del ítem (una vez por estudiante aunque lo nombren la prueba visible y la oculta).
- Un ejercicio está **intentado** si alguna de sus pruebas no se detuvo en el
  ``NotImplementedError`` de la plantilla; **superado**, con todos sus puntos.
"""

import functools
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from course import labs, notebooks

if TYPE_CHECKING:  # el paquete del estudiante (progreso) no lleva el calificador
    from course.report.stored import Classroom, Submission

BINS = 10  # tramos de la distribución de puntos: 0–10 %, …, 90–100 %


@dataclass
class Item:
    """Las cifras de un ejercicio o de una pregunta abierta en un laboratorio."""

    name: str
    written: bool
    max_points: float
    section: str = ""  # el apartado del cuaderno que lo enseña
    anchor: str = ""  # su ancla en el cuaderno (como las pone JupyterLab)
    submitted: int = 0
    attempted: int = 0
    passed: int = 0
    pending: int = 0  # preguntas abiertas aún sin nota
    shares: list[float] = field(default_factory=list)  # proporción de puntos, por estudiante
    difficulty: float | None = None
    discrimination: float | None = None
    mistakes: list[tuple[str, int]] = field(default_factory=list)  # más frecuente primero

    @property
    def mean_points(self) -> float | None:
        return None if not self.shares else self.max_points * _mean(self.shares)

    @property
    def histogram(self) -> list[int]:
        return histogram(self.shares)


@dataclass
class LabReport:
    lab: str
    title: str
    items: list[Item]
    submitted: list[str]  # estudiantes con entrega calificada
    missing: list[str]  # de la clase, sin entrega
    failed: list[str]  # con entrega que no se pudo calificar
    totals: list[float]  # proporción del total de cada estudiante con entrega
    by_student: dict[str, list[tuple[str, str]]]  # estudiante -> (ítem, error)


def histogram(shares: list[float]) -> list[int]:
    """Cuántas proporciones caen en cada tramo de 10 % (el 100 % va en el último)."""
    counts = [0] * BINS
    for share in shares:
        counts[min(BINS - 1, int(share * BINS))] += 1
    return counts


def correlation(xs: list[float], ys: list[float]) -> float | None:
    """Pearson de ``xs`` e ``ys``; ``None`` con menos de 3 parejas o varianza nula."""
    if len(xs) < 3:
        return None
    mx, my = _mean(xs), _mean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx, syy = sum((x - mx) ** 2 for x in xs), sum((y - my) ** 2 for y in ys)
    if sxx <= 0 or syy <= 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


@functools.cache
def item_of(grade_id: str) -> str | None:
    """El ítem de una celda calificada: su ejercicio o la pregunta; ``None`` si no es de
    ninguno (una celda que nbgrader califica y el curso no conoce)."""
    if notebooks.is_written(grade_id) or notebooks.is_exercise(grade_id):
        return notebooks.exercise(grade_id)
    return None


def analyse(room: "Classroom", lab_id: str) -> LabReport:
    """Las cifras de ``lab_id`` con lo guardado en ``room``."""
    lab = labs.LABS[lab_id]
    every = room.of_lab(lab_id)
    graded = [s for s in every if not s.error]
    order, sections = layout(lab)
    items = _items(graded, order, sections)
    scores = {s.student: _item_scores(s) for s in graded}
    cells = {s.student: _cells_by_item(s) for s in graded}
    for item in items:
        _fill(item, graded, scores, cells)
    by_student = {s.student: _named(s) for s in graded}
    submitted = [s.student for s in graded]
    return LabReport(
        lab=lab_id,
        title=lab.title,
        items=items,
        submitted=submitted,
        missing=sorted(set(room.names) - {s.student for s in every}),
        failed=[s.student for s in every if s.error],
        totals=[_total_share(s) for s in graded],
        by_student={student: found for student, found in by_student.items() if found},
    )


def _items(graded: "list[Submission]", order: list[str], sections: dict) -> list[Item]:
    """Un ítem por ejercicio y pregunta con puntos, en el orden del cuaderno."""
    maximum: dict[str, dict[str, float]] = {}
    for submission in graded:
        for grade_id, most in submission.max_points.items():
            name = item_of(grade_id)
            if name is not None:
                maximum.setdefault(name, {})[grade_id] = most
    rank = {name: i for i, name in enumerate(order)}
    names = sorted(maximum, key=lambda n: (rank.get(n, len(rank)), n))
    return [
        Item(
            name,
            notebooks.is_written(name),
            sum(maximum[name].values()),
            *sections.get(name, ("", "")),
        )  # fmt: skip
        for name in names
    ]


def _item_scores(submission: "Submission") -> dict[str, float | None]:
    """Puntos por ítem; ``None`` si alguna de sus celdas espera corrección manual."""
    found: dict[str, float | None] = {}
    for grade_id, points in submission.points.items():
        name = item_of(grade_id)
        if name is None:
            continue
        if points is None or found.get(name, 0.0) is None:
            found[name] = None
        else:
            found[name] = found.get(name, 0.0) + points
    return found


def _cells_by_item(submission: "Submission") -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for grade_id in submission.points:
        name = item_of(grade_id)
        if name is not None:
            found.setdefault(name, []).append(grade_id)
    return found


def _fill(item: Item, graded: "list[Submission]", scores: dict, by_item: dict) -> None:
    """Las cifras de ``item``: ``scores`` y ``by_item`` son los puntos por ítem y las celdas
    de cada ítem de cada estudiante."""
    counts: Counter = Counter()
    pairs = []
    for submission in graded:
        own = scores[submission.student]
        if item.name not in own:
            continue
        item.submitted += 1
        cells = by_item[submission.student][item.name]
        if own[item.name] is None:
            item.pending += 1
            continue
        share = own[item.name] / item.max_points if item.max_points else 0.0
        item.shares.append(share)
        item.passed += share >= 1.0
        if not item.written:
            item.attempted += not all(g in submission.unattempted for g in cells)
        rest = sum(v for v in own.values() if v is not None) - own[item.name]  # sin el ítem
        pairs.append((share, rest))
        counts.update({m for g in cells for m in submission.mistakes.get(g, [])})
    if item.written:
        item.attempted = len(item.shares)
    item.difficulty = _mean(item.shares) if item.shares else None
    item.discrimination = correlation(*zip(*pairs, strict=True)) if pairs else None
    item.mistakes = sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))


def _named(submission: "Submission") -> list[tuple[str, str]]:
    """(ítem, error) de cada error nombrado en la entrega, una vez por ítem."""
    found = []
    for grade_id, named in submission.mistakes.items():
        name = item_of(grade_id)
        for mistake in named:
            if name is not None and (name, mistake) not in found:
                found.append((name, mistake))
    return found


def _total_share(submission: "Submission") -> float:
    """La proporción de los puntos ya calificados del laboratorio (sin los pendientes)."""
    scored = [(p, submission.max_points[g]) for g, p in submission.points.items() if p is not None]
    most = sum(m for _, m in scored)
    return sum(p for p, _ in scored) / most if most else 0.0


def layout(lab: labs.Lab) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """El orden de los ítems en el cuaderno del estudiante y el apartado (título y ancla)
    que precede a cada uno: el que enseña la idea. Del cuaderno publicado, que no lleva
    soluciones ni pruebas ocultas."""
    path = lab.release if lab.release.exists() else lab.source
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    order: list[str] = []
    sections: dict[str, tuple[str, str]] = {}
    heading = ""
    for cell in cells:
        source = "".join(cell.get("source", []))
        if cell.get("cell_type") == "markdown":
            found = re.findall(r"^#{1,3} +(.+?) *$", source, flags=re.M)
            heading = found[-1] if found else heading
        grade_id = notebooks.grade_id(cell)
        name = item_of(grade_id) if grade_id else None
        if name is not None and name not in order:
            order.append(name)
            sections[name] = (_plain(heading), _anchor(heading))
    return order, sections


def _plain(heading: str) -> str:
    """El título sin marcas de Markdown (``*``, `` ` ``, enlaces)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    return re.sub(r"[*_`]", "", text).strip()


def _anchor(heading: str) -> str:
    """El ancla que JupyterLab da a un título: su texto con guiones en lugar de espacios."""
    return _plain(heading).replace(" ", "-")
