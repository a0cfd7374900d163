"""Errores típicos del laboratorio 7 (traducción alemán→inglés con Multi30k).

Cada mutante es la referencia con un solo error. Nunca llega al estudiante. Cada idea
tiene varias formas (código distinto con el mismo efecto) y un solo mensaje, una constante
de este módulo: así una forma que el catálogo no tiene se nombra por la huella de sus
hermanas. Los mensajes que repiten el texto de un ``assert`` de la prueba visible
(planificador, optimizador, tipos devueltos, modo del modelo, traducción en lote, archivo)
tienen que coincidir con él palabra por palabra; los demás los pone el diagnóstico por
huellas o las pistas de la prueba.
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
from course.reference.training import label_smoothed_cross_entropy
from course.translation.data.tokenizer import BOS_IDX, EOS_IDX, PAD_IDX

LAB = "07_multi30k"

# --- mensajes: uno por idea ----------------------------------------------------------------

SWAPPED_TARGETS = "¿Has intercambiado tgt_in y tgt_out?"
NO_SHIFT = "¿Desplazas el destino? tgt_in y tgt_out no pueden ser el mismo tensor."
PAD_ZERO = "¿Rellenas con 0 en lugar de con el pad_idx que recibe collate?"
TIME_FIRST = "¿Falta batch_first=True? La primera dimensión debe ser la del lote."
BATCH_AXIS_SLICED = (
    "¿Cortas el eje del lote? tgt[:-1] quita una frase; el desplazamiento va en el eje del"
    " tiempo (el segundo)."
)
MASK_INVERTED = "¿Máscara invertida? True significa que se puede atender."
NO_CAUSAL = "¿Falta la parte causal? La posición i no debe ver posiciones posteriores."
NO_TARGET_PADDING = "¿Falta ocultar el relleno del destino?"
CAUSAL_TRANSPOSED = (
    "¿La parte causal está traspuesta? Cada posición ve las anteriores, no las siguientes."
)
SOURCE_MASK_SHAPE = (
    "¿Dónde va el eje de las consultas en src_mask? Su forma es (B, 1, S): el 1 entre el lote"
    " y las claves."
)
TARGET_PADDING_ON_ROWS = (
    "¿Ocultas el relleno del destino en las filas? Se oculta como clave (en las columnas),"
    " igual que en src_mask."
)
NO_SMOOTHING = "¿Falta el suavizado de etiquetas (smoothing)?"
PADDING_COUNTED = "¿Cuentas las posiciones de relleno? La media es por token que no es relleno."
TARGET_TGT_IN = "¿Comparas con tgt_in? El objetivo es tgt_out: el siguiente token de cada posición."
SCHEDULER_STEP = "El planificador debe avanzar un paso: llama a scheduler.step()."
OPTIMIZER_STEP = "¿llamas a optimizer.step()?"
RETURN_FLOAT = "train_step debe devolver un float (usa loss.item())"
TRAIN_MODE = "train_step debe poner el modelo en modo entrenamiento (model.train())."
NO_ZERO_GRAD = (
    "¿Llamas a optimizer.zero_grad() antes de loss.backward()? Sin él se suman los gradientes"
    " de los pasos."
)
ZERO_GRAD_AFTER_BACKWARD = (
    "¿Llamas a optimizer.zero_grad() después de loss.backward()? Borra los gradientes recién"
    " calculados: va antes de backward."
)
CLIP_LATE = "¿Recortas la norma del gradiente con clip_grad_norm_ antes de optimizer.step()?"
CLIP_PER_PARAMETER = (
    "¿Recortas cada gradiente por separado? clip_grad_norm_(model.parameters(), clip_norm)"
    " recorta la norma global de todos juntos."
)
CLIP_FIXED = "¿Recortas con una norma fija? Usa el clip_norm que recibe train_step."
MEAN_OF_MEANS = "¿Promedias las medias de cada lote? Cada token debe pesar lo mismo."
EVAL_SMOOTHING = "¿Evalúas con suavizado de etiquetas? La pérdida de evaluación no lo lleva."
MODE_RESTORED = "evaluate debe devolver el modelo al modo en que estaba."
PAIR_ORDER = "¿Devuelves la pareja en el orden (pérdida, perplejidad)?"
PERPLEXITY_BASE = (
    "La perplejidad es e^pérdida (math.exp): la entropía cruzada usa logaritmo natural."
)
NO_GRAD = "evaluate calcula gradientes: envuelve el bucle en torch.no_grad()"
EVAL_MODE = (
    "¿Falta model.eval() en evaluate? Con el dropout activo la pérdida cambia en cada pasada."
)
BATCH_MASK = "Traducir en lote debe dar lo mismo que frase a frase: ¿usas la máscara de origen?"
RETURN_STR = "Cada traducción debe ser un str (usa tokenizer.decode)."
ONE_PER_SENTENCE = "Devuelve una lista con una traducción por frase."
TRANSLATE_EVAL = "greedy_translate debe empezar con model.eval()"
LOWERCASE = "¿Pasas a minúsculas? Este BLEU distingue mayúsculas."
SENTENCE_MEAN = "¿Promedias el BLEU de cada frase? Es un BLEU de corpus."
BLEU_FRACTION = "¿Devuelves BLEU entre 0 y 1? Se espera en la escala de 0 a 100."
REFERENCES_UNWRAPPED = "¿Pasas las referencias sin envolver? sacreBLEU espera una lista de listas."
BLEU_SWAPPED = (
    "¿Has cambiado el orden de los argumentos? sacreBLEU recibe primero las hipótesis (las"
    " traducciones) y después [referencias]."
)
BLEU_SCORE = "corpus_bleu debe devolver un float (el atributo .score)."
BLEU_GERMAN = "¿Mides el BLEU contra el alemán? Las referencias son los destinos (inglés) de pairs."
BLEU_TOKENS = (
    "¿Calculas el BLEU sobre tokens o identificadores? sacreBLEU recibe el texto detokenizado"
    " (tokenizer.decode) y lo tokeniza él."
)
REFERENCES_WRITTEN = (
    "¿Escribes las referencias? El archivo lleva tus traducciones (greedy_translate), no el"
    " inglés de pairs."
)
SOURCES_WRITTEN = (
    "¿Escribes los orígenes? El archivo lleva tus traducciones (greedy_translate), no el"
    " alemán de pairs."
)
LAST_NEWLINE = "y la última no termina en \\n"


# --- ejercicio 1: el lote -----------------------------------------------------------------


def _padded(pairs, pad_idx, **kwargs):
    src = pad_sequence([s for s, _ in pairs], padding_value=pad_idx, **kwargs)
    tgt = pad_sequence([t for _, t in pairs], padding_value=pad_idx, **kwargs)
    return src, tgt


def collate_swapped(pairs, pad_idx):
    src, tgt = _padded(pairs, pad_idx, batch_first=True)
    return src, tgt[:, 1:], tgt[:, :-1]


def collate_returning_out_first(pairs, pad_idx):
    src, tgt = _padded(pairs, pad_idx, batch_first=True)
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
    return src, tgt_out, tgt_in


def collate_without_shift(pairs, pad_idx):
    src, tgt = _padded(pairs, pad_idx, batch_first=True)
    return src, tgt, tgt


def collate_padding_twice(pairs, pad_idx):
    """Rellena los destinos dos veces y no corta ninguna de las dos."""
    src = pad_sequence([s for s, _ in pairs], batch_first=True, padding_value=pad_idx)
    tgt_in = pad_sequence([t for _, t in pairs], batch_first=True, padding_value=pad_idx)
    tgt_out = pad_sequence([t.clone() for _, t in pairs], batch_first=True, padding_value=pad_idx)
    return src, tgt_in, tgt_out


def collate_pad_zero(pairs, pad_idx):
    src, tgt = _padded(pairs, 0, batch_first=True)
    return src, tgt[:, :-1], tgt[:, 1:]


def collate_default_padding(pairs, pad_idx):
    src = pad_sequence([s for s, _ in pairs], batch_first=True)
    tgt = pad_sequence([t for _, t in pairs], batch_first=True)
    return src, tgt[:, :-1], tgt[:, 1:]


def collate_pad_constant(pairs, pad_idx):
    """Rellena a mano con F.pad y el PAD_IDX global (0), no con el argumento."""
    longest_src = max(len(s) for s, _ in pairs)
    longest_tgt = max(len(t) for _, t in pairs)
    src = torch.stack([F.pad(s, (0, longest_src - len(s)), value=PAD_IDX) for s, _ in pairs])
    tgt = torch.stack([F.pad(t, (0, longest_tgt - len(t)), value=PAD_IDX) for _, t in pairs])
    return src, tgt[:, :-1], tgt[:, 1:]


def collate_time_first(pairs, pad_idx):
    src, tgt = _padded(pairs, pad_idx)
    return src, tgt[:-1], tgt[1:]


def collate_batch_first_false(pairs, pad_idx):
    src = pad_sequence([s for s, _ in pairs], batch_first=False, padding_value=pad_idx)
    tgt = pad_sequence([t for _, t in pairs], batch_first=False, padding_value=pad_idx)
    return src, tgt[: len(tgt) - 1], tgt[1:]


def collate_slicing_batch_axis(pairs, pad_idx):
    src, tgt = _padded(pairs, pad_idx, batch_first=True)
    return src, tgt[:-1], tgt[1:]


def collate_narrowing_batch_axis(pairs, pad_idx):
    src, tgt = _padded(pairs, pad_idx, batch_first=True)
    return src, tgt.narrow(0, 0, tgt.size(0) - 1), tgt.narrow(0, 1, tgt.size(0) - 1)


# --- ejercicio 2: las máscaras ------------------------------------------------------------


def _causal(tgt_in):
    size = tgt_in.size(1)
    return torch.ones(size, size, dtype=torch.bool, device=tgt_in.device).tril()


def masks_inverted(src, tgt_in, pad_idx):
    src_mask, tgt_mask = ref.batch_masks(src, tgt_in, pad_idx)
    return ~src_mask, ~tgt_mask


def masks_blocked_convention(src, tgt_in, pad_idx):
    """True = oculto (la convención de otros tutoriales): relleno o futuro."""
    future = torch.ones(tgt_in.size(1), tgt_in.size(1), dtype=torch.bool).triu(diagonal=1)
    return (src == pad_idx).unsqueeze(1), (tgt_in == pad_idx).unsqueeze(1) | future


def masks_logical_not(src, tgt_in, pad_idx):
    src_mask = torch.logical_not(src.ne(pad_idx)[:, None, :])
    tgt_mask = torch.logical_not(tgt_in.ne(pad_idx)[:, None, :] & _causal(tgt_in))
    return src_mask, tgt_mask


def masks_without_causal(src, tgt_in, pad_idx):
    src_mask = (src != pad_idx).unsqueeze(1)
    tgt_mask = (tgt_in != pad_idx).unsqueeze(1).expand(-1, tgt_in.size(1), -1)
    return src_mask, tgt_mask


def masks_padding_repeated(src, tgt_in, pad_idx):
    src_mask = (src != pad_idx).unsqueeze(1)
    return src_mask, (tgt_in != pad_idx).unsqueeze(1).repeat(1, tgt_in.size(1), 1)


def masks_all_true_square(src, tgt_in, pad_idx):
    """La «parte causal» hecha con unos sin tril."""
    size = tgt_in.size(1)
    square = torch.ones(size, size, dtype=torch.bool)
    return (src != pad_idx).unsqueeze(1), (tgt_in != pad_idx)[:, None, :] & square


def masks_without_target_padding(src, tgt_in, pad_idx):
    src_mask = (src != pad_idx).unsqueeze(1)
    return src_mask, _causal(tgt_in).expand(tgt_in.size(0), -1, -1)


def masks_causal_repeated(src, tgt_in, pad_idx):
    size = tgt_in.size(1)
    causal = torch.tril(torch.ones(tgt_in.size(0), size, size)).bool()
    return (src != pad_idx).unsqueeze(1), causal


def masks_causal_transposed(src, tgt_in, pad_idx):
    src_mask = (src != pad_idx).unsqueeze(1)
    return src_mask, (tgt_in != pad_idx).unsqueeze(1) & _causal(tgt_in).T


def masks_causal_triu(src, tgt_in, pad_idx):
    size = tgt_in.size(1)
    upper = torch.triu(torch.ones(size, size, dtype=torch.bool))
    return (src != pad_idx).unsqueeze(1), (tgt_in != pad_idx).unsqueeze(1) & upper


def masks_source_without_query_axis(src, tgt_in, pad_idx):
    return src != pad_idx, ref.batch_masks(src, tgt_in, pad_idx)[1]


def masks_source_compared_only(src, tgt_in, pad_idx):
    return torch.ne(src, pad_idx), ref.batch_masks(src, tgt_in, pad_idx)[1]


def masks_source_last_axis(src, tgt_in, pad_idx):
    return (src != pad_idx).unsqueeze(-1), ref.batch_masks(src, tgt_in, pad_idx)[1]


def masks_source_column(src, tgt_in, pad_idx):
    return src.ne(pad_idx)[:, :, None], ref.batch_masks(src, tgt_in, pad_idx)[1]


def masks_target_padding_on_rows(src, tgt_in, pad_idx):
    src_mask = (src != pad_idx).unsqueeze(1)
    return src_mask, (tgt_in != pad_idx).unsqueeze(2) & _causal(tgt_in)


def masks_target_padding_rows_indexed(src, tgt_in, pad_idx):
    keep = tgt_in.ne(pad_idx)[:, :, None]  # (B, T, 1): oculta filas
    return src.ne(pad_idx)[:, None, :], torch.tril(keep.expand(-1, -1, tgt_in.size(1)))


# --- ejercicio 3: un paso de entrenamiento ------------------------------------------------


def _loss(model, batch, pad_idx, **kwargs):
    src, tgt_in, tgt_out = batch
    logits = model(src, tgt_in, *ref.batch_masks(src, tgt_in, pad_idx))
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt_out.reshape(-1), **kwargs)


def _smoothed(model, batch, pad_idx, smoothing):
    return _loss(model, batch, pad_idx, ignore_index=pad_idx, label_smoothing=smoothing)


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


def step_loss_module_without_smoothing(
    model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm
):
    model.train()
    src, tgt_in, tgt_out = batch
    logits = model(src, tgt_in, *ref.batch_masks(src, tgt_in, pad_idx))
    loss = nn.CrossEntropyLoss(ignore_index=pad_idx)(logits.flatten(0, 1), tgt_out.flatten())
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item()


def step_nll_of_log_softmax(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    src, tgt_in, tgt_out = batch
    logits = model(src, tgt_in, *ref.batch_masks(src, tgt_in, pad_idx))
    log_probs = F.log_softmax(logits, dim=-1)
    loss = F.nll_loss(log_probs.flatten(0, 1), tgt_out.flatten(), ignore_index=pad_idx)
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item()


def step_counting_padding(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    loss = _loss(model, batch, pad_idx, label_smoothing=smoothing)
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item()


def step_loss_module_counting_padding(
    model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm
):
    model.train()
    src, tgt_in, tgt_out = batch
    logits = model(src, tgt_in, *ref.batch_masks(src, tgt_in, pad_idx))
    criterion = nn.CrossEntropyLoss(ignore_index=-100, label_smoothing=smoothing)
    loss = criterion(logits.flatten(0, 1), tgt_out.flatten())
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item()


def step_mean_over_all_positions(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    """Pone a cero la pérdida del relleno, pero divide entre todas las posiciones."""
    model.train()
    kwargs = {"label_smoothing": smoothing, "reduction": "none"}
    losses = _loss(model, batch, pad_idx, **kwargs)
    loss = (losses * (batch[2].reshape(-1) != pad_idx)).mean()
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item()


def step_sum_over_numel(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    kwargs = {"ignore_index": pad_idx, "label_smoothing": smoothing, "reduction": "sum"}
    loss = _loss(model, batch, pad_idx, **kwargs) / batch[2].numel()
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item()


def step_without_scheduler(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    return ref.train_step(model, batch, optimizer, None, pad_idx, smoothing, clip_norm)


def step_scheduler_twice(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    loss = ref.train_step(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm)
    if scheduler is not None:
        scheduler.step()
    return loss


def step_scheduler_without_call(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    loss = _smoothed(model, batch, pad_idx, smoothing)
    _update(model, loss, optimizer, None, clip_norm)
    if scheduler is not None:
        scheduler.step  # noqa: B018 (el error: falta llamarlo)
    return loss.item()


def step_without_optimizer_step(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    loss = _loss(model, batch, pad_idx, ignore_index=pad_idx, label_smoothing=smoothing)
    _update(model, loss, optimizer, scheduler, clip_norm, step=False)
    return loss.item()


def step_optimizer_before_backward(
    model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm
):
    model.train()
    loss = _smoothed(model, batch, pad_idx, smoothing)
    optimizer.zero_grad()
    optimizer.step()
    loss.backward()
    if clip_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
    if scheduler is not None:
        scheduler.step()
    return loss.item()


def step_target_tgt_in(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    src, tgt_in, _ = batch
    kwargs = {"ignore_index": pad_idx, "label_smoothing": smoothing}
    loss = _loss(model, (src, tgt_in, tgt_in), pad_idx, **kwargs)
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item()


def step_target_unpacked_twice(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    src, tgt, _ = batch
    logits = model(src, tgt, *ref.batch_masks(src, tgt, pad_idx))
    criterion = nn.CrossEntropyLoss(ignore_index=pad_idx, label_smoothing=smoothing)
    loss = criterion(logits.view(-1, logits.size(-1)), tgt.reshape(-1))
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item()


def step_batch_unpacked_swapped(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    src, tgt_out, tgt_in = batch  # el orden del lote es (src, tgt_in, tgt_out)
    loss = _smoothed(model, (src, tgt_in, tgt_out), pad_idx, smoothing)
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item()


def step_inputs_swapped(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    src, tgt_in, tgt_out = batch
    logits = model(src, tgt_out, *ref.batch_masks(src, tgt_out, pad_idx))
    kwargs = {"ignore_index": pad_idx, "label_smoothing": smoothing}
    loss = F.cross_entropy(logits.flatten(0, 1), tgt_in.flatten(), **kwargs)
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item()


def step_returning_tensor(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    loss = _loss(model, batch, pad_idx, ignore_index=pad_idx, label_smoothing=smoothing)
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss


def step_returning_detached(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    loss = _smoothed(model, batch, pad_idx, smoothing)
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.detach()


def step_returning_item_method(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    loss = _smoothed(model, batch, pad_idx, smoothing)
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item


def step_without_train_mode(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    loss = _smoothed(model, batch, pad_idx, smoothing)
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item()


def step_train_without_call(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train  # noqa: B018 (el error: falta llamarlo)
    loss = _smoothed(model, batch, pad_idx, smoothing)
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item()


def step_in_eval_mode(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.eval()
    loss = _smoothed(model, batch, pad_idx, smoothing)
    _update(model, loss, optimizer, scheduler, clip_norm)
    return loss.item()


def _ordered_step(model, loss, optimizer, scheduler, clip_norm, order):
    """Las llamadas de un paso en el orden ``order`` (las que falten no se hacen)."""
    calls = {
        "zero": optimizer.zero_grad,
        "backward": loss.backward,
        "clip": lambda: (
            clip_norm is None or nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        ),
        "step": optimizer.step,
    }
    for name in order:
        calls[name]()
    if scheduler is not None:
        scheduler.step()


def _step_in_order(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm, order):
    model.train()
    loss = _smoothed(model, batch, pad_idx, smoothing)
    _ordered_step(model, loss, optimizer, scheduler, clip_norm, order)
    return loss.item()


def step_without_zero_grad(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    args = (model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm)
    return _step_in_order(*args, ("backward", "clip", "step"))


def step_zero_grad_without_call(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    loss = _smoothed(model, batch, pad_idx, smoothing)
    optimizer.zero_grad  # noqa: B018 (el error: falta llamarlo)
    loss.backward()
    if clip_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
    optimizer.step()
    if scheduler is not None:
        scheduler.step()
    return loss.item()


def step_zero_grad_after_backward(
    model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm
):
    args = (model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm)
    return _step_in_order(*args, ("backward", "zero", "clip", "step"))


def step_zero_grad_before_step(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    args = (model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm)
    return _step_in_order(*args, ("backward", "clip", "zero", "step"))


def step_model_zero_grad_after_backward(
    model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm
):
    model.train()
    loss = _smoothed(model, batch, pad_idx, smoothing)
    loss.backward()
    model.zero_grad()
    optimizer.step()
    if scheduler is not None:
        scheduler.step()
    return loss.item()


def step_clipping_after_step(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    args = (model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm)
    return _step_in_order(*args, ("zero", "backward", "step", "clip"))


def step_clipping_before_backward(
    model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm
):
    args = (model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm)
    return _step_in_order(*args, ("zero", "clip", "backward", "step"))


def step_clipping_loss_gradient_late(
    model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm
):
    """Recorta al final, tras el planificador."""
    model.train()
    loss = _smoothed(model, batch, pad_idx, smoothing)
    _update(model, loss, optimizer, scheduler, None)
    if clip_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip_norm)
    return loss.item()


def _clip_each(model, clip_norm):
    for parameter in model.parameters():
        if parameter.grad is not None:
            nn.utils.clip_grad_norm_(parameter, clip_norm)


def _clip_each_by_hand(model, clip_norm):
    for parameter in model.parameters():
        if parameter.grad is not None:
            norm = parameter.grad.norm()
            parameter.grad.mul_(torch.clamp(clip_norm / (norm + 1e-6), max=1.0))


def _step_with_clip(model, batch, optimizer, scheduler, pad_idx, smoothing, clip, clip_norm):
    model.train()
    loss = _smoothed(model, batch, pad_idx, smoothing)
    optimizer.zero_grad()
    loss.backward()
    if clip_norm is not None:
        clip(model, clip_norm)
    optimizer.step()
    if scheduler is not None:
        scheduler.step()
    return loss.item()


def step_clipping_each_parameter(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    args = (model, batch, optimizer, scheduler, pad_idx, smoothing)
    return _step_with_clip(*args, _clip_each, clip_norm)


def step_clipping_each_by_hand(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    args = (model, batch, optimizer, scheduler, pad_idx, smoothing)
    return _step_with_clip(*args, _clip_each_by_hand, clip_norm)


def step_clipping_by_value(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    args = (model, batch, optimizer, scheduler, pad_idx, smoothing)
    clip = lambda m, c: nn.utils.clip_grad_value_(m.parameters(), c)  # noqa: E731
    return _step_with_clip(*args, clip, clip_norm)


def step_clipping_to_one(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    args = (model, batch, optimizer, scheduler, pad_idx, smoothing)
    return _step_with_clip(
        *args, lambda m, c: nn.utils.clip_grad_norm_(m.parameters(), 1.0), clip_norm
    )


def step_clipping_max_norm_one(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
    model.train()
    loss = _smoothed(model, batch, pad_idx, smoothing)
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
    if scheduler is not None:
        scheduler.step()
    return loss.item()


# --- ejercicio 4: la evaluación -----------------------------------------------------------


def _evaluate(
    model, batches, pad_idx, count_padding=False, target=2, perplexity=math.exp, **options
):
    """``ref.evaluate`` con una variación: cuenta el relleno, otro objetivo u otra base.

    ``options``: ``eval_mode=False`` (sin model.eval()), ``restore=False`` (no vuelve al
    modo de antes), ``grad=True`` (sin torch.no_grad()), ``smoothing`` (con suavizado).
    """
    was_training = model.training
    if options.get("eval_mode", True):
        model.eval()
    total, count = 0.0, 0
    with torch.set_grad_enabled(options.get("grad", False)):
        for batch in batches:
            src, tgt_in, tgt_out = batch
            kwargs = {} if count_padding else {"ignore_index": pad_idx}
            kwargs["label_smoothing"] = options.get("smoothing", 0.0)
            target_ids = batch[target]
            total += _loss(
                model, (src, tgt_in, target_ids), pad_idx, reduction="sum", **kwargs
            ).item()
            count += tgt_out.numel() if count_padding else int((tgt_out != pad_idx).sum())
    if options.get("restore", True):
        model.train(was_training)
    return total / count, perplexity(total / count)


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


def evaluate_stacked_batch_means(model, batches, pad_idx):
    was_training = model.training
    model.eval()
    with torch.no_grad():
        means = torch.stack([_loss(model, b, pad_idx, ignore_index=pad_idx) for b in batches])
    model.train(was_training)
    loss = means.mean().item()
    return loss, math.exp(loss)


def evaluate_counting_batches(model, batches, pad_idx):
    """Suma la media de cada lote y divide entre el número de lotes."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for batch in batches:
            total += _loss(model, batch, pad_idx, ignore_index=pad_idx, reduction="mean").item()
            count += 1
    model.train(was_training)
    return total / count, math.exp(total / count)


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


