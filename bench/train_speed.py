"""Tokens/s de entrenamiento: cada receta frente a una línea base «de semilla», en la misma ejecución.

Para cada receta (``cpu`` y ``rapida``; ``gpu`` solo si hay CUDA) se entrenan, con el
mismo tamaño de modelo, los mismos datos, el mismo ``train_step`` y AdamW:

- ``base``: la receta «de semilla»: post-norm, atención manual de la referencia (materializa
  la matriz de pesos y aplica softmax a mano), lotes aleatorios de B frases rellenados hasta
  la más larga, precisión completa (fp32);
- la receta tal como la usa ``python -m course train``: lotes por cubetas de longitud
  (``TokenBucketSampler``, presupuesto de *tokens*), pre-norm,
  ``F.scaled_dot_product_attention`` y ``F.layer_norm`` (``course.reference.model.use_fused_kernels``)
  y, en CUDA, ``bfloat16`` con ``autocast``.

B de la base se elige para que sus lotes ocupen, relleno incluido, lo mismo que el
presupuesto de las cubetas (``max_tokens``), así que cada paso cuesta parecido y la
diferencia está en cuántos *tokens* reales contiene. Los *tokens*/s cuentan *tokens*
de destino que no son relleno. Dos recetas con el mismo modelo (*dropout* incluido) y los
mismos lotes comparten la medida de su base.

Con ``--ocupado`` mide otra cosa: los *tokens*/s de la receta ``rapida`` solo y junto a un
proceso que ocupa un núcleo entero (``yes > /dev/null``), en la misma ejecución, con cada
número de hilos y política de espera de OpenMP (cada variante en su propio proceso: la
política se lee al cargar libgomp, antes de ``import torch``). Con una máquina cargada por
otros, valen las razones, no las cifras.

Uso: ``python bench/train_speed.py --seconds 20`` o ``python bench/train_speed.py --ocupado``.
"""

import argparse
import dataclasses
import json
import os
import platform
import random
import subprocess
import sys
import time

import torch

from course.argparse_es import ArgumentParser
from course.reference.model import Transformer, count_parameters, use_fused_kernels
from course.reference.training import make_optimizer
from course.reference.translation import train_step
from course.text import number
from course.translation import data
from course.translation.config import PRESETS, TrainConfig
from course.translation.data import PAD_IDX
from course.translation.data.batching import collate
from course.translation.threads import busy_cores, training_threads
from course.translation.train import attention_backends, autocast


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
        with ctx, attention_backends(device):  # como en train: en CUDA, sin cuDNN
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


def baseline_batches(dataset: data.PairDataset, bucketed: list) -> tuple[list, int]:
    """Lotes aleatorios de B frases cuyo tamaño rellenado medio iguala al de las cubetas."""
    lengths = dataset.lengths
    mean_padded = sum(b.src.numel() + b.tgt_in.numel() for b in bucketed) / (2 * len(bucketed))
    batch_size = 8
    while True:
        trial = random_batches(lengths, batch_size + 8, seed=0)
        size = sum((batch_size + 8) * max(lengths[i] for i in b) for b in trial) / len(trial)
        if size > mean_padded:
            break
        batch_size += 8
    batches = [collate([dataset[i] for i in b]) for b in random_batches(lengths, batch_size, 0)]
    return batches, batch_size


def compare(cfg: TrainConfig, pairs, device, seconds: float) -> dict:
    """Mide la base y la receta ``cfg``; devuelve ambas medidas, B de la base y la razón."""
    tokenizer = data.build_tokenizer(cfg.vocab_size)
    dataset = data.PairDataset(pairs, tokenizer)
    bucketed = list(data.make_loader(dataset, cfg.max_tokens, seed=0))
    baseline, batch_size = baseline_batches(dataset, bucketed)
    results = {"baseline_batch_size": batch_size}
    for name, norm_first, fused, batches, use_autocast in [
        ("base", False, False, baseline, False),
        ("receta", cfg.norm_first, cfg.fused_kernels, bucketed, True),
    ]:
        torch.manual_seed(0)
        model_cfg = dataclasses.replace(
            cfg.model_config(tokenizer.vocab_size), norm_first=norm_first
        )
        model = use_fused_kernels(Transformer(model_cfg), fused).to(device)
        results[name] = measure(model, batches, device, use_autocast, seconds)
        results[name]["parameters"] = count_parameters(model)
    results["speedup"] = (
        results["receta"]["tokens_per_second"] / results["base"]["tokens_per_second"]
    )
    return results


def _line(name: str, r: dict) -> str:
    return (
        f"  {name:28s} {r['tokens_per_second']:>9,.0f} tokens/s  {r['steps_per_second']:6.2f} "
        f"pasos/s  relleno del destino {100 * r['target_padding']:4.1f} %"
    )


# (nombre, hilos, variables de entorno): 0 = los de PyTorch (uno por núcleo); -1 = los que
# elige course.translation.threads, como «python -m course train»
THREADING = [
    ("todos los hilos, espera por omisión", 0, {}),
    ("todos los hilos, OMP_WAIT_POLICY=PASSIVE", 0, {"OMP_WAIT_POLICY": "PASSIVE"}),
    ("1 hilo", 1, {}),
    ("los de train: uno menos por núcleo ocupado", -1, {}),
]


