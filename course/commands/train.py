"""``python -m course train``: entrena el Transformer alemán→inglés y mide su BLEU.

Con ``torchrun --nproc_per_node=N -m course train ...`` cada proceso entrena con una
parte de los lotes (``DistributedDataParallel``); solo el proceso 0 escribe y traduce.
"""

import dataclasses
from pathlib import Path

from course.config import PRESETS

DEFAULT_OUT = Path("runs")


def run(preset: str, smoke: bool = False, out: str | None = None, resume: bool = False) -> int:
    from course import train

    cfg = PRESETS["smoke" if smoke else preset]
    if smoke and preset != "smoke":
        cfg = dataclasses.replace(cfg, name=f"smoke-{preset}")
    out_dir = Path(out) if out else DEFAULT_OUT / cfg.name
    result = train.train(cfg, out_dir, resume=resume)
    if result.bleu is not None:
        print(f"BLEU (sacreBLEU, con mayúsculas, detokenizado): {result.bleu.score:.2f}")
        print(f"BLEU en minúsculas: {result.bleu.lowercase_score:.2f}")
        print(f"Firma: {result.bleu.signature}")
        print(f"Traducciones: {out_dir / train.TRANSLATIONS_FILE}")
        print(f"Punto de control: {train.final_checkpoint(out_dir)}")
    return 0