def evaluate_smoothed_helper(model, batches, pad_idx):
    """La función del laboratorio 6 con el ε del entrenamiento."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for src, tgt_in, tgt_out in batches:
            logits = model(src, tgt_in, *ref.batch_masks(src, tgt_in, pad_idx))
            tokens = int((tgt_out != pad_idx).sum())
            loss = label_smoothed_cross_entropy(logits, tgt_out, 0.1, ignore_index=pad_idx)
            total += loss.item() * tokens
            count += tokens
    model.train(was_training)
    return total / count, math.exp(total / count)


def evaluate_left_in_eval_mode(model, batches, pad_idx):
    loss, perplexity = ref.evaluate(model, batches, pad_idx)
    model.eval()
    return loss, perplexity


def evaluate_restoring_too_late(model, batches, pad_idx):
    """Lee el modo después de model.eval(): «restaura» el modo de evaluación."""
    model.eval()
    was_training = model.training
    loss, perplexity = ref.evaluate(model, batches, pad_idx)
    model.train(was_training)
    return loss, perplexity


def evaluate_without_restoring(model, batches, pad_idx):
    return _evaluate(model, batches, pad_idx, restore=False)


def evaluate_ending_in_train_mode(model, batches, pad_idx):
    """Termina siempre con model.train(), aunque el modelo llegara en modo evaluación."""
    loss, perplexity = ref.evaluate(model, batches, pad_idx)
    model.train()
    return loss, perplexity


def evaluate_pair_swapped(model, batches, pad_idx):
    loss, perplexity = ref.evaluate(model, batches, pad_idx)
    return perplexity, loss


def evaluate_returning_exp_first(model, batches, pad_idx):
    loss, _ = _evaluate(model, batches, pad_idx)
    return math.exp(loss), loss


def evaluate_counting_padding(model, batches, pad_idx):
    return _evaluate(model, batches, pad_idx, count_padding=True)


def evaluate_loss_module_counting_padding(model, batches, pad_idx):
    was_training = model.training
    model.eval()
    criterion = nn.CrossEntropyLoss(reduction="sum")
    total, count = 0.0, 0
    with torch.no_grad():
        for src, tgt_in, tgt_out in batches:
            logits = model(src, tgt_in, *ref.batch_masks(src, tgt_in, pad_idx))
            total += criterion(logits.flatten(0, 1), tgt_out.flatten()).item()
            count += tgt_out.size(0) * tgt_out.size(1)
    model.train(was_training)
    return total / count, math.exp(total / count)


def evaluate_dividing_by_all_positions(model, batches, pad_idx):
    loss, _ = _evaluate(model, batches, pad_idx)
    real = sum(int((b[2] != pad_idx).sum()) for b in batches)
    loss = loss * real / sum(b[2].numel() for b in batches)
    return loss, math.exp(loss)


def evaluate_counting_every_target(model, batches, pad_idx):
    """Ignora el relleno en la suma, pero cuenta len(tgt_out.flatten()) posiciones."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for batch in batches:
            total += _loss(model, batch, pad_idx, ignore_index=pad_idx, reduction="sum").item()
            count += len(batch[2].flatten())
    model.train(was_training)
    return total / count, math.exp(total / count)


