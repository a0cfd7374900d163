"""Tabla única de laboratorios (identificador -> título y módulo de referencia), las
carpetas del curso y qué partes del paquete son secretas en cada laboratorio. Sin
dependencias pesadas: se importa rápido."""

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "source"
RELEASE = REPO / "release"


@dataclass(frozen=True)
class Lab:
    id: str  # nombre de la carpeta y del cuaderno, p. ej. "01_atencion"
    title: str
    reference: tuple[str, ...]  # módulos de course.reference que resuelven el laboratorio
    # carpeta, relativa al cuaderno, con lo que el cuaderno escribe fuera de sí y las pruebas
    # ocultas leen (la ejecución completa del laboratorio 7); la calificación la copia
    outputs: str | None = None

    @property
    def source(self) -> Path:
        return SOURCE / self.id / f"{self.id}.ipynb"

    @property
    def release(self) -> Path:
        return RELEASE / self.id / f"{self.id}.ipynb"


LABS = {
    lab.id: lab
    for lab in (
        Lab("01_atencion", "Atención por producto escalar escalado", ("attention",)),
        Lab(
            "02_normalizacion", "Normalización, conexiones residuales y dropout", ("normalization",)
        ),
        Lab("03_posicional", "Embeddings y codificación posicional", ("positional",)),
        Lab("04_multicabeza", "Atención multicabeza", ("multihead",)),
        Lab("05_capas", "Capas del codificador y del decodificador", ("layers",)),
        Lab("06_transformer", "El Transformer completo", ("model", "training")),
        Lab(
            "07_multi30k",
            "Traducción alemán→inglés con Multi30k",
            ("translation",),
            outputs="runs/07_multi30k/completa",
        ),
    )
}


# dentro de ``Lab.outputs``, lo que la calificación no copia: el estado para reanudar
# (``last.pt``, con el optimizador, de cientos de MB) y las escrituras a medio hacer
NOT_GRADED = ("last.pt", "*.part")


# --- Lo que es secreto en cada laboratorio ---------------------------------------------
# Las rutas son relativas a ``course/``. Lo usan la copia del paquete que ve el núcleo al
# calificar (``course.grading.sandbox.course_copy``) y el zip de los estudiantes
# (``course.commands.bundle``): ninguno decide por su cuenta qué se oculta.

# Catálogo de errores típicos (course.mistakes): el código de un mutante vale tanto como la
# respuesta. Se ven solo el paquete y las huellas de salidas equivocadas.
MISTAKES_KEPT = ("mistakes/__init__.py", "mistakes/fingerprints/*.json")
# Del calificador, el núcleo solo necesita el agente que contesta al calificador.
KERNEL_GRADING = ("grading/__init__.py", "grading/agent.py")
# Módulos del profesor (calificar, devolver, exportar): los estudiantes no los necesitan.
INSTRUCTOR_ONLY = (
    "grading", "commands/build.py", "commands/grade.py", "commands/feedback.py",
    "commands/export.py", "commands/bundle.py", "jupyter/safety.py", "aula", "commands/aula.py",
    # el informe de la clase (``progreso`` sí va: usa report/analysis.py y progress.py)
    "commands/informe.py", "jupyter/report.py", "report/stored.py", "report/build.py",
    "report/pages.py", "report/figures.py", "report/tables.py",
)  # fmt: skip
# Módulos que solo usa un laboratorio: van en el zip a partir de ese laboratorio.
LAB_ONLY = {"07_multi30k": ("translation", "commands/train.py")}
# Funciones del paquete que responden un ejercicio con otro nombre (o con el mismo): el
# ejercicio 1 del laboratorio 7 es ``collate`` y el 6 es el BLEU de ``decoding.bleu``.
# Llegan sin código al núcleo y al zip, como las que se llaman como un ejercicio.
ANSWERS = {"translation/data/batching.py": ("collate",), "translation/decoding.py": ("bleu",)}


def from_here(lab_id: str) -> list[str]:
    """``lab_id`` y los laboratorios siguientes, en orden: sus respuestas son secretas."""
    order = list(LABS)
    return order[order.index(lab_id) :]


def _within(inside: str, modules) -> bool:
    """¿Es ``inside`` uno de ``modules`` o está dentro de uno de ellos (una carpeta)?"""
    return any(inside == m or inside.startswith(f"{m}/") for m in modules)


def is_answer(inside: str, lab_id: str) -> bool:
    """¿Responde ``course/<inside>`` a un ejercicio de ``lab_id`` o de uno siguiente?

    Los módulos de referencia de esos laboratorios y los catálogos de errores típicos (sus
    huellas, no: son salidas equivocadas y nombran el error).
    """
    path = Path(inside)
    if path.parts[0] == "reference":
        return any(path.stem in LABS[i].reference for i in from_here(lab_id))
    if path.parts[0] == "mistakes":
        return not any(fnmatch.fnmatch(inside, pattern) for pattern in MISTAKES_KEPT)
    return False


def in_kernel(inside: str, lab_id: str) -> bool:
    """¿Ve el núcleo que califica ``lab_id`` el módulo ``course/<inside>``?

    Todo salvo las respuestas (:func:`is_answer`) y el calificador (menos el agente).
    """
    if inside.startswith("grading/") and inside not in KERNEL_GRADING:
        return False
    return not is_answer(inside, lab_id)


def in_bundle(inside: str, through: str) -> bool:
    """¿Va ``course/<inside>`` en el zip de los laboratorios hasta ``through``?

    Todo el paquete, con sus datos, salvo las respuestas de ``through`` y de los
    siguientes, lo del profesor, lo de laboratorios que no van y lo compilado.
    """
    later = set(from_here(through)) - {through}
    skipped = [*INSTRUCTOR_ONLY, *(m for lab_id in later for m in LAB_ONLY.get(lab_id, ()))]
    if inside.endswith(".pyc") or "__pycache__" in Path(inside).parts:
        return False
    return not _within(inside, skipped) and not is_answer(inside, through)


class CourseError(Exception):
    """Error de uso con un mensaje en español que dice qué hacer (código de salida 2)."""


def available() -> list[Lab]:
    """Laboratorios presentes, en orden: con cuaderno fuente (el repositorio del curso) o
    solo con el de estudiante (el paquete del estudiante, que no lleva ``source/``)."""
    return [lab for lab in LABS.values() if lab.source.exists() or lab.release.exists()]


def get(lab_id: str) -> Lab:
    lab = LABS.get(lab_id)
    if lab is None or lab not in available():
        known = ", ".join(lab.id for lab in available())
        raise CourseError(
            f"Laboratorio desconocido: «{lab_id}». Laboratorios disponibles: {known}."
        )
    return lab


def cache_root() -> Path:
    """Carpeta de caché del curso, fuera del repositorio (respeta ``XDG_CACHE_HOME``)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "transformer-es"
