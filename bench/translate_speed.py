"""Tiempo de traducir las 1000 frases de test_2016_flickr: voraz y búsqueda en haz.

Carga un punto de control de ``python -m course train`` (``best.pt``), traduce el conjunto
de prueba en lotes ordenados por longitud (``course.translation.decoding.translate``) y mide el tiempo
de pared de cada modo, con su BLEU (sacreBLEU, con mayúsculas, detokenizado).

Objetivos en CPU: voraz <= 20 s, haz 5 <= 90 s.

Uso: ``python bench/translate_speed.py runs/cpu/best.pt --device cpu --beams 1 5``.
"""

import platform
import time

import torch

from course.argparse_es import ArgumentParser
from course.translation import data
from course.translation.checkpoint import load_model
from course.translation.decoding import bleu, translate


def main() -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "checkpoint", metavar="ARCHIVO", help="punto de control (best.pt, last.pt...)"
    )
    parser.add_argument(
        "--device", default="cpu", metavar="DISPOSITIVO", help="dispositivo de PyTorch (cpu, cuda)"
    )
    parser.add_argument(
        "--beams",
        type=int,
        nargs="+",
        default=[1, 5],
        metavar="N",
        help="anchos de haz que se miden",
    )
    parser.add_argument("--batch-size", type=int, default=128, metavar="N", help="frases por lote")
    parser.add_argument(
        "--pairs", type=int, default=None, metavar="N", help="solo las N primeras frases"
    )
    parser.add_argument(
        "--reference-attention",
        action="store_true",
        help="atención manual de la referencia en vez de F.scaled_dot_product_attention",
    )
    args = parser.parse_args()
    model, tokenizer, state = load_model(
        args.checkpoint, args.device, fused=not args.reference_attention
    )
    pairs = data.read_split("test_2016_flickr")[: args.pairs]
    sources, references = [de for de, _ in pairs], [en for _, en in pairs]
    machine = (
        torch.cuda.get_device_name()
        if args.device.startswith("cuda")
        else f"CPU {platform.machine()}, {torch.get_num_threads()} hilos"
    )
    print(f"{args.checkpoint} · paso {state['step']} · {len(pairs)} frases · {machine}")
    for beam in args.beams:
        start = time.perf_counter()
        hypotheses = translate(
            model, tokenizer, sources, beam_size=beam, batch_size=args.batch_size
        )
        seconds = time.perf_counter() - start
        report = bleu(hypotheses, references)
        mode = "voraz" if beam == 1 else f"haz {beam}"
        print(
            f"{mode:7s} {seconds:7.1f} s  BLEU {report.score:5.2f}  "
            f"(minúsculas {report.lowercase_score:5.2f})",
            flush=True,
        )


if __name__ == "__main__":
    main()