def evaluate_target_tgt_in(model, batches, pad_idx):
    return _evaluate(model, batches, pad_idx, target=1)


def evaluate_target_unpacked_twice(model, batches, pad_idx):
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for src, tgt, tgt_out in batches:
            kwargs = {"ignore_index": pad_idx, "reduction": "sum"}
            total += _loss(model, (src, tgt, tgt), pad_idx, **kwargs).item()
            count += int(tgt_out.ne(pad_idx).sum())
    model.train(was_training)
    return total / count, math.exp(total / count)


def evaluate_perplexity_base_2(model, batches, pad_idx):
    return _evaluate(model, batches, pad_idx, perplexity=lambda loss: 2.0**loss)


def evaluate_perplexity_base_10(model, batches, pad_idx):
    return _evaluate(model, batches, pad_idx, perplexity=lambda loss: 10.0**loss)


def evaluate_perplexity_exp2(model, batches, pad_idx):
    return _evaluate(model, batches, pad_idx, perplexity=lambda loss: math.pow(2, loss))


def evaluate_with_gradients(model, batches, pad_idx):
    return _evaluate(model, batches, pad_idx, grad=True)


def evaluate_no_grad_without_with(model, batches, pad_idx):
    """``torch.no_grad()`` como instrucción suelta: crea el contexto y no entra en él."""
    was_training = model.training
    model.eval()
    torch.no_grad()
    total, count = 0.0, 0
    for batch in batches:
        total += _loss(model, batch, pad_idx, ignore_index=pad_idx, reduction="sum").item()
        count += int((batch[2] != pad_idx).sum())
    model.train(was_training)
    return total / count, math.exp(total / count)


