"""Errores típicos del laboratorio 6 (el Transformer completo), como mutantes de la referencia.

Cada mutante es la referencia (``course.reference.model`` y ``course.reference.training``)
con un solo error realista. El código de un mutante vale tanto como la respuesta: este
módulo nunca llega al estudiante.
"""

import dataclasses
import math
from collections.abc import Callable

import torch
from torch import nn

from course import mistakes
from course.mistakes import Mistake, for_exercise
from course.mistakes import model_forms as forms
from course.reference import model as ref
from course.reference import training as ref_training
from course.reference.attention import causal_mask
from course.student import checks

LAB = "06_transformer"
PAD_IDX, BOS_IDX, EOS_IDX, NUM_SPECIAL = 0, 1, 2, 3


# --- ejercicio 1: el modelo ensamblado ---------------------------------------------------


class WithoutPositional(ref.Transformer):
    def encode(self, src, src_mask):
        return self.encoder(self.src_embed(src), src_mask)

    def decode(self, memory, src_mask, tgt, tgt_mask):
        return self.decoder(self.tgt_embed(tgt), memory, tgt_mask, src_mask)


class ScaledTwice(ref.Transformer):
    def encode(self, src, src_mask):
        scale = math.sqrt(self.config.d_model)
        return self.encoder(self.positional(self.src_embed(src) * scale), src_mask)

    def decode(self, memory, src_mask, tgt, tgt_mask):
        scale = math.sqrt(self.config.d_model)
        x = self.positional(self.tgt_embed(tgt) * scale)
        return self.decoder(x, memory, tgt_mask, src_mask)


class EncodeWithoutMask(ref.Transformer):
    def encode(self, src, src_mask):
        return self.encoder(self.positional(self.src_embed(src)), None)


class CrossAttentionWithoutMask(ref.Transformer):
    def decode(self, memory, src_mask, tgt, tgt_mask):
        return self.decoder(self.positional(self.tgt_embed(tgt)), memory, tgt_mask, None)


class DecodeWithoutCausalMask(ref.Transformer):
    def decode(self, memory, src_mask, tgt, tgt_mask):
        return self.decoder(self.positional(self.tgt_embed(tgt)), memory, None, src_mask)


class DecodeReturnsOutputOnly(ref.Transformer):
    def decode(self, memory, src_mask, tgt, tgt_mask):
        out, _ = super().decode(memory, src_mask, tgt, tgt_mask)
        return out

    def forward(self, src, tgt, src_mask, tgt_mask):
        memory = self.encode(src, src_mask)
        return self.generator(self.decode(memory, src_mask, tgt, tgt_mask))


class SoftmaxInForward(ref.Transformer):
    def forward(self, src, tgt, src_mask, tgt_mask):
        return super().forward(src, tgt, src_mask, tgt_mask).softmax(dim=-1)


class LogSoftmaxInForward(ref.Transformer):
    def forward(self, src, tgt, src_mask, tgt_mask):
        return super().forward(src, tgt, src_mask, tgt_mask).log_softmax(dim=-1)


class UntiedWeights(ref.Transformer):
    def __init__(self, config):
        super().__init__(config)
        if config.tie_weights:
            self.generator.weight = nn.Parameter(self.tgt_embed.embedding.weight.detach().clone())


class WithoutXavier(ref.Transformer):
    def __init__(self, config):
        nn.Module.__init__(self)
        c = self.config = config
        self.src_embed = ref.TokenEmbedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = ref.TokenEmbedding(c.tgt_vocab_size, c.d_model)
        self.positional = ref.PositionalEncoding(c.d_model, c.dropout, c.max_len)
        encoder_layer = ref.EncoderLayer(c.d_model, c.num_heads, c.d_ff, c.dropout, c.norm_first)
        decoder_layer = ref.DecoderLayer(c.d_model, c.num_heads, c.d_ff, c.dropout, c.norm_first)
        self.encoder = ref.Encoder(encoder_layer, c.num_encoder_layers)
        self.decoder = ref.Decoder(decoder_layer, c.num_decoder_layers)
        self.generator = nn.Linear(c.d_model, c.tgt_vocab_size)
        if c.tie_weights:
            self.generator.weight = self.tgt_embed.embedding.weight


class SwappedLayerCounts(ref.Transformer):
    def __init__(self, config):
        swapped = dataclasses.replace(
            config,
            num_encoder_layers=config.num_decoder_layers,
            num_decoder_layers=config.num_encoder_layers,
        )
        super().__init__(swapped)
        self.config = config


# --- ejercicio 2: los parámetros con una fórmula ----------------------------------------


def _count(config, *, attention_bias=True, final_norms=True, decoder_norms=3, tie_aware=True):
    c = config
    D, d_ff = c.d_model, c.d_ff
    attention = 4 * (D * D + D) if attention_bias else 4 * D * D
    feed_forward = 2 * D * d_ff + d_ff + D
    norm = 2 * D
    encoder = c.num_encoder_layers * (attention + feed_forward + 2 * norm)
    decoder = c.num_decoder_layers * (2 * attention + feed_forward + decoder_norms * norm)
    final = 2 * norm if c.norm_first and final_norms else 0
    embeddings = (c.src_vocab_size + c.tgt_vocab_size) * D
    tied = c.tie_weights and tie_aware
    generator = c.tgt_vocab_size + (0 if tied else c.tgt_vocab_size * D)
    return encoder + decoder + final + embeddings + generator


