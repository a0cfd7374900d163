"""Laboratorio 7: traducción alemán→inglés con Multi30k.

Las piezas que unen los datos (``course.translation.data``) con el Transformer del laboratorio 6:
máscaras de un lote, un paso de entrenamiento, evaluación (pérdida y perplejidad),
traducción voraz por lotes y BLEU con sacreBLEU. El bucle de entrenamiento compartido
por el cuaderno y ``python -m course train`` usa :func:`train_step` y :func:`evaluate`.
"""

import math
from collections.abc import Iterable, Sequence

import sacrebleu
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils.rnn import pad_sequence

from course.reference.model import Transformer, greedy_decode, make_src_mask, make_tgt_mask
from course.reference.training import label_smoothed_cross_entropy
from course.translation.data import batching
from course.translation.data.batching import Batch
from course.translation.data.tokenizer import BOS_IDX, EOS_IDX, SubwordTokenizer

DEFAULT_BATCH_SIZE = 256  # frases por lote en greedy_translate


def collate(pairs: Sequence[tuple[Tensor, Tensor]], pad_idx: int) -> Batch:
    """Rellena B pares con ``pad_idx`` y separa la entrada y la salida del decodificador.

    Es ``course.translation.data.collate``: ``tgt_in`` es el destino sin su último *token* y
    ``tgt_out`` el destino sin ``<bos>``.

    Forma:
        B pares (src (S_i,), tgt (T_i + 1,)) -> src (B, S), tgt_in (B, T), tgt_out (B, T)
    """
    return batching.collate(pairs, pad_idx)


def batch_masks(src: Tensor, tgt_in: Tensor, pad_idx: int) -> tuple[Tensor, Tensor]:
    """Máscaras de un lote: relleno en el origen; relleno y causalidad en el destino.

    Forma:
        src (B, S) y tgt_in (B, T), int64
        devuelve src_mask (B, 1, S) y tgt_mask (B, T, T), bool; True = se puede atender
    """
    return make_src_mask(src, pad_idx), make_tgt_mask(tgt_in, pad_idx)


def train_step(
    model: nn.Module,
    batch: Batch,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None,
    pad_idx: int,
    smoothing: float,
    clip_norm: float | None,
) -> float:
    """Un paso de optimización con forzado del profesor; devuelve la pérdida del lote.

    Pone el modelo en modo entrenamiento, calcula la entropía cruzada con suavizado de
    etiquetas ``smoothing`` sobre las posiciones de ``tgt_out`` que no son relleno, pone
    los gradientes a cero, retropropaga, recorta la norma global del gradiente a
    ``clip_norm`` (``None`` = sin recorte), da un paso del optimizador y uno del
    planificador (si lo hay).

    Args:
        model: Transformer: ``model(src, tgt_in, src_mask, tgt_mask)`` da logits.
        batch: ``Batch`` (src, tgt_in, tgt_out) en el mismo dispositivo que el modelo.
        optimizer, scheduler: p. ej. de ``course.reference.training``.
        pad_idx: *token* de relleno (no cuenta en la pérdida).
        smoothing: ε del suavizado de etiquetas, en [0, 1).
        clip_norm: norma máxima del gradiente.

    Forma:
        batch.src (B, S); batch.tgt_in (B, T); batch.tgt_out (B, T) -> float
    """
    model.train()
    src, tgt_in, tgt_out = batch
    src_mask, tgt_mask = batch_masks(src, tgt_in, pad_idx)  # (B, 1, S), (B, T, T)
    logits = model(src, tgt_in, src_mask, tgt_mask)  # (B, T, V)
    loss = label_smoothed_cross_entropy(logits, tgt_out, smoothing, ignore_index=pad_idx)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if clip_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
    optimizer.step()
    if scheduler is not None:
        scheduler.step()
    return loss.item()