def evaluate_detaching_the_loss(model, batches, pad_idx):
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for batch in batches:
        loss = _loss(model, batch, pad_idx, ignore_index=pad_idx, reduction="sum").detach()
        total += float(loss)
        count += int((batch[2] != pad_idx).sum())
    model.train(was_training)
    return total / count, math.exp(total / count)


def evaluate_without_eval_mode(model, batches, pad_idx):
    return _evaluate(model, batches, pad_idx, eval_mode=False)


def evaluate_eval_without_call(model, batches, pad_idx):
    was_training = model.training
    model.eval  # noqa: B018 (el error: falta llamarlo)
    total, count = 0.0, 0
    with torch.no_grad():
        for batch in batches:
            total += _loss(model, batch, pad_idx, ignore_index=pad_idx, reduction="sum").item()
            count += int((batch[2] != pad_idx).sum())
    model.train(was_training)
    return total / count, math.exp(total / count)


def evaluate_eval_after_the_loop(model, batches, pad_idx):
    was_training = model.training
    total, count = 0.0, 0
    with torch.no_grad():
        for batch in batches:
            total += _loss(model, batch, pad_idx, ignore_index=pad_idx, reduction="sum").item()
            count += int((batch[2] != pad_idx).sum())
    model.eval()
    model.train(was_training)
    return total / count, math.exp(total / count)