def count_without_final_norms(config):
    return _count(config, final_norms=False)


def count_ignoring_tie(config):
    return _count(config, tie_aware=False)


def count_without_attention_biases(config):
    return _count(config, attention_bias=False)


def count_decoder_with_two_norms(config):
    return _count(config, decoder_norms=2)


def count_final_norms_once(config):
    return _count(config) - (2 * config.d_model if config.norm_first else 0)


# --- ejercicios 3 y 4: las máscaras ------------------------------------------------------


def src_mask_inverted(src, pad_idx):
    return (src == pad_idx).unsqueeze(1)


def src_mask_without_query_axis(src, pad_idx):
    return src != pad_idx


def src_mask_wrong_axis(src, pad_idx):
    return (src != pad_idx).unsqueeze(-1)


def src_mask_pad_zero(src, pad_idx):
    return (src != 0).unsqueeze(1)


def tgt_mask_without_causal(tgt, pad_idx):
    return (tgt != pad_idx).unsqueeze(1).expand(-1, tgt.size(1), -1)


def tgt_mask_without_padding(tgt, pad_idx):
    return causal_mask(tgt.size(1), device=tgt.device).expand(tgt.size(0), -1, -1)


def tgt_mask_transposed_causal(tgt, pad_idx):
    return (tgt != pad_idx).unsqueeze(1) & causal_mask(tgt.size(1), device=tgt.device).T


def tgt_mask_padding_rows(tgt, pad_idx):
    return (tgt != pad_idx).unsqueeze(2) & causal_mask(tgt.size(1), device=tgt.device)


def tgt_mask_pad_zero(tgt, pad_idx):
    return ref.make_tgt_mask(tgt, 0)


def src_mask_inverted_eq(src, pad_idx):
    return src.eq(pad_idx)[:, None, :]


def src_mask_pad_zero_bool(src, pad_idx):
    return src.bool().unsqueeze(-2)


def tgt_mask_or(tgt, pad_idx):
    return (tgt != pad_idx).unsqueeze(1) | causal_mask(tgt.size(1), device=tgt.device)


def tgt_mask_triu(tgt, pad_idx):
    size = tgt.size(1)
    upper = torch.ones(size, size, dtype=torch.bool, device=tgt.device).triu()
    return (tgt != pad_idx).unsqueeze(1) & upper


def tgt_mask_inverted(tgt, pad_idx):
    return ~ref.make_tgt_mask(tgt, pad_idx)


# --- ejercicio 5: decodificación voraz ---------------------------------------------------


def _greedy(
    model,
    src,
    src_mask,
    max_len,
    bos_idx,
    eos_idx,
    pad_idx,
    *,
    tgt_mask=True,
    fill=True,
    steps=None,
    position=-1,
    stop=True,
    accumulate=True,
):
    B = src.size(0)
    memory = model.encode(src, src_mask)
    ys = torch.full((B, 1), bos_idx, dtype=torch.long, device=src.device)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len - 1 if steps is None else steps):
        mask = causal_mask(ys.size(1), device=src.device) if tgt_mask else None
        out, _ = model.decode(memory, src_mask, ys, mask)
        next_token = model.generator(out[:, position]).argmax(dim=-1)
        if fill:
            next_token = next_token.masked_fill(finished, pad_idx)
        ys = torch.cat([ys, next_token.unsqueeze(1)], dim=1)
        finished = finished | (next_token == eos_idx) if accumulate else next_token == eos_idx
        if stop and finished.all():
            break
    return ys


@torch.no_grad()
def greedy_without_tgt_mask(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx=PAD_IDX):
    return _greedy(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx, tgt_mask=False)


@torch.no_grad()
def greedy_without_pad_fill(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx=PAD_IDX):
    return _greedy(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx, fill=False)


@torch.no_grad()
def greedy_max_len_steps(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx=PAD_IDX):
    return _greedy(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx, steps=max_len)


@torch.no_grad()
def greedy_first_position(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx=PAD_IDX):
    return _greedy(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx, position=0)


@torch.no_grad()
def greedy_without_early_stop(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx=PAD_IDX):
    return _greedy(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx, stop=False)


@torch.no_grad()
def greedy_forgets_finished(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx=PAD_IDX):
    return _greedy(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx, accumulate=False)


# --- ejercicio 6: los lotes de la tarea de copia ----------------------------------------


def batch_with_special_symbols(batch_size, seq_len, vocab_size, generator):
    src = torch.randint(0, vocab_size, (batch_size, seq_len), generator=generator)
    return src, _framed(src)


def batch_without_last_symbol(batch_size, seq_len, vocab_size, generator):
    src = torch.randint(NUM_SPECIAL, vocab_size - 1, (batch_size, seq_len), generator=generator)
    return src, _framed(src)


