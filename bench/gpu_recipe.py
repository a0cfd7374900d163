"""Receta ``gpu``: velocidad por paso según el lote y calidad de sus variantes, en una GPU.

1. Velocidad: cuánto cuesta formar un lote (``DataLoader`` con ``collate`` frente a
   ``DeviceBatches``) y el ``train_step`` de la referencia, en ``autocast`` ``bfloat16``,
   con los lotes de la receta anterior (6144 *tokens*) y con los de la actual, con y sin
   el núcleo de cuDNN en la atención, ``--seconds`` segundos cada uno: *tokens*/s, pasos/s
   y utilización media de la GPU (``torch.cuda.utilization``, leída cada 0,2 s). Si los
   pasos/s apenas bajan al crecer el lote, quien limita es Python, no la GPU.
2. Calidad: cada variante de ``--variantes`` (la receta ``gpu`` con unos campos cambiados)
   se entrena entera con ``course.translation.train.train``: pérdida de validación, BLEU
   de la prueba, pasos y segundos. Entre variantes se elige por la validación, nunca por
   el BLEU de ``test_2016_flickr``.

Uso: ``python bench/gpu_recipe.py --seconds 15 --variantes lote16k``.
"""

import contextlib
import dataclasses
import statistics
import tempfile
import threading
import time

import torch
from train_speed import measure

from course.argparse_es import ArgumentParser
from course.reference.model import Transformer, use_fused_kernels
from course.text import number
from course.translation import data
from course.translation.config import PRESETS
from course.translation.train import attention_backends, train

OLD_MAX_TOKENS = 6144  # el lote de la receta gpu hasta el 26-11-2026

VARIANTS = {
    "lote16k": dict(max_tokens=16384, lr=1.5e-3, warmup_steps=400),
    "lote12k": dict(max_tokens=12288, lr=1.5e-3, warmup_steps=400),
}


class Utilization:
    """Media de ``torch.cuda.utilization()`` mientras dura el bloque ``with``."""

    def __init__(self, period: float = 0.2):
        self.period, self.samples = period, []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._done.wait(self.period):
            self.samples.append(torch.cuda.utilization())

    def __enter__(self) -> "Utilization":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()

    @property
    def mean(self) -> float:
        return statistics.fmean(self.samples) if self.samples else float("nan")


def per_batch(batches, device: torch.device) -> float:
    """Segundos por lote de recorrer una época de ``batches`` y llevarla a ``device``."""
    start = time.perf_counter()
    count = sum(1 for batch in batches if batch.to(device, non_blocking=True) is not None)
    torch.cuda.synchronize(device)
    return (time.perf_counter() - start) / count


def speed(seconds: float) -> None:
    """Formar lotes, y pasos/s con y sin cuDNN en la atención, con el lote anterior y el actual.

    Cada medida recorre lotes de épocas que no ha visto (formas nuevas), como el
    entrenamiento: con las mismas formas repetidas, cuDNN no se nota.
    """
    cfg = PRESETS["gpu"]
    tokenizer = data.build_tokenizer(cfg.vocab_size)
    dataset = data.PairDataset(data.read_split("train"), tokenizer)
    device = torch.device("cuda")
    backends = {
        "con cuDNN": contextlib.nullcontext,
        "sin cuDNN": lambda: attention_backends(device),
    }
    for max_tokens in (OLD_MAX_TOKENS, cfg.max_tokens):
        loader = data.make_loader(dataset, max_tokens, seed=0, pin_memory=True)
        on_device = data.DeviceBatches(dataset, loader.batch_sampler, device)
        print(
            f"lote de {number(max_tokens)} tokens, formar un lote: "
            f"{number(per_batch(loader, device) * 1e3, 1)} ms con el DataLoader, "
            f"{number(per_batch(on_device, device) * 1e3, 1)} ms en la GPU",
            flush=True,
        )
        for k, (label, backend) in enumerate(backends.items()):
            batches = []
            for epoch in range(3):
                on_device.batch_sampler.set_epoch(10 * k + epoch)
                batches += list(on_device)
            torch.manual_seed(0)
            model = Transformer(cfg.model_config(tokenizer.vocab_size))
            use_fused_kernels(model, cfg.fused_kernels).to(device)
            with backend(), Utilization() as util:
                r = measure(model, batches, device, True, seconds)
            print(
                f"lote de {number(max_tokens)} tokens, {label}: "
                f"{number(r['steps_per_second'], 1)} pasos/s, "
                f"{number(r['tokens_per_second'])} tokens/s, GPU ocupada {number(util.mean, 0)} %",
                flush=True,
            )


def quality(name: str) -> None:
    """Entrena la variante ``name`` entera e imprime validación, BLEU, pasos y segundos."""
    cfg = dataclasses.replace(PRESETS["gpu"], name=name, **VARIANTS[name])
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as out, Utilization() as util:
        result = train(cfg, out, progress=False, log=lambda _msg: None)
    best_val = min(h["val_loss"] for h in result.history)
    print(
        f"{name}: validación {number(best_val, 3)}, BLEU {number(result.bleu.score, 2)}, "
        f"{number(result.step)} pasos en {number(result.train_seconds, 1)} s "
        f"({number(len(result.history))} épocas, {number(result.tokens_per_second)} tokens/s, "
        f"GPU ocupada {number(util.mean, 0)} %), {number(time.perf_counter() - start, 1)} s "
        "en total",
        flush=True,
    )


def main() -> None:
    parser = ArgumentParser(prog="python bench/gpu_recipe.py", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=15.0, metavar="SEGUNDOS", help="segundos por lote medido"
    )
    parser.add_argument(
        "--variantes", default="", metavar="NOMBRES",
        help=f"variantes por entrenar enteras, separadas por comas: {', '.join(VARIANTS)}",
    )  # fmt: skip
    args = parser.parse_args()
    names = [n for n in args.variantes.split(",") if n]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        parser.error(f"variantes desconocidas: {', '.join(unknown)}; hay {', '.join(VARIANTS)}")
    if not torch.cuda.is_available():
        parser.error("este guion necesita una GPU con CUDA")
    speed(args.seconds)
    for name in names:
        quality(name)


if __name__ == "__main__":
    main()
