"""Errores típicos del laboratorio 7 (traducción alemán→inglés con Multi30k).

Cada mutante es la referencia con un solo error. Nunca llega al estudiante. Los mensajes
que repiten el texto de un ``assert`` de la prueba visible (planificador, optimizador, tipos
devueltos, modo del modelo, traducción en lote) tienen que coincidir con él palabra por
palabra; los demás los pone el diagnóstico por huellas.
"""

import math

import sacrebleu
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pad_sequence

from course.mistakes import for_exercise
from course.reference import translation as ref
from course.reference.model import greedy_decode
from course.translation.data.tokenizer import BOS_IDX, EOS_IDX

LAB = "07_multi30k"


# --- ejercicio 1: el lote -----------------------------------------------------------------


def _padded(pairs, pad_idx, **kwargs):
    src = pad_sequence([s for s, _ in pairs], padding_value=pad_idx, **kwargs)
    tgt = pad_sequence([t for _, t in pairs], padding_value=pad_idx, **kwargs)
    return src, tgt


def collate_swapped(pairs, pad_idx):
    src, tgt = _padded(pairs, pad_idx, batch_first=True)
    return src, tgt[:, 1:], tgt[:, :-1]


def collate_without_shift(pairs, pad_idx):
    src, tgt = _padded(pairs, pad_idx, batch_first=True)
    return src, tgt, tgt


def collate_pad_zero(pairs, pad_idx):
    src, tgt = _padded(pairs, 0, batch_first=True)
    return src, tgt[:, :-1], tgt[:, 1:]


def collate_time_first(pairs, pad_idx):
    src, tgt = _padded(pairs, pad_idx)
    return src, tgt[:-1], tgt[1:]


# --- ejercicio 2: las máscaras ------------------------------------------------------------


def _causal(tgt_in):
    size = tgt_in.size(1)
    return torch.ones(size, size, dtype=torch.bool, device=tgt_in.device).tril()


def masks_inverted(src, tgt_in, pad_idx):
    src_mask, tgt_mask = ref.batch_masks(src, tgt_in, pad_idx)
    return ~src_mask, ~tgt_mask


def masks_without_causal(src, tgt_in, pad_idx):
    src_mask = (src != pad_idx).unsqueeze(1)
    tgt_mask = (tgt_in != pad_idx).unsqueeze(1).expand(-1, tgt_in.size(1), -1)
    return src_mask, tgt_mask


def masks_without_target_padding(src, tgt_in, pad_idx):
    src_mask = (src != pad_idx).unsqueeze(1)
    return src_mask, _causal(tgt_in).expand(tgt_in.size(0), -1, -1)


def masks_causal_transposed(src, tgt_in, pad_idx):
    src_mask = (src != pad_idx).unsqueeze(1)
    return src_mask, (tgt_in != pad_idx).unsqueeze(1) & _causal(tgt_in).T


def masks_source_without_query_axis(src, tgt_in, pad_idx):
    return src != pad_idx, ref.batch_masks(src, tgt_in, pad_idx)[1]


# --- ejercicio 3: un paso de entrenamiento ------------------------------------------------


def _loss(model, batch, pad_idx, **kwargs):
    src, tgt_in, tgt_out = batch
    logits = model(src, tgt_in, *ref.batch_masks(src, tgt_in, pad_idx))
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt_out.reshape(-1), **kwargs)


def _update(model, loss, optimizer, scheduler, clip_norm, step=True):
    optimizer.zero_grad()
    loss.backward()
    if clip_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
    if step:
        optimizer.step()
    if scheduler is not None:
        scheduler.step()