def batch_bos_eos_swapped(batch_size, seq_len, vocab_size, generator):
    src = torch.randint(NUM_SPECIAL, vocab_size, (batch_size, seq_len), generator=generator)
    eos = torch.full((batch_size, 1), EOS_IDX)
    bos = torch.full((batch_size, 1), BOS_IDX)
    return src, torch.cat([eos, src, bos], dim=1)


def batch_float_target(batch_size, seq_len, vocab_size, generator):
    src = torch.randint(NUM_SPECIAL, vocab_size, (batch_size, seq_len), generator=generator)
    bos = torch.ones(batch_size, 1) * BOS_IDX
    eos = torch.ones(batch_size, 1) * EOS_IDX
    return src, torch.cat([bos, src, eos], dim=1)


def batch_without_generator(batch_size, seq_len, vocab_size, generator):
    src = torch.randint(NUM_SPECIAL, vocab_size, (batch_size, seq_len))
    return src, _framed(src)


def _framed(src):
    bos = torch.full((src.size(0), 1), BOS_IDX)
    eos = torch.full((src.size(0), 1), EOS_IDX)
    return torch.cat([bos, src, eos], dim=1)


# --- ejercicio 7: entropía cruzada con suavizado ----------------------------------------


def _smoothed(logits, target, smoothing, ignore_index, *, reduce="mean", keep_pad=False,
              uniform="all", log_probs=None):  # fmt: skip
    V = logits.size(-1)
    flat = logits.reshape(-1, V)
    log_p = flat.log_softmax(dim=-1) if log_probs is None else log_probs(flat)
    target = target.reshape(-1)
    keep = torch.ones_like(target, dtype=torch.bool) if keep_pad else target != ignore_index
    safe = target.masked_fill(target == ignore_index, 0).unsqueeze(1)
    nll = -log_p.gather(1, safe).squeeze(1)
    if uniform == "others":
        spread = (-log_p.sum(dim=-1) - nll) / (V - 1)
    elif uniform == "sum":
        spread = -log_p.sum(dim=-1)
    else:
        spread = -log_p.mean(dim=-1)
    loss = (1.0 - smoothing) * nll + smoothing * spread
    if reduce == "sum":
        return (loss * keep).sum()
    if reduce == "all":
        return (loss * keep).sum() / keep.numel()
    return (loss * keep).sum() / keep.sum()


def loss_without_ignore_index(logits, target, smoothing=0.0, ignore_index=-100):
    V = logits.size(-1)
    return nn.functional.cross_entropy(
        logits.reshape(-1, V), target.reshape(-1), label_smoothing=smoothing
    )


def loss_summed(logits, target, smoothing=0.0, ignore_index=-100):
    return _smoothed(logits, target, smoothing, ignore_index, reduce="sum")


def loss_mean_over_all(logits, target, smoothing=0.0, ignore_index=-100):
    return _smoothed(logits, target, smoothing, ignore_index, reduce="all")


def loss_counts_padding(logits, target, smoothing=0.0, ignore_index=-100):
    return _smoothed(logits, target, smoothing, ignore_index, keep_pad=True)


def loss_smoothing_over_others(logits, target, smoothing=0.0, ignore_index=-100):
    return _smoothed(logits, target, smoothing, ignore_index, uniform="others")


def loss_smoothing_summed(logits, target, smoothing=0.0, ignore_index=-100):
    return _smoothed(logits, target, smoothing, ignore_index, uniform="sum")


def loss_log_of_softmax(logits, target, smoothing=0.0, ignore_index=-100):
    return _smoothed(
        logits, target, smoothing, ignore_index, log_probs=lambda x: x.softmax(dim=-1).log()
    )


# --- ejercicio 8: el optimizador ---------------------------------------------------------


def optimizer_ignores_weight_decay(model, lr, weight_decay=0.0):
    return torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9)


def optimizer_adam(model, lr, weight_decay=0.0):
    return torch.optim.Adam(
        model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9, weight_decay=weight_decay
    )


def optimizer_default_betas(model, lr, weight_decay=0.0):
    return torch.optim.AdamW(model.parameters(), lr=lr, eps=1e-9, weight_decay=weight_decay)


def optimizer_default_eps(model, lr, weight_decay=0.0):
    return torch.optim.AdamW(
        model.parameters(), lr=lr, betas=(0.9, 0.98), weight_decay=weight_decay
    )


def optimizer_ignores_lr(model, lr, weight_decay=0.0):
    return torch.optim.AdamW(
        model.parameters(), betas=(0.9, 0.98), eps=1e-9, weight_decay=weight_decay
    )


# --- ejercicios 9 y 10: los esquemas de tasa ---------------------------------------------


def noam_without_model_scale(step, d_model, warmup):
    return min(step**-0.5, step * warmup**-1.5)


def noam_with_max(step, d_model, warmup):
    return d_model**-0.5 * max(step**-0.5, step * warmup**-1.5)


def noam_warmup_exponent(step, d_model, warmup):
    return d_model**-0.5 * min(step**-0.5, step * warmup**-0.5)


def noam_times_sqrt_d(step, d_model, warmup):
    return d_model**0.5 * min(step**-0.5, step * warmup**-1.5)