# --- ejercicio 5: traducir ----------------------------------------------------------------


def _decoded(model, tokenizer, sentences, max_len, device, masked=True, eval_mode=True):
    if eval_mode:
        model.eval()
    ids = [torch.tensor(s) for s in tokenizer.encode_batch(list(sentences))]
    src = pad_sequence(ids, batch_first=True, padding_value=0).to(device)
    src_mask = (
        (src != 0).unsqueeze(1) if masked else torch.ones_like(src, dtype=torch.bool)[:, None]
    )
    with torch.no_grad():
        return greedy_decode(model, src, src_mask, max_len, BOS_IDX, EOS_IDX, 0)


def _texts(tokenizer, out):
    return [tokenizer.decode(row) for row in out[:, 1:].tolist()]


def translate_without_source_mask(model, tokenizer, sentences, max_len, device):
    out = _decoded(model, tokenizer, sentences, max_len, device, masked=False)
    return [tokenizer.decode(row) for row in out[:, 1:].tolist()]


def translate_with_full_mask(model, tokenizer, sentences, max_len, device):
    model.eval()
    src = ref.encode_sources(tokenizer, sentences, 0, device)
    everything = torch.ones(src.size(0), 1, src.size(1), dtype=torch.bool, device=device)
    out = greedy_decode(model, src, everything, max_len, BOS_IDX, EOS_IDX, 0)
    return _texts(tokenizer, out)