def step_without_smoothing(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    loss = _loss(model, batch, pad_idx, ignore_index=pad_idx)
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item()


def step_counting_padding(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    loss = _loss(model, batch, pad_idx, label_smoothing=smoothing)
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item()


def step_without_scheduler(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    return ref.train_step(model, batch, optimizer, None, pad_idx, smoothing, clip_norm)


def step_without_optimizer_step(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    loss = _loss(model, batch, pad_idx, ignore_index=pad_idx, label_smoothing=smoothing)
    _update(model, loss, optimizer, scheduler, clip_norm, step=False)
    return loss.item()


def step_target_tgt_in(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    src, tgt_in, _ = batch
    kwargs = {"ignore_index": pad_idx, "label_smoothing": smoothing}
    loss = _loss(model, (src, tgt_in, tgt_in), pad_idx, **kwargs)
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item()


def step_returning_tensor(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    loss = _loss(model, batch, pad_idx, ignore_index=pad_idx, label_smoothing=smoothing)
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss


# --- ejercicio 4: la evaluación -----------------------------------------------------------


def evaluate_mean_of_batch_means(model, batches, pad_idx):
    was_training = model.training
    model.eval()
    means = []
    with torch.no_grad():
        for src, tgt_in, tgt_out in batches:
            means.append(_loss(model, (src, tgt_in, tgt_out), pad_idx, ignore_index=pad_idx).item())
    model.train(was_training)
    loss = sum(means) / len(means)
    return loss, math.exp(loss)


def evaluate_with_smoothing(model, batches, pad_idx):
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for batch in batches:
            kwargs = {"ignore_index": pad_idx, "label_smoothing": 0.1, "reduction": "sum"}
            total += _loss(model, batch, pad_idx, **kwargs).item()
            count += int((batch[2] != pad_idx).sum())
    model.train(was_training)
    return total / count, math.exp(total / count)


def evaluate_left_in_eval_mode(model, batches, pad_idx):
    loss, perplexity = ref.evaluate(model, batches, pad_idx)
    model.eval()
    return loss, perplexity


def evaluate_pair_swapped(model, batches, pad_idx):
    loss, perplexity = ref.evaluate(model, batches, pad_idx)
    return perplexity, loss


def _evaluate(model, batches, pad_idx, count_padding=False, target=2, perplexity=math.exp):
    """``ref.evaluate`` con una variación: cuenta el relleno, otro objetivo u otra base."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for batch in batches:
            src, tgt_in, tgt_out = batch
            kwargs = {} if count_padding else {"ignore_index": pad_idx}
            target_ids = batch[target]
            total += _loss(
                model, (src, tgt_in, target_ids), pad_idx, reduction="sum", **kwargs
            ).item()
            count += tgt_out.numel() if count_padding else int((tgt_out != pad_idx).sum())
    model.train(was_training)
    return total / count, perplexity(total / count)


def evaluate_counting_padding(model, batches, pad_idx):
    return _evaluate(model, batches, pad_idx, count_padding=True)


def evaluate_dividing_by_all_positions(model, batches, pad_idx):
    loss, _ = _evaluate(model, batches, pad_idx)
    real = sum(int((b[2] != pad_idx).sum()) for b in batches)
    loss = loss * real / sum(b[2].numel() for b in batches)
    return loss, math.exp(loss)


def evaluate_target_tgt_in(model, batches, pad_idx):
    return _evaluate(model, batches, pad_idx, target=1)


def evaluate_perplexity_base_2(model, batches, pad_idx):
    return _evaluate(model, batches, pad_idx, perplexity=lambda loss: 2.0**loss)


def evaluate_perplexity_base_10(model, batches, pad_idx):
    return _evaluate(model, batches, pad_idx, perplexity=lambda loss: 10.0**loss)


# --- ejercicio 5: traducir ----------------------------------------------------------------


def _decoded(model, tokenizer, sentences, max_len, device, masked=True):
    model.eval()
    ids = [torch.tensor(s) for s in tokenizer.encode_batch(list(sentences))]
    src = pad_sequence(ids, batch_first=True, padding_value=0).to(device)
    src_mask = (
        (src != 0).unsqueeze(1) if masked else torch.ones_like(src, dtype=torch.bool)[:, None]
    )
    with torch.no_grad():
        return greedy_decode(model, src, src_mask, max_len, BOS_IDX, EOS_IDX, 0)


def translate_without_source_mask(model, tokenizer, sentences, max_len, device):
    out = _decoded(model, tokenizer, sentences, max_len, device, masked=False)
    return [tokenizer.decode(row) for row in out[:, 1:].tolist()]


def translate_returning_ids(model, tokenizer, sentences, max_len, device):
    out = _decoded(model, tokenizer, sentences, max_len, device)
    return [row for row in out[:, 1:].tolist()]


def translate_one_string(model, tokenizer, sentences, max_len, device):
    out = _decoded(model, tokenizer, sentences, max_len, device)
    return " ".join(tokenizer.decode(row) for row in out[:, 1:].tolist())


# --- ejercicio 6: BLEU --------------------------------------------------------------------


def bleu_lowercase(hypotheses, references):
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)], lowercase=True).score


def bleu_mean_of_sentences(hypotheses, references):
    scores = [
        sacrebleu.sentence_bleu(h, [r]).score for h, r in zip(hypotheses, references, strict=True)
    ]
    return sum(scores) / len(scores)


def bleu_fraction(hypotheses, references):
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score / 100


def bleu_references_unwrapped(hypotheses, references):
    return sacrebleu.corpus_bleu(list(hypotheses), list(references)).score


def bleu_sentence_average(hypotheses, references):
    total = 0.0
    for hypothesis, reference in zip(hypotheses, references, strict=True):
        total += sacrebleu.corpus_bleu([hypothesis], [[reference]]).score
    return total / len(hypotheses)


PADDING_COUNTED = "¿Cuentas las posiciones de relleno? La media es por token que no es relleno."
PERPLEXITY_BASE = (
    "La perplejidad es e^pérdida (math.exp): la entropía cruzada usa logaritmo natural."
)
TARGET_TGT_IN = "¿Comparas con tgt_in? El objetivo es tgt_out: el siguiente token de cada posición."
SENTENCE_MEAN = "¿Promedias el BLEU de cada frase? Es un BLEU de corpus."

MISTAKES = [
    *for_exercise(
        "ej1_lote",
        "collate",
        (collate_swapped, "¿Has intercambiado tgt_in y tgt_out?"),
        (
            collate_without_shift,
            "¿Desplazas el destino? tgt_in y tgt_out no pueden ser el mismo tensor.",
        ),
        (collate_pad_zero, "¿Rellenas con 0 en lugar de con el pad_idx que recibe collate?"),
        (collate_time_first, "¿Falta batch_first=True? La primera dimensión debe ser la del lote."),
    ),
    *for_exercise(
        "ej2_mascaras",
        "batch_masks",
        (masks_inverted, "¿Máscara invertida? True significa que se puede atender."),
        (
            masks_without_causal,
            "¿Falta la parte causal? La posición i no debe ver posiciones posteriores.",
        ),
        (masks_without_target_padding, "¿Falta ocultar el relleno del destino?"),
        (
            masks_causal_transposed,
            "¿La parte causal está traspuesta? Cada posición ve las anteriores, no las siguientes.",
        ),
        (
            masks_source_without_query_axis,
            "¿Falta el eje de las consultas en src_mask? Su forma es (B, 1, S).",
        ),
    ),
    *for_exercise(
        "ej3_paso",
        "train_step",
        (step_without_smoothing, "¿Falta el suavizado de etiquetas (smoothing)?"),
        (
            step_counting_padding,
            "¿El relleno cuenta en la pérdida? Las posiciones pad_idx deben ignorarse.",
        ),
        (step_without_scheduler, "El planificador debe avanzar un paso: llama a scheduler.step()."),
        (step_without_optimizer_step, "Algún parámetro no cambió: ¿llamas a optimizer.step()?"),
        (step_returning_tensor, "train_step debe devolver un float (usa loss.item())"),
    ),
    *for_exercise(
        "ej4_evaluacion",
        "evaluate",
        (
            evaluate_mean_of_batch_means,
            "¿Promedias las medias de cada lote? Cada token debe pesar lo mismo.",
        ),
        (
            evaluate_with_smoothing,
            "¿Evalúas con suavizado de etiquetas? La pérdida de evaluación no lo lleva.",
        ),
        (evaluate_left_in_eval_mode, "evaluate debe devolver el modelo al modo en que estaba."),
        (evaluate_pair_swapped, "¿Devuelves la pareja en el orden (pérdida, perplejidad)?"),
    ),
    *for_exercise(
        "ej5_traduccion",
        "greedy_translate",
        (
            translate_without_source_mask,
            "Traducir en lote debe dar lo mismo que frase a frase: ¿usas la máscara de origen?",
        ),
        (translate_returning_ids, "Cada traducción debe ser un str (usa tokenizer.decode)."),
        (translate_one_string, "Devuelve una lista con una traducción por frase."),
    ),
    *for_exercise(
        "ej6_bleu",
        "corpus_bleu",
        (bleu_lowercase, "¿Pasas a minúsculas? Este BLEU distingue mayúsculas."),
        (bleu_mean_of_sentences, "¿Promedias el BLEU de cada frase? Es un BLEU de corpus."),
        (bleu_fraction, "¿Devuelves BLEU entre 0 y 1? Se espera en la escala de 0 a 100."),
        (
            bleu_references_unwrapped,
            "¿Pasas las referencias sin envolver? sacreBLEU espera una lista de listas.",
        ),
    ),
    *for_exercise(
        "ej4_evaluacion",
        "evaluate",
        (evaluate_counting_padding, PADDING_COUNTED),
        (evaluate_dividing_by_all_positions, PADDING_COUNTED),
    ),
    *for_exercise(
        "ej3_paso",
        "train_step",
        (step_target_tgt_in, TARGET_TGT_IN),
    ),
    *for_exercise(
        "ej4_evaluacion",
        "evaluate",
        (evaluate_target_tgt_in, TARGET_TGT_IN),
        (evaluate_perplexity_base_2, PERPLEXITY_BASE),
        (evaluate_perplexity_base_10, PERPLEXITY_BASE),
    ),
    *for_exercise(
        "ej6_bleu",
        "corpus_bleu",
        (bleu_sentence_average, SENTENCE_MEAN),
    ),
]