def cosine_without_clamp(step, warmup, total_steps):
    if step <= warmup:
        return step / warmup
    progress = (step - warmup) / max(1, total_steps - warmup)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def cosine_over_total(step, warmup, total_steps):
    if step <= warmup:
        return step / warmup
    progress = min(1.0, (step - warmup) / total_steps)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def cosine_warmup_from_zero(step, warmup, total_steps):
    if step <= warmup:
        return (step - 1) / warmup
    return ref_training.cosine_warmup_factor(step, warmup, total_steps)


def cosine_without_half(step, warmup, total_steps):
    if step <= warmup:
        return step / warmup
    progress = min(1.0, (step - warmup) / max(1, total_steps - warmup))
    return 1.0 + math.cos(math.pi * progress)


# --- ejercicio 11: el bucle de entrenamiento ---------------------------------------------


def _train(model, steps, batch_size, seq_len, lr, generator, on_step, *, scheduler_step=True,
           zero_grad=True, smoothing=0.0, shift=True, first_step=1, item=True):  # fmt: skip
    model.train()
    optimizer = ref_training.make_optimizer(model, lr)
    warmup = max(1, steps // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda i: ref_training.cosine_warmup_factor(i + 1, warmup, steps)
    )
    vocab_size = model.generator.out_features
    losses = []
    for step in range(first_step, steps + first_step):
        src, tgt = ref_training.copy_task_batch(batch_size, seq_len, vocab_size, generator)
        tgt_in, tgt_out = (tgt[:, :-1], tgt[:, 1:]) if shift else (tgt[:, :-1], tgt[:, :-1])
        src_mask = ref.make_src_mask(src, PAD_IDX)
        logits = model(src, tgt_in, src_mask, ref.make_tgt_mask(tgt_in, PAD_IDX))
        loss = ref_training.label_smoothed_cross_entropy(logits, tgt_out, smoothing, PAD_IDX)
        if zero_grad:
            optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if scheduler_step:
            scheduler.step()
        losses.append(loss.item() if item else loss.detach())
        if on_step is not None:
            on_step(step, loss.item())
    return losses