def translate_mask_of_bos(model, tokenizer, sentences, max_len, device):
    """La máscara compara con <bos> en lugar de con el relleno."""
    model.eval()
    src = ref.encode_sources(tokenizer, sentences, 0, device)
    mask = (src != BOS_IDX).unsqueeze(1)
    out = greedy_decode(model, src, mask, max_len, BOS_IDX, EOS_IDX, 0)
    return _texts(tokenizer, out)


def translate_returning_ids(model, tokenizer, sentences, max_len, device):
    out = _decoded(model, tokenizer, sentences, max_len, device)
    return [row for row in out[:, 1:].tolist()]


def translate_returning_rows(model, tokenizer, sentences, max_len, device):
    return list(_decoded(model, tokenizer, sentences, max_len, device)[:, 1:])


def translate_returning_tokens(model, tokenizer, sentences, max_len, device):
    texts = _texts(tokenizer, _decoded(model, tokenizer, sentences, max_len, device))
    return [tokenizer.tokens(text) for text in texts]


def translate_one_string(model, tokenizer, sentences, max_len, device):
    out = _decoded(model, tokenizer, sentences, max_len, device)
    return " ".join(tokenizer.decode(row) for row in out[:, 1:].tolist())


def translate_lines_joined(model, tokenizer, sentences, max_len, device):
    return "\n".join(_texts(tokenizer, _decoded(model, tokenizer, sentences, max_len, device)))


def translate_first_only(model, tokenizer, sentences, max_len, device):
    """Decodifica el lote y devuelve solo la primera fila."""
    return _texts(tokenizer, _decoded(model, tokenizer, sentences, max_len, device))[0]


def translate_in_training_mode(model, tokenizer, sentences, max_len, device):
    out = _decoded(model, tokenizer, sentences, max_len, device, eval_mode=False)
    return _texts(tokenizer, out)


def translate_eval_without_call(model, tokenizer, sentences, max_len, device):
    model.eval  # noqa: B018 (el error: falta llamarlo)
    out = _decoded(model, tokenizer, sentences, max_len, device, eval_mode=False)
    return _texts(tokenizer, out)


def translate_eval_after_decoding(model, tokenizer, sentences, max_len, device):
    out = _decoded(model, tokenizer, sentences, max_len, device, eval_mode=False)
    model.eval()
    return _texts(tokenizer, out)


# --- ejercicio 6: BLEU --------------------------------------------------------------------


def bleu_lowercase(hypotheses, references):
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)], lowercase=True).score


def bleu_lowering_both(hypotheses, references):
    hypotheses = [h.lower() for h in hypotheses]
    return sacrebleu.corpus_bleu(hypotheses, [[r.lower() for r in references]]).score


def bleu_metric_lowercase(hypotheses, references):
    return sacrebleu.BLEU(lowercase=True).corpus_score(list(hypotheses), [list(references)]).score


def bleu_mean_of_sentences(hypotheses, references):
    scores = [
        sacrebleu.sentence_bleu(h, [r]).score for h, r in zip(hypotheses, references, strict=True)
    ]
    return sum(scores) / len(scores)


def bleu_sentence_average(hypotheses, references):
    total = 0.0
    for hypothesis, reference in zip(hypotheses, references, strict=True):
        total += sacrebleu.corpus_bleu([hypothesis], [[reference]]).score
    return total / len(hypotheses)


def bleu_metric_sentence_scores(hypotheses, references):
    metric = sacrebleu.BLEU(effective_order=True)
    scores = [
        metric.sentence_score(h, [r]).score for h, r in zip(hypotheses, references, strict=True)
    ]
    return sum(scores) / len(scores)


def bleu_fraction(hypotheses, references):
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score / 100


def bleu_metric_fraction(hypotheses, references):
    score = sacrebleu.BLEU().corpus_score(list(hypotheses), [list(references)])
    return score.score * 0.01


def bleu_references_unwrapped(hypotheses, references):
    return sacrebleu.corpus_bleu(list(hypotheses), list(references)).score


def bleu_metric_references_unwrapped(hypotheses, references):
    return sacrebleu.BLEU().corpus_score(list(hypotheses), list(references)).score


def bleu_arguments_swapped(hypotheses, references):
    return sacrebleu.corpus_bleu(list(references), [list(hypotheses)]).score


def bleu_metric_arguments_swapped(hypotheses, references):
    return sacrebleu.BLEU().corpus_score(list(references), [list(hypotheses)]).score


def bleu_parameters_swapped(references, hypotheses):
    """La firma con los nombres cambiados: (referencias, hipótesis)."""
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score


def bleu_returning_object(hypotheses, references):
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)])


def bleu_returning_text(hypotheses, references):
    return str(sacrebleu.corpus_bleu(list(hypotheses), [list(references)]))


# --- ejercicio 7: el archivo --------------------------------------------------------------


def _translations(model, tokenizer, pairs, max_len, device):
    hypotheses = ref.greedy_translate(model, tokenizer, [de for de, _ in pairs], max_len, device)
    return [h.replace("\n", " ") for h in hypotheses]


