"""Tabla única de laboratorios (identificador -> título y módulo de referencia) y las
carpetas del curso. Sin dependencias pesadas: se importa rápido."""

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
        Lab("02_normalizacion", "Normalización, residuales y dropout", ("normalization",)),
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
