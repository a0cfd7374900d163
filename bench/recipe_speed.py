"""Tokens/s de entrenamiento de variantes de la receta ``cpu``, intercaladas paso a paso.

Cada variante es la receta ``cpu`` con unos campos cambiados (``dataclasses.replace``),
con lo que ``python -m course train`` usa en CPU (cubetas de longitud, pre-norm, atención
y LayerNorm fusionadas, AdamW). En cada ronda todas las variantes dan un paso con el
mismo lote, una tras otra: una carga que cambia de un minuto a otro las afecta por igual.
Se mide el reloj y el tiempo de CPU del proceso; con ``--hilos 1`` el tiempo de CPU casi
no depende de lo que hagan los demás programas, así que en una máquina compartida la
razón que vale es la de CPU. Los *tokens*/s cuentan *tokens* de destino que no son
relleno; con otro vocabulario cambia también cuántos *tokens* tiene una frase, y se
imprime.

Dos conjuntos: ``variantes`` (vocabulario, lote y tamaño: cómo se eligió la receta) y
``candidatas`` (*dropout* solo donde no frena: sin él en la atención, la atención
fusionada de la CPU usa su núcleo rápido; sin él tras la activación de la FFN, una pasada
menos; y lo que esa velocidad puede comprar: más capas o un modelo más ancho). Imprime
también cuántas épocas caben en ``--minutos`` de entrenamiento a la velocidad del reloj.

Uso: ``python bench/recipe_speed.py --pasos 60`` o
``python bench/recipe_speed.py --conjunto candidatas --hilos 1 --pasos 60``.
"""

import dataclasses
import os
import time

import torch

from course.argparse_es import ArgumentParser
from course.reference.model import Transformer, count_parameters, use_fused_kernels
from course.reference.training import make_optimizer
from course.reference.translation import train_step
from course.text import number
from course.translation import data
from course.translation.config import PRESETS
from course.translation.data import PAD_IDX

BASELINE = "receta cpu"
_FAST = dict(attention_dropout=0.0, activation_dropout=0.0)
SETS = {
    "variantes": {
        "vocabulario 8000, lotes de 4096": dict(vocab_size=8000, max_tokens=4096),
        "vocabulario 8000, lotes de 2048": dict(vocab_size=8000, max_tokens=2048),
        "vocabulario 4000, lotes de 4096": dict(vocab_size=4000, max_tokens=4096),
        BASELINE: {},
        "d_model 192, 3 + 3 capas, vocabulario 8000": dict(
            d_model=192, num_decoder_layers=3, d_ff=768, vocab_size=8000, max_tokens=4096
        ),
    },
    "candidatas": {
        BASELINE: {},
        "(a) atención sin dropout": dict(attention_dropout=0.0),
        "(a) y FFN sin dropout": _FAST,
        "(b) (a), FFN sin dropout, 3 + 3 capas": dict(_FAST, num_decoder_layers=3),
        "(b) (a), FFN sin dropout, d_model 160": dict(_FAST, d_model=160, d_ff=640),
        "sin dropout (modelo de rapida)": dict(dropout=0.0),
    },
}


@dataclasses.dataclass
class Variant:
    """Una variante preparada y lo que lleva medido."""

    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    batches: list
    per_sentence: float  # tokens de destino por frase con su vocabulario
    wall: float = 0.0
    cpu: float = 0.0
    tokens: int = 0


def prepare(variants: dict[str, dict], pairs: list) -> dict[str, Variant]:
    """Modelo con núcleos fusionados, AdamW y lotes de cubetas de cada variante."""
    prepared, loaders = {}, {}
    for name, fields in variants.items():
        cfg = dataclasses.replace(PRESETS["cpu"], **fields)
        key = (cfg.vocab_size, cfg.max_tokens)
        if key not in loaders:
            tokenizer = data.build_tokenizer(cfg.vocab_size)
            dataset = data.PairDataset(pairs, tokenizer)
            batches = list(data.make_loader(dataset, cfg.max_tokens, seed=0))
            per_sentence = sum(len(t) - 1 for t in dataset.tgt) / len(dataset)
            loaders[key] = (tokenizer.vocab_size, batches, per_sentence)
        vocab, batches, per_sentence = loaders[key]
        torch.manual_seed(0)
        model = use_fused_kernels(Transformer(cfg.model_config(vocab))).train()
        prepared[name] = Variant(model, make_optimizer(model, 5e-4, 1e-4), batches, per_sentence)
    return prepared


def interleave(prepared: dict[str, Variant], steps: int, warmup: int = 3) -> None:
    """Un paso de cada variante por ronda (el lote i de cada una), midiendo reloj y CPU."""
    for i in range(warmup + steps):
        for v in prepared.values():
            batch = v.batches[i % len(v.batches)]
            wall, cpu = time.perf_counter(), time.process_time()
            train_step(v.model, batch, v.optimizer, None, PAD_IDX, 0.1, 1.0)
            if i >= warmup:
                v.wall += time.perf_counter() - wall
                v.cpu += time.process_time() - cpu
                v.tokens += int((batch.tgt_out != PAD_IDX).sum())


def epoch_tokens(vocab_size: int) -> int:
    """*Tokens* de destino (sin BOS) de una época entera del conjunto de entrenamiento."""
    dataset = data.PairDataset(data.read_split("train"), data.build_tokenizer(vocab_size))
    return sum(len(t) - 1 for t in dataset.tgt)


def report(prepared: dict[str, Variant], minutes: float) -> None:
    """Una línea por variante: *tokens*/s y razón con la receta ``cpu``, por reloj y por CPU."""
    base = prepared[BASELINE]
    per_epoch = epoch_tokens(PRESETS["cpu"].vocab_size)
    for name, v in prepared.items():
        rate = v.tokens / v.wall
        print(
            f"{name:40s} {number(count_parameters(v.model) / 1e6, 2)} M  "
            f"reloj {number(rate):>6s} tokens/s × {number(base.wall / v.wall * v.tokens / base.tokens, 2)}  "
            f"CPU {number(v.tokens / v.cpu):>6s} × {number(base.cpu / v.cpu * v.tokens / base.tokens, 2)}  "
            f"{number(rate * minutes * 60 / per_epoch, 1)} épocas en {number(minutes, 1)} min  "
            f"{number(v.per_sentence, 1)} tokens por frase",
            flush=True,
        )


def main() -> None:
    parser = ArgumentParser(
        prog="python bench/recipe_speed.py", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--conjunto", choices=sorted(SETS), default="variantes", help="qué variantes se miden"
    )
    parser.add_argument("--pasos", type=int, default=60, metavar="N", help="pasos por variante")
    parser.add_argument(
        "--hilos",
        type=int,
        metavar="N",
        help="hilos de PyTorch (con 1, la CPU vale aunque haya carga)",
    )
    parser.add_argument(
        "--minutos", type=float, default=13.0, metavar="MIN", help="minutos de entrenamiento"
    )
    parser.add_argument(
        "--pairs", type=int, default=8000, metavar="PARES", help="pares de entrenamiento usados"
    )
    args = parser.parse_args()
    if args.hilos:
        torch.set_num_threads(args.hilos)
    load = number(os.getloadavg()[0], 1)
    print(f"{torch.get_num_threads()} hilos · carga media {load}", flush=True)
    prepared = prepare(SETS[args.conjunto], data.read_split("train")[: args.pairs])
    interleave(prepared, args.pasos)
    print(f"carga media al terminar {number(os.getloadavg()[0], 1)}")
    report(prepared, args.minutos)


if __name__ == "__main__":
    main()