@torch.no_grad()
def evaluate(model: nn.Module, batches: Iterable[Batch], pad_idx: int) -> tuple[float, float]:
    """Pérdida media por *token* y perplejidad de ``model`` en ``batches``.

    Sin gradientes y en modo evaluación (al terminar, el modelo vuelve al modo que
    tenía). La pérdida es la entropía cruzada **sin** suavizado, sumada sobre todas las
    posiciones que no son relleno de todos los lotes y dividida por su número (media
    ponderada por *tokens*, no media de las medias de cada lote). La perplejidad es
    ``exp(pérdida)``. Cada lote se lleva al dispositivo del modelo.

    Forma:
        cada lote: src (B, S), tgt_in (B, T), tgt_out (B, T) -> (pérdida, perplejidad)
    """
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    total, count = 0.0, 0
    for batch in batches:
        src, tgt_in, tgt_out = (t.to(device) for t in batch)
        src_mask, tgt_mask = batch_masks(src, tgt_in, pad_idx)
        logits = model(src, tgt_in, src_mask, tgt_mask)  # (B, T, V)
        total += F.cross_entropy(
            logits.flatten(0, 1).float(), tgt_out.flatten(), ignore_index=pad_idx, reduction="sum"
        ).item()
        count += int((tgt_out != pad_idx).sum())
    model.train(was_training)
    if count == 0:
        raise ValueError("No hay ningún token que no sea relleno: los lotes están vacíos.")
    loss = total / count
    return loss, math.exp(loss)


def encode_sources(
    tokenizer: SubwordTokenizer, sentences: Sequence[str], pad_idx: int, device
) -> Tensor:
    """Codifica y rellena frases de origen. Forma: N frases -> (N, S) int64 en ``device``."""
    ids = [torch.tensor(s) for s in tokenizer.encode_batch(list(sentences))]
    return pad_sequence(ids, batch_first=True, padding_value=pad_idx).to(device)  # (N, S)


@torch.no_grad()
def greedy_translate(
    model: Transformer,
    tokenizer: SubwordTokenizer,
    sentences: Sequence[str],
    max_len: int,
    device: torch.device | str,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> list[str]:
    """Traduce ``sentences`` con decodificación voraz por lotes y devuelve texto plano.

    Pone el modelo en modo evaluación. Las frases se agrupan por longitud en lotes de
    ``batch_size`` (menos relleno) y cada lote se decodifica con
    ``course.reference.model.greedy_decode``; la salida vuelve al orden de entrada y
    se detokeniza con ``tokenizer.decode`` (sin ``<bos>``, hasta el primer ``<eos>``).

    Args:
        model: el Transformer entrenado (ya en ``device``).
        tokenizer: el ``SubwordTokenizer`` compartido.
        sentences: N frases alemanas.
        max_len: *tokens* máximos de cada traducción, contando ``<bos>``.
        device: dispositivo del modelo.
        batch_size: frases por lote.

    Forma:
        N frases -> N traducciones (str)
    """
    model.eval()
    pad_idx = model.config.pad_idx
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    out = [""] * len(sentences)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        src = encode_sources(tokenizer, [sentences[i] for i in chunk], pad_idx, device)  # (b, S)
        src_mask = make_src_mask(src, pad_idx)  # (b, 1, S)
        ys = greedy_decode(model, src, src_mask, max_len, BOS_IDX, EOS_IDX, pad_idx)  # (b, T)
        for i, row in zip(chunk, ys[:, 1:].tolist(), strict=True):
            out[i] = tokenizer.decode(row)
    return out


def translate_test_set(
    model: Transformer,
    tokenizer: SubwordTokenizer,
    pairs: Sequence[tuple[str, str]],
    path,
    max_len: int,
    device: torch.device | str,
) -> float:
    """Traduce los orígenes de ``pairs``, escribe una traducción por línea en ``path`` y
    devuelve el BLEU contra los destinos.

    El archivo (UTF-8) tiene exactamente una línea por par, en el mismo orden, cada una
    terminada en ``\\n``; los saltos de línea dentro de una traducción se cambian por espacios.

    Forma:
        N pares (alemán, inglés) -> archivo de N líneas; devuelve float en [0, 100]
    """
    hypotheses = greedy_translate(model, tokenizer, [de for de, _ in pairs], max_len, device)
    hypotheses = [h.replace("\n", " ") for h in hypotheses]
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(f"{h}\n" for h in hypotheses)
    return corpus_bleu(hypotheses, [en for _, en in pairs])


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """BLEU de corpus con sacreBLEU (sensible a mayúsculas, texto detokenizado, tokenizador 13a).

    Una referencia por frase. Devuelve la puntuación en [0, 100].

    Forma:
        N hipótesis y N referencias (str) -> float
    """
    if len(hypotheses) != len(references):
        raise ValueError(
            f"Hay {len(hypotheses)} traducciones y {len(references)} referencias: "
            f"debe haber una traducción por referencia."
        )
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score