def train_without_scheduler_step(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    return _train(model, steps, batch_size, seq_len, lr, generator, on_step, scheduler_step=False)


def train_without_zero_grad(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    return _train(model, steps, batch_size, seq_len, lr, generator, on_step, zero_grad=False)


def train_with_smoothing(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    return _train(model, steps, batch_size, seq_len, lr, generator, on_step, smoothing=0.1)


def train_without_shift(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    return _train(model, steps, batch_size, seq_len, lr, generator, on_step, shift=False)


def train_steps_from_zero(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    return _train(model, steps, batch_size, seq_len, lr, generator, on_step, first_step=0)


def train_returns_tensors(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    return _train(model, steps, batch_size, seq_len, lr, generator, on_step, item=False)


def train_leaves_eval(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    losses = _train(model, steps, batch_size, seq_len, lr, generator, on_step)
    model.eval()
    return losses


# mensajes que comparten varios errores: uno por idea, en todas sus formas
NO_POSITIONAL = "¿Falta la codificación posicional (self.positional) en encode o decode?"
SCALED_TWICE = "¿Multiplicas por √D otra vez? TokenEmbedding ya lo hace."
ENCODE_NO_MASK = "¿Pasas src_mask al codificador?"
MEMORY_NO_MASK = "¿Pasas src_mask a la atención cruzada del decodificador (su último argumento)?"
NO_TGT_MASK = "¿Pasas tgt_mask al decodificador?"
MASKS_SWAPPED = (
    "¿Pasas las máscaras en su orden? Decoder recibe (x, memory, tgt_mask, memory_mask)"
    " y decode, (memory, src_mask, tgt, tgt_mask)."
)
DECODE_PAIR = "decode debe devolver la pareja (salida, pesos de la atención cruzada)"
SOFTMAX = "¿Aplicas softmax al final? forward devuelve logits."
LOG_SOFTMAX = "¿Aplicas log_softmax al final? forward devuelve logits sin normalizar."
UNTIED = "el generador debe usar el mismo tensor que tgt_embed.embedding"
XAVIER = "no tiene la inicialización de Xavier"
LAYER_COUNTS = "Revisa el número de capas de cada pila"
FINAL_NORMS = (
    "¿Cuentas las LayerNorm finales en pre-norm? Hay una al final de cada pila (dos en"
    " total), de 2D parámetros cada una."
)
TIE = "¿Tienes en cuenta tie_weights?"
ATTENTION_BIASES = "¿Cuentas los sesgos de las cuatro proyecciones de la atención?"
DECODER_NORMS = "¿Cuentas las tres LayerNorm de cada capa del decodificador?"
NO_QUERY_AXIS = "¿Falta el eje de las consultas? La forma es (B, 1, T_k)."
WRONG_AXIS = "¿Añades el eje de tamaño 1 en el sitio equivocado? La forma es (B, 1, T_k)."
NO_CAUSAL = "Falta la parte causal: combina el relleno con la máscara causal."
NO_PADDING = "Falta la parte de relleno."
PADDING_ROWS = (
    "¿Ocultas las filas de relleno en vez de las columnas? El relleno es una clave"
    " que nadie debe mirar: (B, 1, T_q)."
)
MASKS_OR = (
    "¿Combinas relleno y causal con `|`? Una clave se puede atender solo si cumple"
    " las dos condiciones: `&`."
)
GREEDY_NO_MASK = (
    "¿Pasas la máscara causal a decode? Sin ella las posiciones anteriores ven las"
    " siguientes y el modelo no calcula lo mismo que al entrenar."
)
GREEDY_NO_FILL = "¿Pones pad_idx en las frases que ya terminaron?"
GREEDY_MAX_LEN = "¿Das max_len pasos? La salida, contando BOS, tiene como mucho max_len tokens."
GREEDY_LAST = "¿Tomas la salida de la última posición, out[:, -1]?"
GREEDY_STOP = "¿Sales del bucle cuando todas las frases han terminado?"
GREEDY_FINISHED = "¿Acumulas las frases terminadas (finished |= ...) en vez de sustituirlas?"
GREEDY_GROWS = (
    "decode recibe siempre un destino de longitud 1: ¿añades cada token nuevo a ys"
    " (torch.cat) y decodificas con todo lo generado hasta ahora?"
)
SPECIAL_SYMBOLS = "¿Sorteas también los identificadores especiales 0, 1 y 2?"
UPPER_BOUND = "¿Sorteas en [3, V)? El límite superior de randint ya está excluido."
BOS_EOS = "¿Has cambiado BOS por EOS? El destino es [BOS, origen..., EOS]."
FLOAT_TARGET = "Se esperaba torch.int64 y se obtuvo torch.float32"
NO_GENERATOR = "¿pasas generator=generator a torch.randint?"
SUMMED = "¿Sumas sin dividir? Divide entre el número de posiciones que no son relleno."
MEAN_OVER_ALL = "¿Divides entre todas las posiciones? El relleno no cuenta en la media."
SPREAD_OTHERS = "¿Repartes ε solo entre las otras clases? El reparto uniforme incluye las V."
SPREAD_SUMMED = "¿Sumas ℓ_c sobre las clases? El término de suavizado es su media."
LOG_OF_SOFTMAX = "¿Calculas log(softmax(x))? Con logits grandes da -inf: usa log_softmax."
WEIGHT_DECAY = "¿Pasas weight_decay a AdamW?"
ADAMW = "Usa torch.optim.AdamW."
BETAS = "el artículo usa β₁ = 0.9 y β₂ = 0.98"
EPS = "el artículo usa ε = 1e-9"
LR = "¿Pasas lr a AdamW?"
NOAM_SCALE = "¿Falta el factor D^-0.5?"
NOAM_MAX = "¿Usas max en vez de min? El factor crece y después decae."
NOAM_WARMUP = "¿Usas warmup^-0.5? Revisa el exponente de warmup en la rama del calentamiento."
NOAM_TIMES = "¿Multiplicas por √D? El factor es D^-0.5: divide."
COSINE_CLAMP = (
    "¿Limitas el progreso a 1 (min)? Después de total_steps el factor debe quedarse en 0."
)
COSINE_TOTAL = "¿Divides entre total_steps? El progreso de la caída va de warmup a total_steps."
COSINE_ZERO = "¿Empiezas el calentamiento en 0? El paso cuenta desde 1: step / warmup."
COSINE_HALF = "¿Falta el ½ delante de (1 + cos)? El factor va de 1 a 0."
SCHEDULER = checks.TRAIN_SCHEDULER
ZERO_GRAD = checks.TRAIN_ZERO_GRAD
SMOOTHING = "¿Usas suavizado? En la copia la pérdida va sin suavizado (smoothing = 0)."
SHIFT = "¿Desplazas el destino? Se predice tgt[:, 1:] a partir de tgt[:, :-1]."
STEPS_FROM_ONE = "Llama a on_step(step, pérdida) con step = 1, 2, ..., steps."
FLOAT_LOSSES = "Devuelve una lista con una pérdida (float) por paso"
INVERTED_MASK = "La máscara está invertida: True = se puede atender."
TABLES = "¿Usas src_embed para el origen y tgt_embed para el destino?"
POSITIONAL_BUFFER = "¿Cuentas la codificación posicional? Es un buffer, no un parámetro: suma 0."
EMBEDDINGS_ONCE = "¿Cuentas los dos embeddings, el de origen (V_s·D) y el de destino (V_t·D)?"
GATHER_IGNORED = (
    "¿Cambias los objetivos ignorados por un índice válido (masked_fill) antes de gather?"
    " -100 no es una clase."
)
PAD_ZERO = "¿Usas pad_idx o das por hecho que el relleno es 0?"
CAUSAL_TRANSPOSED = "La parte causal está traspuesta: la fila i ve las columnas j ≤ i."
COUNTS_PADDING = "¿Cuentas las posiciones de relleno? Usa ignore_index."

MISTAKES = [
    *for_exercise(
        "ej1_transformer",
        "Transformer",
        (WithoutPositional, NO_POSITIONAL),
        (ScaledTwice, SCALED_TWICE),
        (EncodeWithoutMask, ENCODE_NO_MASK),
        (CrossAttentionWithoutMask, MEMORY_NO_MASK),
        (DecodeWithoutCausalMask, NO_TGT_MASK),
        (DecodeReturnsOutputOnly, DECODE_PAIR),
        (SoftmaxInForward, SOFTMAX),
        (LogSoftmaxInForward, LOG_SOFTMAX),
        (UntiedWeights, UNTIED),
        (WithoutXavier, XAVIER),
        (SwappedLayerCounts, LAYER_COUNTS),
    ),
    *for_exercise(
        "ej2_parametros",
        "num_parameters",
        (count_without_final_norms, FINAL_NORMS),
        (count_final_norms_once, FINAL_NORMS),
        (count_ignoring_tie, TIE),
        (count_without_attention_biases, ATTENTION_BIASES),
        (count_decoder_with_two_norms, DECODER_NORMS),
    ),
    *for_exercise(
        "ej3_mascara_origen",
        "make_src_mask",
        (src_mask_inverted, INVERTED_MASK),
        (src_mask_without_query_axis, NO_QUERY_AXIS),
        (src_mask_wrong_axis, WRONG_AXIS),
        (src_mask_pad_zero, PAD_ZERO),
    ),
    *for_exercise(
        "ej4_mascara_destino",
        "make_tgt_mask",
        (tgt_mask_without_causal, NO_CAUSAL),
        (tgt_mask_without_padding, NO_PADDING),
        (tgt_mask_transposed_causal, CAUSAL_TRANSPOSED),
        (tgt_mask_padding_rows, PADDING_ROWS),
        (tgt_mask_pad_zero, PAD_ZERO),
    ),
    *for_exercise(
        "ej5_voraz",
        "greedy_decode",
        (greedy_without_tgt_mask, GREEDY_NO_MASK),
        (greedy_without_pad_fill, GREEDY_NO_FILL),
        (greedy_max_len_steps, GREEDY_MAX_LEN),
        (greedy_first_position, GREEDY_LAST),
        (greedy_without_early_stop, GREEDY_STOP),
        (greedy_forgets_finished, GREEDY_FINISHED),
    ),
    *for_exercise(
        "ej6_lote_copia",
        "copy_task_batch",
        (batch_with_special_symbols, SPECIAL_SYMBOLS),
        (batch_without_last_symbol, UPPER_BOUND),
        (batch_bos_eos_swapped, BOS_EOS),
        (batch_float_target, FLOAT_TARGET),
        (batch_without_generator, NO_GENERATOR),
    ),
    *for_exercise(
        "ej7_perdida",
        "label_smoothed_cross_entropy",
        (loss_summed, SUMMED),
        (loss_mean_over_all, MEAN_OVER_ALL),
        (loss_counts_padding, COUNTS_PADDING),
        (loss_smoothing_over_others, SPREAD_OTHERS),
        (loss_smoothing_summed, SPREAD_SUMMED),
        (loss_log_of_softmax, LOG_OF_SOFTMAX),
    ),
    *for_exercise(
        "ej8_optimizador",
        "make_optimizer",
        (optimizer_ignores_weight_decay, WEIGHT_DECAY),
        (optimizer_adam, ADAMW),
        (optimizer_default_betas, BETAS),
        (optimizer_default_eps, EPS),
        (optimizer_ignores_lr, LR),
    ),
    *for_exercise(
        "ej9_noam",
        "noam_factor",
        (noam_without_model_scale, NOAM_SCALE),
        (noam_with_max, NOAM_MAX),
        (noam_warmup_exponent, NOAM_WARMUP),
        (noam_times_sqrt_d, NOAM_TIMES),
    ),
    *for_exercise(
        "ej10_coseno",
        "cosine_warmup_factor",
        (cosine_without_clamp, COSINE_CLAMP),
        (cosine_over_total, COSINE_TOTAL),
        (cosine_warmup_from_zero, COSINE_ZERO),
        (cosine_without_half, COSINE_HALF),
    ),
    *for_exercise(
        "ej11_entrenamiento",
        "train_copy_task",
        (train_without_scheduler_step, SCHEDULER),
        (train_without_zero_grad, ZERO_GRAD),
        (train_with_smoothing, SMOOTHING),
        (train_without_shift, SHIFT),
        (train_steps_from_zero, STEPS_FROM_ONE),
        (train_returns_tensors, FLOAT_LOSSES),
        (train_leaves_eval, "train_copy_task debe dejar el modelo en modo entrenamiento"),
    ),
    *for_exercise(
        "ej3_mascara_origen",
        "make_src_mask",
        (src_mask_inverted_eq, INVERTED_MASK),
        (src_mask_pad_zero_bool, PAD_ZERO),
    ),
    *for_exercise(
        "ej4_mascara_destino",
        "make_tgt_mask",
        (tgt_mask_or, MASKS_OR),
        (tgt_mask_triu, CAUSAL_TRANSPOSED),
        (tgt_mask_inverted, INVERTED_MASK),
    ),
    *for_exercise(
        "ej7_perdida",
        "label_smoothed_cross_entropy",
        (loss_without_ignore_index, COUNTS_PADDING),
    ),
    # Otras formas de las mismas ideas (course.mistakes.model_forms), con el mismo mensaje.
    *for_exercise(
        "ej1_transformer",
        "Transformer",
        (forms.PositionalMissingInEncode, NO_POSITIONAL),
        (forms.PositionalMissingInDecode, NO_POSITIONAL),
        (forms.ScaledTwiceInEncode, SCALED_TWICE),
        (forms.ScaledAfterPositional, SCALED_TWICE),
        (forms.EncoderCalledWithoutMask, ENCODE_NO_MASK),
        (forms.ForwardEncodesWithoutMask, ENCODE_NO_MASK),
        (forms.DecoderCalledWithoutMemoryMask, MEMORY_NO_MASK),
        (forms.ForwardDecodesWithoutMemoryMask, MEMORY_NO_MASK),
        (forms.DecoderWithoutTgtMaskKeyword, NO_TGT_MASK),
        (forms.ForwardDecodesWithoutTgtMask, NO_TGT_MASK),
        (forms.DecoderMasksSwapped, MASKS_SWAPPED),
        (forms.DecoderMasksSwappedKeywords, MASKS_SWAPPED),
        (forms.ForwardMasksSwapped, MASKS_SWAPPED),
        (forms.DecodeReturnsFirstOfPair, DECODE_PAIR),
        (forms.EncodeWithTargetTable, TABLES),
        (forms.DecodeWithSourceTable, TABLES),
        (forms.EmbeddingTablesSwapped, TABLES),
        (forms.SoftmaxFunctional, SOFTMAX),
        (forms.SoftmaxOverVocabularyAxis, SOFTMAX),
        (forms.LogSoftmaxFunctional, LOG_SOFTMAX),
        (forms.LogOfSoftmaxInForward, LOG_SOFTMAX),
        (forms.TieIgnored, UNTIED),
        (forms.TiedByData, UNTIED),
        (forms.TiedByCopy, UNTIED),
        (forms.XavierOnlyLinear, XAVIER),
        (forms.XavierNormal, XAVIER),
        (forms.EncoderLayersForBoth, LAYER_COUNTS),
        (forms.DecoderLayersForBoth, LAYER_COUNTS),
    ),
    *for_exercise(
        "ej2_parametros",
        "num_parameters",
        (forms.count_final_norms_never, FINAL_NORMS),
        (forms.count_final_norm_single, FINAL_NORMS),
        (forms.count_final_norm_of_encoder_only, FINAL_NORMS),
        (forms.count_generator_always, TIE),
        (forms.count_attention_weights_only, ATTENTION_BIASES),
        (forms.count_decoder_like_encoder, DECODER_NORMS),
        (forms.count_positional_table, POSITIONAL_BUFFER),
        (forms.count_positional_per_stack, POSITIONAL_BUFFER),
        (forms.count_target_embedding_only, EMBEDDINGS_ONCE),
        (forms.count_source_embedding_only, EMBEDDINGS_ONCE),
        (forms.count_larger_vocabulary_once, EMBEDDINGS_ONCE),
    ),
    *for_exercise(
        "ej3_mascara_origen",
        "make_src_mask",
        (forms.src_mask_inverted_where, INVERTED_MASK),
        (forms.src_mask_flat_ne, NO_QUERY_AXIS),
        (forms.src_mask_axis_two, WRONG_AXIS),
        (forms.src_mask_positive, PAD_ZERO),
    ),
    *for_exercise(
        "ej4_mascara_destino",
        "make_tgt_mask",
        (forms.tgt_mask_padding_repeated, NO_CAUSAL),
        (forms.tgt_mask_padding_and_ones, NO_CAUSAL),
        (forms.tgt_mask_causal_repeated, NO_PADDING),
        (forms.tgt_mask_tril_only, NO_PADDING),
        (forms.tgt_mask_causal_transposed, CAUSAL_TRANSPOSED),
        (forms.tgt_mask_padding_last_axis, PADDING_ROWS),
        (forms.tgt_mask_padding_rows_indexed, PADDING_ROWS),
        (forms.tgt_mask_positive, PAD_ZERO),
        (forms.tgt_mask_logical_or, MASKS_OR),
        (forms.tgt_mask_inverted_parts, INVERTED_MASK),
    ),
    *for_exercise(
        "ej5_voraz",
        "greedy_decode",
        (forms.greedy_all_true_mask, GREEDY_NO_MASK),
        (forms.greedy_while_without_mask, GREEDY_NO_MASK),
        (forms.greedy_while_without_fill, GREEDY_NO_FILL),
        (forms.greedy_while_up_to_max_len, GREEDY_MAX_LEN),
        (forms.greedy_select_first, GREEDY_LAST),
        (forms.greedy_steps_without_break, GREEDY_STOP),
        (forms.greedy_finished_from_last_column, GREEDY_FINISHED),
        (forms.greedy_decodes_only_bos, GREEDY_GROWS),
    ),
    *for_exercise(
        "ej6_lote_copia",
        "copy_task_batch",
        (forms.batch_whole_vocabulary, SPECIAL_SYMBOLS),
        (forms.batch_inclusive_upper_bound, UPPER_BOUND),
        (forms.batch_framed_eos_first, BOS_EOS),
        (forms.batch_float_full, FLOAT_TARGET),
        (forms.batch_fresh_generator, NO_GENERATOR),
    ),
    *for_exercise(
        "ej7_perdida",
        "label_smoothed_cross_entropy",
        (forms.loss_sum_of_kept, SUMMED),
        (forms.loss_zeroed_then_mean, MEAN_OVER_ALL),
        (forms.loss_plain_mean, COUNTS_PADDING),
        (forms.loss_functional_without_ignore, COUNTS_PADDING),
        (forms.loss_spread_over_others, SPREAD_OTHERS),
        (forms.loss_uniform_summed, SPREAD_SUMMED),
        (forms.loss_log_of_functional_softmax, LOG_OF_SOFTMAX),
        (forms.loss_manual_softmax, LOG_OF_SOFTMAX),
        (forms.loss_gather_raw_target, GATHER_IGNORED),
        (forms.loss_indexing_raw_target, GATHER_IGNORED),
        (forms.loss_one_hot_raw_target, GATHER_IGNORED),
    ),
    *for_exercise(
        "ej8_optimizador",
        "make_optimizer",
        (forms.optimizer_weight_decay_hardcoded, WEIGHT_DECAY),
        (forms.optimizer_adam_without_decay, ADAMW),
        (forms.optimizer_betas_of_adam, BETAS),
        (forms.optimizer_eps_1e8, EPS),
        (forms.optimizer_lr_hardcoded, LR),
    ),
    *for_exercise(
        "ej9_noam",
        "noam_factor",
        (forms.noam_without_d_factor, NOAM_SCALE),
        (forms.noam_max_of_branches, NOAM_MAX),
        (forms.noam_warmup_square_root, NOAM_WARMUP),
        (forms.noam_sqrt_d_times, NOAM_TIMES),
    ),
    *for_exercise(
        "ej10_coseno",
        "cosine_warmup_factor",
        (forms.cosine_progress_unclamped, COSINE_CLAMP),
        (forms.cosine_progress_without_max, COSINE_CLAMP),
        (forms.cosine_progress_over_total, COSINE_TOTAL),
        (forms.cosine_warmup_zero_based, COSINE_ZERO),
        (forms.cosine_warmup_shifted, COSINE_ZERO),
        (forms.cosine_without_halves, COSINE_HALF),
    ),
    *for_exercise(
        "ej11_entrenamiento",
        "train_copy_task",
        (forms.train_scheduler_after_loop, SCHEDULER),
        (forms.train_zero_grad_before_loop, ZERO_GRAD),
        (forms.train_zero_grad_after_backward, checks.TRAIN_ZERO_GRAD_LATE),
        (forms.train_step_before_backward, checks.TRAIN_STEP_EARLY),
        (forms.train_scheduler_before_step, checks.TRAIN_SCHEDULER_EARLY),
        (forms.train_smoothing_positional, SMOOTHING),
        (forms.train_target_is_input, SHIFT),
        (forms.train_full_target, SHIFT),
        (forms.train_enumerates_from_zero, STEPS_FROM_ONE),
        (forms.train_keeps_loss_tensors, FLOAT_LOSSES),
    ),
]


def of_exercise(exercise: str) -> list[Mistake]:
    """Los errores de ``exercise`` que no están apartados (:func:`course.mistakes.active`).

    Para las pruebas ocultas que miran ellas mismas cada mutante (números de Python, no
    tensores: :func:`messages_where`).
    """
    return mistakes.active(m for m in MISTAKES if m.exercise == exercise)


def messages_where(exercise: str, matches: Callable[[Callable], bool]) -> str:
    """Los mensajes, sin repetir, de los errores de ``exercise`` cuyo mutante cumple ``matches``.

    Para las pruebas ocultas de funciones que devuelven números de Python (la fórmula de
    los parámetros, las tasas): un mutante que se rompe con esas entradas no cuenta.
    """
    found: list[str] = []
    for mistake in of_exercise(exercise):
        try:
            hit = matches(mistake.mutant)
        except Exception:  # noqa: BLE001 (un mutante puede romperse con estas entradas)
            continue
        if hit and mistake.message not in found:
            found.append(mistake.message)
    return " ".join(found)


def miscounted_pieces(config) -> list[tuple[str, int]]:
    """``(mensaje, cuenta del error - cuenta correcta)`` de cada pieza de la tabla del
    ejercicio 2 que se cuenta de más o de menos, sea cual sea la forma de escribirlo."""
    c, D = config, config.d_model
    attention_layers = c.num_encoder_layers + 2 * c.num_decoder_layers
    return [
        (POSITIONAL_BUFFER, c.max_len * D),
        (POSITIONAL_BUFFER, 2 * c.max_len * D),
        (EMBEDDINGS_ONCE, -c.src_vocab_size * D),
        (EMBEDDINGS_ONCE, -c.tgt_vocab_size * D),
        (EMBEDDINGS_ONCE, -min(c.src_vocab_size, c.tgt_vocab_size) * D),
        (FINAL_NORMS, -4 * D * c.norm_first),
        (FINAL_NORMS, -2 * D * c.norm_first),
        (FINAL_NORMS, 4 * D * (not c.norm_first)),
        (TIE, c.tgt_vocab_size * D * c.tie_weights),
        (ATTENTION_BIASES, -4 * D * attention_layers),
        (DECODER_NORMS, -2 * D * c.num_decoder_layers),
    ]
