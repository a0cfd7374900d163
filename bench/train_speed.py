"""Tokens/s de entrenamiento: esta implementación frente a una línea base sencilla, en la misma ejecución.

Variantes (mismo tamaño de modelo, mismos datos, mismo ``train_step`` y AdamW):

- ``base``: la receta «de semilla»: post-norm, atención manual de la referencia (materializa
  la matriz de pesos y aplica softmax a mano), lotes aleatorios de B frases rellenados hasta
  la más larga, precisión completa (fp32);
- ``+cubetas``: la base con lotes por cubetas de longitud (``TokenBucketSampler``, presupuesto
  de *tokens*), que casi no rellenan;
- ``rápida``: lo que usa ``python -m course train``: cubetas, pre-norm,
  ``F.scaled_dot_product_attention`` (``course.train.use_fused_attention``) y, en CUDA,
  ``bfloat16`` con ``autocast``.

B de la base se elige para que sus lotes ocupen, relleno incluido, lo mismo que el
presupuesto de las cubetas (``max_tokens``), así que cada paso cuesta parecido y la
diferencia está en cuántos *tokens* reales contiene. Los *tokens*/s cuentan *tokens*
de destino que no son relleno.

Uso: ``python bench/train_speed.py --preset cpu --seconds 20``.
"""

import argparse
import dataclasses
import json
import platform
import random
import time

import torch

from course import data
from course.config import PRESETS
from course.data import PAD_IDX
from course.data.batching import collate
from course.reference.model import Transformer, count_parameters
from course.reference.training import make_optimizer
from course.reference.translation import train_step
from course.train import autocast, use_fused_attention


def random_batches(lengths: list[int], batch_size: int, seed: int) -> list[list[int]]:
    """Lotes de ``batch_size`` índices al azar, sin ordenar por longitud."""
    order = list(range(len(lengths)))
    random.Random(seed).shuffle(order)
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def measure(model, batches, device, use_autocast: bool, seconds: float, warmup: int = 3) -> dict:
    """Entrena con ``batches`` (en bucle) durante ``seconds`` y devuelve *tokens*/s y pasos."""
    optimizer = make_optimizer(model, 5e-4, 1e-4)
    ctx = autocast(device) if use_autocast else torch.autocast(device.type, enabled=False)
    tokens = steps = padded = 0
    i, start = 0, None
    while True:
        batch = batches[i % len(batches)].to(device)
        i += 1
        with ctx:
            train_step(model, batch, optimizer, None, PAD_IDX, 0.1, 1.0)  # .item() sincroniza
        if i == warmup:
            start = time.perf_counter()
            continue
        if start is None:
            continue
        steps += 1
        tokens += int((batch.tgt_out != PAD_IDX).sum())
        padded += batch.tgt_out.numel()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    return {
        "tokens_per_second": tokens / elapsed,
        "steps_per_second": steps / elapsed,
        "steps": steps,
        "target_padding": 1 - tokens / padded,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=["cpu", "gpu"], default="cpu")
    parser.add_argument("--seconds", type=float, default=20.0, help="segundos por variante")
    parser.add_argument("--pairs", type=int, default=8000, help="pares de entrenamiento usados")
    parser.add_argument("--device", default=None)
    parser.add_argument("--json", help="guarda el resultado en este archivo")
    args = parser.parse_args()
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    cfg = PRESETS[args.preset]
    tokenizer = data.build_tokenizer(cfg.vocab_size)
    pairs = data.read_split("train")[: args.pairs]
    dataset = data.PairDataset(pairs, tokenizer)
    lengths = dataset.lengths

    bucket_loader = data.make_loader(dataset, cfg.max_tokens, seed=0)
    bucketed = list(bucket_loader)
    mean_padded = sum(b.src.numel() + b.tgt_in.numel() for b in bucketed) / (2 * len(bucketed))
    # B de la base: lotes aleatorios con el mismo tamaño rellenado medio que las cubetas
    batch_size = 8
    while True:
        trial = random_batches(lengths, batch_size + 8, seed=0)
        size = sum((batch_size + 8) * max(lengths[i] for i in b) for b in trial) / len(trial)
        if size > mean_padded:
            break
        batch_size += 8
    baseline = [collate([dataset[i] for i in b]) for b in random_batches(lengths, batch_size, 0)]

    results = {}
    variants = [
        ("base", False, False, baseline, False),
        ("+cubetas", False, False, bucketed, False),
        ("rápida", True, True, bucketed, True),
    ]
    for name, norm_first, fused, batches, use_autocast in variants:
        torch.manual_seed(0)
        model_cfg = dataclasses.replace(
            cfg.model_config(tokenizer.vocab_size), norm_first=norm_first
        )
        model = use_fused_attention(Transformer(model_cfg), fused).to(device)
        results[name] = measure(model, batches, device, use_autocast, args.seconds)
        results[name]["parameters"] = count_parameters(model)
        r = results[name]
        print(
            f"{name:9s} {r['tokens_per_second']:>10,.0f} tokens/s  {r['steps_per_second']:6.2f} "
            f"pasos/s  relleno del destino {100 * r['target_padding']:4.1f} %",
            flush=True,
        )
    speedup = results["rápida"]["tokens_per_second"] / results["base"]["tokens_per_second"]
    machine = (
        torch.cuda.get_device_name(device)
        if device.type == "cuda"
        else f"CPU {platform.processor() or platform.machine()}, {torch.get_num_threads()} hilos"
    )
    print(
        f"Aceleración de la variante rápida sobre la base: {speedup:.2f}× "
        f"(objetivo >= 1.5×) · receta {args.preset} · base con B = {batch_size} frases · "
        f"cubetas de {cfg.max_tokens} tokens · {machine} · torch {torch.__version__}"
    )
    if args.json:
        summary = {"machine": machine, "preset": args.preset, "baseline_batch_size": batch_size}
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({**summary, "speedup": speedup, "variants": results}, f, indent=2)


if __name__ == "__main__":
    main()
