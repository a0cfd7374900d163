"""Puntos de control del entrenamiento: escribirlos sin dejarlos a medias y leerlos con
errores en español.

Tres archivos en la carpeta de una ejecución:

- ``last.pt``: todo lo necesario para reanudar (pesos, optimizador, planificador, paso,
  época, lote, curvas, pesos por promediar, generador aleatorio, recetas y tokenizador);
- ``best.pt``: el de menor pérdida de validación, sin el estado para reanudar
  (:data:`RESUME_KEYS`): sirve para traducir y se entrega con el laboratorio 7;
- ``average.pt``: el promedio de las últimas épocas, si validó mejor que ``best.pt``.
"""

import os
from collections.abc import Mapping
from pathlib import Path

import torch

from course.labs import CourseError
from course.reference.model import Transformer, use_fused_kernels
from course.translation.config import ModelConfig
from course.translation.data.tokenizer import SubwordTokenizer

CHECKPOINT_VERSION = 1
LAST_FILE = "last.pt"
BEST_FILE = "best.pt"
AVERAGE_FILE = "average.pt"

REQUIRED_KEYS = ("version", "model", "model_config", "train_config", "step", "tokenizer")
# solo last.pt los guarda: best.pt y average.pt sirven para traducir y se entregan con el
# laboratorio 7, así que llevan los pesos, la configuración y el tokenizador, nada más
RESUME_KEYS = ("optimizer", "scheduler", "recent", "rng_cpu")


class CheckpointError(CourseError):
    """Punto de control ilegible, incompleto o de otra receta (mensaje en español)."""


def save_checkpoint(path: Path, state: Mapping) -> None:
    """Guarda ``state`` con ``torch.save`` de forma atómica (nunca deja un archivo a medias).

    Escribe en ``<nombre>.<pid>.part`` y lo renombra: un Ctrl-C o un disco lleno durante
    la escritura dejan el punto de control anterior intacto (y se borra el ``.part``).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.part")
    try:
        torch.save(dict(state), partial)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    partial.replace(path)


def for_translation(state: Mapping) -> dict:
    """``state`` sin el estado para reanudar: lo que guardan ``best.pt`` y ``average.pt``."""
    return {k: v for k, v in state.items() if k not in RESUME_KEYS}


def load_checkpoint(path: str | os.PathLike, map_location="cpu") -> dict:
    """Lee un punto de control; si está truncado, dañado o incompleto lanza ``CheckpointError``."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"No existe el punto de control {path}.")
    try:
        state = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as error:  # zip truncado, pickle roto, archivo vacío...
        raise CheckpointError(
            f"El punto de control {path} está dañado o incompleto y no se puede leer "
            f"({type(error).__name__}). Probablemente la escritura se interrumpió: bórralo y "
            f"vuelve a entrenar desde cero, o reanuda desde last.pt si es otro el dañado."
        ) from None
    missing = [k for k in REQUIRED_KEYS if not isinstance(state, dict) or k not in state]
    if missing:
        raise CheckpointError(
            f"{path} no es un punto de control de este curso: le faltan {', '.join(missing)}."
        )
    return state


def load_model(
    path: str | os.PathLike, device: str | torch.device = "cpu", fused: bool = False
) -> tuple[Transformer, SubwordTokenizer, dict]:
    """Modelo (en modo evaluación), tokenizador y estado de un punto de control.

    Con ``fused=False`` (por omisión) la atención devuelve sus pesos, para dibujarlos.
    """
    from tokenizers import Tokenizer

    state = load_checkpoint(path)
    model = Transformer(ModelConfig(**state["model_config"]))
    model.load_state_dict(state["model"])
    use_fused_kernels(model, fused)
    tokenizer = SubwordTokenizer(Tokenizer.from_str(state["tokenizer"]))
    return model.to(device).eval(), tokenizer, state


def final_checkpoint(out_dir: str | os.PathLike) -> Path:
    """El punto de control con el que ``train`` tradujo el conjunto de prueba.

    ``average.pt`` si el promedio de las últimas épocas ganó en validación; si no, ``best.pt``.
    """
    out_dir = Path(out_dir)
    average = out_dir / AVERAGE_FILE
    return average if average.is_file() else out_dir / BEST_FILE
