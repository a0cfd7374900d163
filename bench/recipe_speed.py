"""Tokens/s de entrenamiento de variantes de la receta ``cpu``: vocabulario, lote y tamaño del modelo.

Cada variante es la receta ``cpu`` con unos campos cambiados (``dataclasses.replace``) y
se entrena ``--seconds`` segundos con la variante rápida de ``bench/train_speed.py``
(cubetas de longitud, pre-norm, atención fusionada). Sirve para elegir la receta: en CPU,
con un modelo estrecho, el generador y el softmax sobre el vocabulario pesan tanto como
las capas. Los *tokens*/s cuentan *tokens* de destino que no son relleno; con otro
vocabulario cambia también cuántos *tokens* tiene una frase, y se imprime.

Uso: ``python bench/recipe_speed.py --seconds 15``.
"""

import dataclasses

import torch
from train_speed import measure

from course.argparse_es import ArgumentParser
from course.reference.model import Transformer, count_parameters, use_fused_kernels
from course.translation import data
from course.translation.config import PRESETS

VARIANTS = {
    "vocabulario 8000, lotes de 4096": dict(vocab_size=8000, max_tokens=4096),
    "vocabulario 8000, lotes de 2048": dict(vocab_size=8000, max_tokens=2048),
    "vocabulario 4000, lotes de 4096": dict(vocab_size=4000, max_tokens=4096),
    "vocabulario 4000, lotes de 2048 (receta cpu)": dict(vocab_size=4000, max_tokens=2048),
    "d_model 192, 3 + 3 capas, vocabulario 8000": dict(
        d_model=192, num_decoder_layers=3, d_ff=768, vocab_size=8000, max_tokens=4096
    ),
}


def main() -> None:
    parser = ArgumentParser(
        prog="python bench/recipe_speed.py", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--seconds", type=float, default=15.0, metavar="SEGUNDOS", help="segundos por variante"
    )
    parser.add_argument(
        "--pairs", type=int, default=8000, metavar="PARES", help="pares de entrenamiento usados"
    )
    args = parser.parse_args()
    pairs = data.read_split("train")[: args.pairs]
    for name, fields in VARIANTS.items():
        cfg = dataclasses.replace(PRESETS["cpu"], **fields)
        tokenizer = data.build_tokenizer(cfg.vocab_size)
        dataset = data.PairDataset(pairs, tokenizer)
        batches = list(data.make_loader(dataset, cfg.max_tokens, seed=0))
        torch.manual_seed(0)
        model = use_fused_kernels(Transformer(cfg.model_config(tokenizer.vocab_size)))
        r = measure(model, batches, torch.device("cpu"), False, args.seconds)
        per_sentence = sum(len(t) - 1 for t in dataset.tgt) / len(dataset)
        print(
            f"{name:46s} {count_parameters(model) / 1e6:5.2f} M  "
            f"{r['tokens_per_second']:6,.0f} tokens/s  {r['steps_per_second']:5.2f} pasos/s  "
            f"{per_sentence:4.1f} tokens por frase de destino",
            flush=True,
        )


if __name__ == "__main__":
    main()