def _write(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(f"{line}\n" for line in lines)


def file_bleu_against_german(model, tokenizer, pairs, path, max_len, device):
    hypotheses = _translations(model, tokenizer, pairs, max_len, device)
    _write(path, hypotheses)
    return ref.corpus_bleu(hypotheses, [de for de, _ in pairs])


def file_bleu_against_sources(model, tokenizer, pairs, path, max_len, device):
    sources = [pair[0] for pair in pairs]
    hypotheses = ref.greedy_translate(model, tokenizer, sources, max_len, device)
    _write(path, hypotheses)
    return ref.corpus_bleu(hypotheses, sources)


def file_bleu_unpacked_in_order(model, tokenizer, pairs, path, max_len, device):
    """Desempaqueta cada par como (inglés, alemán)."""
    references = [reference for reference, _ in pairs]
    hypotheses = _translations(model, tokenizer, pairs, max_len, device)
    _write(path, hypotheses)
    return sacrebleu.corpus_bleu(hypotheses, [references]).score


def file_bleu_arguments_swapped(model, tokenizer, pairs, path, max_len, device):
    hypotheses = _translations(model, tokenizer, pairs, max_len, device)
    _write(path, hypotheses)
    return ref.corpus_bleu([en for _, en in pairs], hypotheses)


def file_bleu_keywords_swapped(model, tokenizer, pairs, path, max_len, device):
    hypotheses = _translations(model, tokenizer, pairs, max_len, device)
    _write(path, hypotheses)
    return ref.corpus_bleu(references=hypotheses, hypotheses=[en for _, en in pairs])


def file_bleu_of_token_ids(model, tokenizer, pairs, path, max_len, device):
    hypotheses = _translations(model, tokenizer, pairs, max_len, device)
    _write(path, hypotheses)
    as_ids = lambda texts: [" ".join(map(str, tokenizer.encode(t))) for t in texts]  # noqa: E731
    return ref.corpus_bleu(as_ids(hypotheses), as_ids([en for _, en in pairs]))


def file_bleu_of_batch_ids(model, tokenizer, pairs, path, max_len, device):
    hypotheses = _translations(model, tokenizer, pairs, max_len, device)
    _write(path, hypotheses)
    ids = tokenizer.encode_batch(hypotheses), tokenizer.encode_batch([en for _, en in pairs])
    texts = [[" ".join(str(i) for i in row) for row in rows] for rows in ids]
    return sacrebleu.corpus_bleu(texts[0], [texts[1]]).score


def file_writing_references(model, tokenizer, pairs, path, max_len, device):
    hypotheses = _translations(model, tokenizer, pairs, max_len, device)
    _write(path, [en for _, en in pairs])
    return ref.corpus_bleu(hypotheses, [en for _, en in pairs])


def file_writing_targets_text(model, tokenizer, pairs, path, max_len, device):
    """Escribe los destinos de pairs de una vez y mide el BLEU del archivo."""
    references = [en for _, en in pairs]
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(r + "\n" for r in references))
    return ref.corpus_bleu(references, references)


def file_writing_sources(model, tokenizer, pairs, path, max_len, device):
    hypotheses = _translations(model, tokenizer, pairs, max_len, device)
    _write(path, [de for de, _ in pairs])
    return ref.corpus_bleu(hypotheses, [en for _, en in pairs])


def file_writing_sources_by_index(model, tokenizer, pairs, path, max_len, device):
    hypotheses = _translations(model, tokenizer, pairs, max_len, device)
    with open(path, "w", encoding="utf-8") as f:
        for pair in pairs:
            print(pair[0], file=f)
    return ref.corpus_bleu(hypotheses, [en for _, en in pairs])


def file_without_last_newline(model, tokenizer, pairs, path, max_len, device):
    hypotheses = _translations(model, tokenizer, pairs, max_len, device)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(hypotheses))
    return ref.corpus_bleu(hypotheses, [en for _, en in pairs])


def file_newline_between_lines(model, tokenizer, pairs, path, max_len, device):
    """Escribe el salto de línea antes de cada traducción salvo la primera."""
    hypotheses = _translations(model, tokenizer, pairs, max_len, device)
    with open(path, "w", encoding="utf-8") as f:
        for i, hypothesis in enumerate(hypotheses):
            f.write(("\n" if i else "") + hypothesis)
    return ref.corpus_bleu(hypotheses, [en for _, en in pairs])