def busy_comparison(seconds: float, pairs: int) -> list[dict]:
    """Cada variante de :data:`THREADING`, sola y junto a ``yes > /dev/null``."""
    rows = []
    for name, threads, env in THREADING:
        command = [sys.executable, __file__, "--medir", str(threads)]
        command += ["--seconds", str(seconds), "--pairs", str(pairs)]
        child_env = {**os.environ, **env}
        alone = _child_rate(command, child_env)
        busy = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL)
        try:
            beside = _child_rate(command, child_env)
        finally:
            busy.kill()
            busy.wait()
        rows.append({"variant": name, "alone": alone, "beside_busy": beside,
                     "ratio": beside / alone})  # fmt: skip
        print(f"  {name:42s} solo {number(alone):>6s} tokens/s · junto a «yes» "
              f"{number(beside):>6s} tokens/s · {number(100 * beside / alone)} %", flush=True)  # fmt: skip
    return rows


def _child_rate(command: list[str], env: dict) -> float:
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    return float(out.split()[-1])


def measure_rapida(threads: int, seconds: float, pairs: int) -> float:
    """*Tokens*/s de la receta ``rapida`` con ``threads`` hilos (ver :data:`THREADING`)."""
    if threads < 0:
        threads = training_threads(torch.get_num_threads(), busy_cores())
    if threads:
        torch.set_num_threads(threads)
    cfg = PRESETS["rapida"]
    tokenizer = data.build_tokenizer(cfg.vocab_size)
    dataset = data.PairDataset(data.read_split("train")[:pairs], tokenizer)
    batches = list(data.make_loader(dataset, cfg.max_tokens, seed=0))
    torch.manual_seed(0)
    model = Transformer(cfg.model_config(tokenizer.vocab_size))
    use_fused_kernels(model, cfg.fused_kernels)
    return measure(model, batches, torch.device("cpu"), False, seconds)["tokens_per_second"]


def main() -> None:
    parser = ArgumentParser(prog="python bench/train_speed.py", description=__doc__.splitlines()[0])
    recipes = ["cpu", "rapida"] + (["gpu"] if torch.cuda.is_available() else [])
    parser.add_argument(
        "--recetas", nargs="+", choices=sorted(PRESETS), default=recipes, metavar="RECETA",
        help=f"recetas que se comparan con la base (por omisión: {' '.join(recipes)})",
    )  # fmt: skip
    parser.add_argument(
        "--seconds", type=float, default=20.0, metavar="SEGUNDOS", help="segundos por variante"
    )
    parser.add_argument(
        "--pairs", type=int, default=8000, metavar="PARES", help="pares de entrenamiento usados"
    )
    parser.add_argument(
        "--device", metavar="DISPOSITIVO", help="dispositivo (por omisión, CUDA si hay, si no CPU)"
    )
    parser.add_argument("--json", metavar="ARCHIVO", help="guarda el resultado en este archivo")
    parser.add_argument(
        "--ocupado", action="store_true",
        help="receta rapida sola y junto a «yes > /dev/null», con cada política de hilos",
    )  # fmt: skip
    parser.add_argument("--medir", type=int, metavar="HILOS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.medir is not None:  # un proceso hijo de --ocupado
        print(measure_rapida(args.medir, args.seconds, args.pairs))
        return
    if args.ocupado:
        print(f"{torch.get_num_threads()} hilos · carga media {number(os.getloadavg()[0], 1)}")
        rows = busy_comparison(args.seconds, args.pairs)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(rows, f, indent=2)
        return
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    machine = (
        torch.cuda.get_device_name(device)
        if device.type == "cuda"
        else f"CPU {platform.processor() or platform.machine()}, {torch.get_num_threads()} hilos"
    )
    print(f"{machine} · torch {torch.__version__} · carga media {os.getloadavg()[0]:.1f}")
    pairs = data.read_split("train")[: args.pairs]
    measured: dict[tuple, dict] = {}
    results = {}
    for name in args.recetas:
        cfg = PRESETS[name]
        # lo que determina la velocidad: modelo, vocabulario y lotes (no la tasa ni las épocas)
        key = (cfg.model_config(cfg.vocab_size), cfg.max_tokens)
        if key not in measured:
            measured[key] = compare(cfg, pairs, device, args.seconds)
        r = results[name] = measured[key]
        print(f"receta {name} (lotes de {cfg.max_tokens} tokens; base con B = "
              f"{r['baseline_batch_size']} frases):")  # fmt: skip
        print(_line("base (semilla)", r["base"]))
        print(_line(name, r["receta"]))
        print(f"  aceleración: {r['speedup']:.2f}×", flush=True)
    print(f"carga media al terminar {os.getloadavg()[0]:.1f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"machine": machine, "recipes": results}, f, indent=2)


if __name__ == "__main__":
    main()