MISTAKES = [
    *for_exercise(
        "ej1_lote",
        "collate",
        (collate_swapped, SWAPPED_TARGETS),
        (collate_returning_out_first, SWAPPED_TARGETS),
        (collate_without_shift, NO_SHIFT),
        (collate_padding_twice, NO_SHIFT),
        (collate_pad_zero, PAD_ZERO),
        (collate_default_padding, PAD_ZERO),
        (collate_pad_constant, PAD_ZERO),
        (collate_time_first, TIME_FIRST),
        (collate_batch_first_false, TIME_FIRST),
        (collate_slicing_batch_axis, BATCH_AXIS_SLICED),
        (collate_narrowing_batch_axis, BATCH_AXIS_SLICED),
    ),
    *for_exercise(
        "ej2_mascaras",
        "batch_masks",
        (masks_inverted, MASK_INVERTED),
        (masks_blocked_convention, MASK_INVERTED),
        (masks_logical_not, MASK_INVERTED),
        (masks_without_causal, NO_CAUSAL),
        (masks_padding_repeated, NO_CAUSAL),
        (masks_all_true_square, NO_CAUSAL),
        (masks_without_target_padding, NO_TARGET_PADDING),
        (masks_causal_repeated, NO_TARGET_PADDING),
        (masks_causal_transposed, CAUSAL_TRANSPOSED),
        (masks_causal_triu, CAUSAL_TRANSPOSED),
        (masks_source_without_query_axis, SOURCE_MASK_SHAPE),
        (masks_source_compared_only, SOURCE_MASK_SHAPE),
        (masks_source_last_axis, SOURCE_MASK_SHAPE),
        (masks_source_column, SOURCE_MASK_SHAPE),
        (masks_target_padding_on_rows, TARGET_PADDING_ON_ROWS),
        (masks_target_padding_rows_indexed, TARGET_PADDING_ON_ROWS),
    ),
    *for_exercise(
        "ej3_paso",
        "train_step",
        (step_without_smoothing, NO_SMOOTHING),
        (step_loss_module_without_smoothing, NO_SMOOTHING),
        (step_nll_of_log_softmax, NO_SMOOTHING),
        (step_counting_padding, PADDING_COUNTED),
        (step_loss_module_counting_padding, PADDING_COUNTED),
        (step_mean_over_all_positions, PADDING_COUNTED),
        (step_sum_over_numel, PADDING_COUNTED),
        (step_without_scheduler, SCHEDULER_STEP),
        (step_scheduler_twice, SCHEDULER_STEP),
        (step_scheduler_without_call, SCHEDULER_STEP),
        (step_without_optimizer_step, OPTIMIZER_STEP),
        (step_optimizer_before_backward, OPTIMIZER_STEP),
        (step_returning_tensor, RETURN_FLOAT),
        (step_returning_detached, RETURN_FLOAT),
        (step_returning_item_method, RETURN_FLOAT),
        (step_target_tgt_in, TARGET_TGT_IN),
        (step_target_unpacked_twice, TARGET_TGT_IN),
        (step_batch_unpacked_swapped, SWAPPED_TARGETS),
        (step_inputs_swapped, SWAPPED_TARGETS),
        (step_without_train_mode, TRAIN_MODE),
        (step_train_without_call, TRAIN_MODE),
        (step_in_eval_mode, TRAIN_MODE),
        (step_without_zero_grad, NO_ZERO_GRAD),
        (step_zero_grad_without_call, NO_ZERO_GRAD),
        (step_zero_grad_after_backward, ZERO_GRAD_AFTER_BACKWARD),
        (step_zero_grad_before_step, ZERO_GRAD_AFTER_BACKWARD),
        (step_model_zero_grad_after_backward, ZERO_GRAD_AFTER_BACKWARD),
        (step_clipping_after_step, CLIP_LATE),
        (step_clipping_before_backward, CLIP_LATE),
        (step_clipping_loss_gradient_late, CLIP_LATE),
        (step_clipping_each_parameter, CLIP_PER_PARAMETER),
        (step_clipping_each_by_hand, CLIP_PER_PARAMETER),
        (step_clipping_by_value, CLIP_PER_PARAMETER),
        (step_clipping_to_one, CLIP_FIXED),
        (step_clipping_max_norm_one, CLIP_FIXED),
    ),
    *for_exercise(
        "ej4_evaluacion",
        "evaluate",
        (evaluate_mean_of_batch_means, MEAN_OF_MEANS),
        (evaluate_stacked_batch_means, MEAN_OF_MEANS),
        (evaluate_counting_batches, MEAN_OF_MEANS),
        (evaluate_with_smoothing, EVAL_SMOOTHING),
        (evaluate_smoothed_helper, EVAL_SMOOTHING),
        (evaluate_left_in_eval_mode, MODE_RESTORED),
        (evaluate_restoring_too_late, MODE_RESTORED),
        (evaluate_without_restoring, MODE_RESTORED),
        (evaluate_ending_in_train_mode, MODE_RESTORED),
        (evaluate_pair_swapped, PAIR_ORDER),
        (evaluate_returning_exp_first, PAIR_ORDER),
        (evaluate_counting_padding, PADDING_COUNTED),
        (evaluate_loss_module_counting_padding, PADDING_COUNTED),
        (evaluate_dividing_by_all_positions, PADDING_COUNTED),
        (evaluate_counting_every_target, PADDING_COUNTED),
        (evaluate_target_tgt_in, TARGET_TGT_IN),
        (evaluate_target_unpacked_twice, TARGET_TGT_IN),
        (evaluate_perplexity_base_2, PERPLEXITY_BASE),
        (evaluate_perplexity_base_10, PERPLEXITY_BASE),
        (evaluate_perplexity_exp2, PERPLEXITY_BASE),
        (evaluate_with_gradients, NO_GRAD),
        (evaluate_no_grad_without_with, NO_GRAD),
        (evaluate_detaching_the_loss, NO_GRAD),
        (evaluate_without_eval_mode, EVAL_MODE),
        (evaluate_eval_without_call, EVAL_MODE),
        (evaluate_eval_after_the_loop, EVAL_MODE),
    ),
    *for_exercise(
        "ej5_traduccion",
        "greedy_translate",
        (translate_without_source_mask, BATCH_MASK),
        (translate_with_full_mask, BATCH_MASK),
        (translate_mask_of_bos, BATCH_MASK),
        (translate_returning_ids, RETURN_STR),
        (translate_returning_rows, RETURN_STR),
        (translate_returning_tokens, RETURN_STR),
        (translate_one_string, ONE_PER_SENTENCE),
        (translate_lines_joined, ONE_PER_SENTENCE),
        (translate_first_only, ONE_PER_SENTENCE),
        (translate_in_training_mode, TRANSLATE_EVAL),
        (translate_eval_without_call, TRANSLATE_EVAL),
        (translate_eval_after_decoding, TRANSLATE_EVAL),
    ),
    *for_exercise(
        "ej6_bleu",
        "corpus_bleu",
        (bleu_lowercase, LOWERCASE),
        (bleu_lowering_both, LOWERCASE),
        (bleu_metric_lowercase, LOWERCASE),
        (bleu_mean_of_sentences, SENTENCE_MEAN),
        (bleu_sentence_average, SENTENCE_MEAN),
        (bleu_metric_sentence_scores, SENTENCE_MEAN),
        (bleu_fraction, BLEU_FRACTION),
        (bleu_metric_fraction, BLEU_FRACTION),
        (bleu_references_unwrapped, REFERENCES_UNWRAPPED),
        (bleu_metric_references_unwrapped, REFERENCES_UNWRAPPED),
        (bleu_arguments_swapped, BLEU_SWAPPED),
        (bleu_metric_arguments_swapped, BLEU_SWAPPED),
        (bleu_parameters_swapped, BLEU_SWAPPED),
        (bleu_returning_object, BLEU_SCORE),
        (bleu_returning_text, BLEU_SCORE),
    ),
    *for_exercise(
        "ej7_archivo",
        "translate_test_set",
        (file_bleu_against_german, BLEU_GERMAN),
        (file_bleu_against_sources, BLEU_GERMAN),
        (file_bleu_unpacked_in_order, BLEU_GERMAN),
        (file_bleu_arguments_swapped, BLEU_SWAPPED),
        (file_bleu_keywords_swapped, BLEU_SWAPPED),
        (file_bleu_of_token_ids, BLEU_TOKENS),
        (file_bleu_of_batch_ids, BLEU_TOKENS),
        (file_writing_references, REFERENCES_WRITTEN),
        (file_writing_targets_text, REFERENCES_WRITTEN),
        (file_writing_sources, SOURCES_WRITTEN),
        (file_writing_sources_by_index, SOURCES_WRITTEN),
        (file_without_last_newline, LAST_NEWLINE),
        (file_newline_between_lines, LAST_NEWLINE),
    ),
]
