"""Otras formas de los errores del laboratorio 6: la misma idea escrita con otro código.

Cada función o clase de aquí repite una idea de ``course.mistakes.model`` (falta la
posición, √D dos veces, una máscara que no llega, el bucle voraz sin parar…) con otra
API, en otro sitio del código o dentro de otro método. Llevan el mismo mensaje que su
idea (``MISTAKES`` de ``course.mistakes.model``): así la prueba visible nombra la idea y
no solo el mutante que la escribió primero. Como el resto del catálogo, vale tanto como
la respuesta y nunca llega al estudiante.
"""

import dataclasses
import math

import torch
import torch.nn.functional as F
from torch import nn

from course.reference import model as ref
from course.reference import training as ref_training
from course.reference.attention import causal_mask

PAD_IDX, BOS_IDX, EOS_IDX, NUM_SPECIAL = 0, 1, 2, 3


# --- ejercicio 1: el modelo ensamblado ---------------------------------------------------


class PositionalMissingInEncode(ref.Transformer):
    def encode(self, src, src_mask):
        return self.encoder(self.src_embed(src), src_mask)


class PositionalMissingInDecode(ref.Transformer):
    def decode(self, memory, src_mask, tgt, tgt_mask):
        return self.decoder(self.tgt_embed(tgt), memory, tgt_mask, src_mask)


class ScaledTwiceInEncode(ref.Transformer):
    def encode(self, src, src_mask):
        x = self.src_embed(src) * self.config.d_model**0.5
        return self.encoder(self.positional(x), src_mask)


class ScaledAfterPositional(ref.Transformer):
    def encode(self, src, src_mask):
        x = self.positional(self.src_embed(src)) * math.sqrt(self.config.d_model)
        return self.encoder(x, src_mask)

    def decode(self, memory, src_mask, tgt, tgt_mask):
        x = self.positional(self.tgt_embed(tgt)) * math.sqrt(self.config.d_model)
        return self.decoder(x, memory, tgt_mask, src_mask)


class EncoderCalledWithoutMask(ref.Transformer):
    def encode(self, src, src_mask):
        return self.encoder(self.positional(self.src_embed(src)))


class ForwardEncodesWithoutMask(ref.Transformer):
    def forward(self, src, tgt, src_mask, tgt_mask):
        memory = self.encode(src, None)
        out, _ = self.decode(memory, src_mask, tgt, tgt_mask)
        return self.generator(out)


class DecoderCalledWithoutMemoryMask(ref.Transformer):
    def decode(self, memory, src_mask, tgt, tgt_mask):
        return self.decoder(self.positional(self.tgt_embed(tgt)), memory, tgt_mask)


class ForwardDecodesWithoutMemoryMask(ref.Transformer):
    def forward(self, src, tgt, src_mask, tgt_mask):
        memory = self.encode(src, src_mask)
        out, _ = self.decode(memory, None, tgt, tgt_mask)
        return self.generator(out)


class DecoderWithoutTgtMaskKeyword(ref.Transformer):
    def decode(self, memory, src_mask, tgt, tgt_mask):
        x = self.positional(self.tgt_embed(tgt))
        return self.decoder(x, memory, memory_mask=src_mask)


class ForwardDecodesWithoutTgtMask(ref.Transformer):
    def forward(self, src, tgt, src_mask, tgt_mask):
        memory = self.encode(src, src_mask)
        out, _ = self.decode(memory, src_mask, tgt, None)
        return self.generator(out)


class DecoderMasksSwapped(ref.Transformer):
    def decode(self, memory, src_mask, tgt, tgt_mask):
        return self.decoder(self.positional(self.tgt_embed(tgt)), memory, src_mask, tgt_mask)


class DecoderMasksSwappedKeywords(ref.Transformer):
    def decode(self, memory, src_mask, tgt, tgt_mask):
        x = self.positional(self.tgt_embed(tgt))
        return self.decoder(x, memory, tgt_mask=src_mask, memory_mask=tgt_mask)


class ForwardMasksSwapped(ref.Transformer):
    def forward(self, src, tgt, src_mask, tgt_mask):
        memory = self.encode(src, src_mask)
        out, _ = self.decode(memory, tgt_mask, tgt, src_mask)
        return self.generator(out)


class EncodeWithTargetTable(ref.Transformer):
    def encode(self, src, src_mask):
        return self.encoder(self.positional(self.tgt_embed(src)), src_mask)


class DecodeWithSourceTable(ref.Transformer):
    def decode(self, memory, src_mask, tgt, tgt_mask):
        return self.decoder(self.positional(self.src_embed(tgt)), memory, tgt_mask, src_mask)


class EmbeddingTablesSwapped(ref.Transformer):
    def encode(self, src, src_mask):
        return self.encoder(self.positional(self.tgt_embed(src)), src_mask)

    def decode(self, memory, src_mask, tgt, tgt_mask):
        return self.decoder(self.positional(self.src_embed(tgt)), memory, tgt_mask, src_mask)


class DecodeReturnsFirstOfPair(ref.Transformer):
    def decode(self, memory, src_mask, tgt, tgt_mask):
        return self.decoder(self.positional(self.tgt_embed(tgt)), memory, tgt_mask, src_mask)[0]

    def forward(self, src, tgt, src_mask, tgt_mask):
        return self.generator(self.decode(self.encode(src, src_mask), src_mask, tgt, tgt_mask))


class SoftmaxFunctional(ref.Transformer):
    def forward(self, src, tgt, src_mask, tgt_mask):
        return F.softmax(super().forward(src, tgt, src_mask, tgt_mask), dim=-1)


class SoftmaxOverVocabularyAxis(ref.Transformer):
    def forward(self, src, tgt, src_mask, tgt_mask):
        memory = self.encode(src, src_mask)
        out, _ = self.decode(memory, src_mask, tgt, tgt_mask)
        return torch.softmax(self.generator(out), dim=2)


class LogSoftmaxFunctional(ref.Transformer):
    def forward(self, src, tgt, src_mask, tgt_mask):
        return F.log_softmax(super().forward(src, tgt, src_mask, tgt_mask), dim=-1)


class LogOfSoftmaxInForward(ref.Transformer):
    def forward(self, src, tgt, src_mask, tgt_mask):
        return torch.log(super().forward(src, tgt, src_mask, tgt_mask).softmax(dim=-1))


class TieIgnored(ref.Transformer):
    """Sin el paso 6: el generador conserva su propio peso aunque ``tie_weights``."""

    def __init__(self, config):
        super().__init__(config)
        if config.tie_weights:
            self.generator.weight = nn.Parameter(torch.empty_like(self.generator.weight))
            nn.init.xavier_uniform_(self.generator.weight)


class TiedByData(ref.Transformer):
    def __init__(self, config):
        super().__init__(config)
        if config.tie_weights:
            self.generator.weight = nn.Parameter(self.tgt_embed.embedding.weight.data)


class TiedByCopy(ref.Transformer):
    def __init__(self, config):
        super().__init__(config)
        if config.tie_weights:
            self.generator.weight = nn.Parameter(torch.empty_like(self.generator.weight))
            with torch.no_grad():
                self.generator.weight.copy_(self.tgt_embed.embedding.weight)


def _reinit(model, init):
    """Reinicializa con ``init`` los pesos de dos o más ejes de ``model``."""
    for p in model.parameters():
        if p.dim() > 1:
            init(p)


class XavierOnlyLinear(ref.Transformer):
    def __init__(self, config):
        super().__init__(config)
        _reinit(self, nn.init.normal_)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)


class XavierNormal(ref.Transformer):
    def __init__(self, config):
        super().__init__(config)
        _reinit(self, nn.init.xavier_normal_)


class EncoderLayersForBoth(ref.Transformer):
    def __init__(self, config):
        same = dataclasses.replace(config, num_decoder_layers=config.num_encoder_layers)
        super().__init__(same)
        self.config = config


class DecoderLayersForBoth(ref.Transformer):
    def __init__(self, config):
        same = dataclasses.replace(config, num_encoder_layers=config.num_decoder_layers)
        super().__init__(same)
        self.config = config


# --- ejercicio 2: los parámetros con una fórmula ----------------------------------------


def _layers(config, attention, norms_per_decoder_layer=3):
    c = config
    feed_forward = 2 * c.d_model * c.d_ff + c.d_ff + c.d_model
    encoder = c.num_encoder_layers * (attention + feed_forward + 2 * 2 * c.d_model)
    decoder = c.num_decoder_layers * (
        2 * attention + feed_forward + norms_per_decoder_layer * 2 * c.d_model
    )
    return encoder + decoder


def count_final_norms_never(config):
    c = config
    D = c.d_model
    vocab = (c.src_vocab_size + c.tgt_vocab_size) * D
    head = c.tgt_vocab_size if c.tie_weights else c.tgt_vocab_size * (D + 1)
    return _layers(c, 4 * (D * D + D)) + vocab + head


def count_final_norm_single(config):
    c = config
    D = c.d_model
    final = 2 * D if c.norm_first else 0
    head = c.tgt_vocab_size if c.tie_weights else c.tgt_vocab_size * (D + 1)
    return _layers(c, 4 * (D * D + D)) + final + (c.src_vocab_size + c.tgt_vocab_size) * D + head


def count_final_norm_of_encoder_only(config):
    c = config
    D = c.d_model
    encoder_norm = 2 * D if c.norm_first else 0  # el decodificador también tiene la suya
    head = c.tgt_vocab_size if c.tie_weights else c.tgt_vocab_size * (D + 1)
    vocab = (c.src_vocab_size + c.tgt_vocab_size) * D
    return _layers(c, 4 * (D * D + D)) + encoder_norm + vocab + head


def count_generator_always(config):
    c = config
    D = c.d_model
    final = 4 * D if c.norm_first else 0
    generator = D * c.tgt_vocab_size + c.tgt_vocab_size
    return (
        _layers(c, 4 * (D * D + D)) + final + (c.src_vocab_size + c.tgt_vocab_size) * D + generator
    )


def count_attention_weights_only(config):
    c = config
    D = c.d_model
    final = 4 * D if c.norm_first else 0
    head = c.tgt_vocab_size if c.tie_weights else c.tgt_vocab_size * (D + 1)
    return _layers(c, 4 * D**2) + final + (c.src_vocab_size + c.tgt_vocab_size) * D + head


def count_decoder_like_encoder(config):
    c = config
    D = c.d_model
    final = 4 * D if c.norm_first else 0
    head = c.tgt_vocab_size if c.tie_weights else c.tgt_vocab_size * (D + 1)
    layers = _layers(c, 4 * (D * D + D), norms_per_decoder_layer=2)
    return layers + final + (c.src_vocab_size + c.tgt_vocab_size) * D + head


def _reference_count(config):
    c = config
    D = c.d_model
    final = 4 * D if c.norm_first else 0
    head = c.tgt_vocab_size if c.tie_weights else c.tgt_vocab_size * (D + 1)
    return _layers(c, 4 * (D * D + D)) + final + head


def count_positional_table(config):
    embeddings = (config.src_vocab_size + config.tgt_vocab_size) * config.d_model
    return _reference_count(config) + embeddings + config.max_len * config.d_model


def count_positional_per_stack(config):
    embeddings = (config.src_vocab_size + config.tgt_vocab_size) * config.d_model
    return _reference_count(config) + embeddings + 2 * config.max_len * config.d_model


def count_target_embedding_only(config):
    return _reference_count(config) + config.tgt_vocab_size * config.d_model


def count_source_embedding_only(config):
    return _reference_count(config) + config.src_vocab_size * config.d_model


def count_larger_vocabulary_once(config):
    shared = max(config.src_vocab_size, config.tgt_vocab_size) * config.d_model
    return _reference_count(config) + shared


# --- ejercicios 3 y 4: las máscaras ------------------------------------------------------


def src_mask_inverted_where(src, pad_idx):
    return torch.where(src == pad_idx, True, False).unsqueeze(-2)


def src_mask_flat_ne(src, pad_idx):
    return src.ne(pad_idx)


def src_mask_axis_two(src, pad_idx):
    return (src != pad_idx)[:, :, None]


def src_mask_positive(src, pad_idx):
    return (src > 0).unsqueeze(1)


def tgt_mask_padding_repeated(tgt, pad_idx):
    T = tgt.size(1)
    return (tgt != pad_idx).unsqueeze(1).repeat(1, T, 1)


def tgt_mask_padding_and_ones(tgt, pad_idx):
    T = tgt.size(1)
    return (tgt != pad_idx)[:, None, :] & torch.ones(T, T, dtype=torch.bool, device=tgt.device)


def tgt_mask_causal_repeated(tgt, pad_idx):
    T = tgt.size(1)
    return causal_mask(T, device=tgt.device).unsqueeze(0).repeat(tgt.size(0), 1, 1)


def tgt_mask_tril_only(tgt, pad_idx):
    B, T = tgt.shape
    return torch.ones(B, T, T, device=tgt.device).tril().bool()


def tgt_mask_causal_transposed(tgt, pad_idx):
    causal = causal_mask(tgt.size(1), device=tgt.device)
    return (tgt != pad_idx).unsqueeze(1) & causal.transpose(0, 1)


def tgt_mask_padding_last_axis(tgt, pad_idx):
    return (tgt != pad_idx).unsqueeze(-1) & causal_mask(tgt.size(1), device=tgt.device)


def tgt_mask_padding_rows_indexed(tgt, pad_idx):
    return (tgt != pad_idx)[:, :, None] & causal_mask(tgt.size(1), device=tgt.device)


def tgt_mask_positive(tgt, pad_idx):
    return (tgt > 0).unsqueeze(1) & causal_mask(tgt.size(1), device=tgt.device)


def tgt_mask_logical_or(tgt, pad_idx):
    causal = causal_mask(tgt.size(1), device=tgt.device)
    return torch.logical_or((tgt != pad_idx).unsqueeze(1), causal)


def tgt_mask_inverted_parts(tgt, pad_idx):
    causal = causal_mask(tgt.size(1), device=tgt.device)
    return (tgt == pad_idx).unsqueeze(1) | ~causal


# --- ejercicio 5: decodificación voraz ---------------------------------------------------


@torch.no_grad()
def greedy_all_true_mask(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx=PAD_IDX):
    memory = model.encode(src, src_mask)
    ys = torch.full((src.size(0), 1), bos_idx, dtype=torch.long, device=src.device)
    finished = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    for _ in range(max_len - 1):
        T = ys.size(1)
        everything = torch.ones(T, T, dtype=torch.bool, device=src.device)
        out, _ = model.decode(memory, src_mask, ys, everything)
        next_token = model.generator(out[:, -1]).argmax(dim=-1).masked_fill(finished, pad_idx)
        ys = torch.cat([ys, next_token[:, None]], dim=1)
        finished |= next_token == eos_idx
        if finished.all():
            break
    return ys


@torch.no_grad()
def greedy_while_without_mask(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx=PAD_IDX):
    memory = model.encode(src, src_mask)
    ys = torch.full((src.size(0), 1), bos_idx, dtype=torch.long, device=src.device)
    finished = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    while ys.size(1) < max_len and not finished.all():
        out, _ = model.decode(memory, src_mask, ys, tgt_mask=None)
        next_token = model.generator(out[:, -1]).argmax(dim=-1)
        next_token = torch.where(finished, torch.full_like(next_token, pad_idx), next_token)
        ys = torch.cat([ys, next_token.unsqueeze(1)], dim=1)
        finished = finished | (next_token == eos_idx)
    return ys


@torch.no_grad()
def greedy_while_without_fill(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx=PAD_IDX):
    memory = model.encode(src, src_mask)
    ys = torch.full((src.size(0), 1), bos_idx, dtype=torch.long, device=src.device)
    finished = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    while ys.size(1) < max_len and not finished.all():
        mask = causal_mask(ys.size(1), device=src.device)
        out, _ = model.decode(memory, src_mask, ys, mask)
        next_token = model.generator(out[:, -1]).argmax(dim=-1)
        ys = torch.cat([ys, next_token.unsqueeze(1)], dim=1)
        finished = finished | (next_token == eos_idx)
    return ys


@torch.no_grad()
def greedy_while_up_to_max_len(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx=PAD_IDX):
    memory = model.encode(src, src_mask)
    ys = torch.full((src.size(0), 1), bos_idx, dtype=torch.long, device=src.device)
    finished = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    while ys.size(1) <= max_len and not finished.all():
        out, _ = model.decode(memory, src_mask, ys, causal_mask(ys.size(1), device=src.device))
        next_token = model.generator(out[:, -1]).argmax(dim=-1)
        next_token = torch.where(finished, torch.full_like(next_token, pad_idx), next_token)
        ys = torch.cat([ys, next_token.unsqueeze(1)], dim=1)
        finished = finished | (next_token == eos_idx)
    return ys


@torch.no_grad()
def greedy_select_first(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx=PAD_IDX):
    memory = model.encode(src, src_mask)
    ys = torch.full((src.size(0), 1), bos_idx, dtype=torch.long, device=src.device)
    finished = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    for _ in range(max_len - 1):
        out, _ = model.decode(memory, src_mask, ys, causal_mask(ys.size(1), device=src.device))
        logits = model.generator(out)  # (B, T, V)
        next_token = logits.select(1, 0).argmax(dim=-1).masked_fill(finished, pad_idx)
        ys = torch.cat([ys, next_token.unsqueeze(1)], dim=1)
        finished |= next_token == eos_idx
        if finished.all():
            break
    return ys


@torch.no_grad()
def greedy_decodes_only_bos(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx=PAD_IDX):
    """Guarda los tokens en una lista y decodifica siempre desde BOS: ys no crece."""
    memory = model.encode(src, src_mask)
    bos = torch.full((src.size(0), 1), bos_idx, dtype=torch.long, device=src.device)
    tokens = [bos[:, 0]]
    finished = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    for _ in range(max_len - 1):
        out, _ = model.decode(memory, src_mask, bos, causal_mask(1, device=src.device))
        next_token = model.generator(out[:, -1]).argmax(dim=-1).masked_fill(finished, pad_idx)
        tokens.append(next_token)
        finished |= next_token == eos_idx
        if finished.all():
            break
    return torch.stack(tokens, dim=1)


@torch.no_grad()
def greedy_steps_without_break(model, src, src_mask, max_len, bos_idx, eos_idx, pad_idx=PAD_IDX):
    memory = model.encode(src, src_mask)
    ys = torch.full((src.size(0), 1), bos_idx, dtype=torch.long, device=src.device)
    finished = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    for _ in range(1, max_len):
        out, _ = model.decode(memory, src_mask, ys, causal_mask(ys.size(1), device=src.device))
        next_token = model.generator(out[:, -1]).argmax(dim=-1)
        next_token[finished] = pad_idx
        ys = torch.cat([ys, next_token.unsqueeze(1)], dim=1)
        finished |= next_token == eos_idx
    return ys


@torch.no_grad()
def greedy_finished_from_last_column(model, src, src_mask, max_len, bos_idx, eos_idx,
                                     pad_idx=PAD_IDX):  # fmt: skip
    memory = model.encode(src, src_mask)
    ys = torch.full((src.size(0), 1), bos_idx, dtype=torch.long, device=src.device)
    finished = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    for _ in range(max_len - 1):
        out, _ = model.decode(memory, src_mask, ys, causal_mask(ys.size(1), device=src.device))
        next_token = model.generator(out[:, -1]).argmax(dim=-1).masked_fill(finished, pad_idx)
        ys = torch.cat([ys, next_token.unsqueeze(1)], dim=1)
        finished = ys[:, -1] == eos_idx
        if finished.all():
            break
    return ys


# --- ejercicio 6: los lotes de la tarea de copia ----------------------------------------


def _frame(src, first, last):
    B = src.size(0)
    return torch.cat([torch.full((B, 1), first), src, torch.full((B, 1), last)], dim=1)


def batch_whole_vocabulary(batch_size, seq_len, vocab_size, generator):
    src = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    return src, _frame(src, BOS_IDX, EOS_IDX)


def batch_inclusive_upper_bound(batch_size, seq_len, vocab_size, generator):
    src = torch.randint(3, vocab_size - 1, (batch_size, seq_len), generator=generator)
    return src, _frame(src, BOS_IDX, EOS_IDX)


def batch_framed_eos_first(batch_size, seq_len, vocab_size, generator):
    src = torch.randint(NUM_SPECIAL, vocab_size, (batch_size, seq_len), generator=generator)
    return src, F.pad(F.pad(src, (1, 0), value=EOS_IDX), (0, 1), value=BOS_IDX)


def batch_float_full(batch_size, seq_len, vocab_size, generator):
    src = torch.randint(NUM_SPECIAL, vocab_size, (batch_size, seq_len), generator=generator)
    bos = torch.full((batch_size, 1), float(BOS_IDX))
    eos = torch.full((batch_size, 1), float(EOS_IDX))
    return src, torch.cat([bos, src.float(), eos], dim=1)


def batch_fresh_generator(batch_size, seq_len, vocab_size, generator):
    fresh = torch.Generator()
    src = torch.randint(NUM_SPECIAL, vocab_size, (batch_size, seq_len), generator=fresh)
    return src, _frame(src, BOS_IDX, EOS_IDX)


# --- ejercicio 7: entropía cruzada con suavizado ----------------------------------------


def _per_position(logits, target, smoothing, ignore_index):
    """(pérdida por posición (N,), keep (N,)) con el relleno cambiado por la clase 0."""
    V = logits.size(-1)
    log_probs = F.log_softmax(logits.reshape(-1, V), dim=-1)
    target = target.reshape(-1)
    keep = target != ignore_index
    nll = -log_probs.gather(1, torch.where(keep, target, 0).unsqueeze(1)).squeeze(1)
    return (1 - smoothing) * nll - smoothing * log_probs.mean(dim=-1), keep


def loss_sum_of_kept(logits, target, smoothing=0.0, ignore_index=-100):
    loss, keep = _per_position(logits, target, smoothing, ignore_index)
    return loss[keep].sum()


def loss_zeroed_then_mean(logits, target, smoothing=0.0, ignore_index=-100):
    loss, keep = _per_position(logits, target, smoothing, ignore_index)
    return loss.masked_fill(~keep, 0.0).mean()


def loss_plain_mean(logits, target, smoothing=0.0, ignore_index=-100):
    loss, _ = _per_position(logits, target, smoothing, ignore_index)
    return loss.mean()


def loss_spread_over_others(logits, target, smoothing=0.0, ignore_index=-100):
    V = logits.size(-1)
    log_probs = logits.reshape(-1, V).log_softmax(dim=-1)
    target = target.reshape(-1)
    keep = target != ignore_index
    nll = -log_probs.gather(1, target.masked_fill(~keep, 0)[:, None])[:, 0]
    others = (-log_probs).sum(dim=-1).sub(nll).div(V - 1)  # ℓ_c medio de las otras clases
    loss = (1 - smoothing) * nll + smoothing * others
    return loss[keep].mean()


def loss_uniform_summed(logits, target, smoothing=0.0, ignore_index=-100):
    V = logits.size(-1)
    log_probs = logits.reshape(-1, V).log_softmax(dim=-1)
    target = target.reshape(-1)
    keep = target != ignore_index
    nll = -log_probs.gather(1, target.masked_fill(~keep, 0)[:, None])[:, 0]
    loss = (1 - smoothing) * nll + smoothing * -log_probs.sum(dim=-1)
    return loss[keep].mean()


def loss_log_of_functional_softmax(logits, target, smoothing=0.0, ignore_index=-100):
    V = logits.size(-1)
    log_probs = torch.log(F.softmax(logits.reshape(-1, V), dim=-1))
    target = target.reshape(-1)
    keep = target != ignore_index
    nll = -log_probs.gather(1, target.masked_fill(~keep, 0)[:, None])[:, 0]
    loss = (1 - smoothing) * nll - smoothing * log_probs.mean(dim=-1)
    return loss[keep].mean()


def loss_manual_softmax(logits, target, smoothing=0.0, ignore_index=-100):
    V = logits.size(-1)
    exp = logits.reshape(-1, V).exp()
    log_probs = (exp / exp.sum(dim=-1, keepdim=True)).log()
    target = target.reshape(-1)
    keep = target != ignore_index
    nll = -log_probs.gather(1, target.masked_fill(~keep, 0)[:, None])[:, 0]
    loss = (1 - smoothing) * nll - smoothing * log_probs.mean(dim=-1)
    return loss[keep].mean()


def loss_functional_without_ignore(logits, target, smoothing=0.0, ignore_index=-100):
    V = logits.size(-1)
    loss = nn.CrossEntropyLoss(label_smoothing=smoothing)
    return loss(logits.reshape(-1, V), target.reshape(-1))


def _smoothed_from(log_probs, nll, target, smoothing, ignore_index):
    keep = target != ignore_index
    loss = (1 - smoothing) * nll - smoothing * log_probs.mean(dim=-1)
    return (loss * keep).sum() / keep.sum()


def loss_gather_raw_target(logits, target, smoothing=0.0, ignore_index=-100):
    V = logits.size(-1)
    log_probs = logits.reshape(-1, V).log_softmax(dim=-1)
    target = target.reshape(-1)
    nll = -log_probs.gather(1, target.unsqueeze(1)).squeeze(1)
    return _smoothed_from(log_probs, nll, target, smoothing, ignore_index)


def loss_indexing_raw_target(logits, target, smoothing=0.0, ignore_index=-100):
    V = logits.size(-1)
    log_probs = logits.reshape(-1, V).log_softmax(dim=-1)
    target = target.reshape(-1)
    nll = -log_probs[torch.arange(target.numel()), target]
    return _smoothed_from(log_probs, nll, target, smoothing, ignore_index)


def loss_one_hot_raw_target(logits, target, smoothing=0.0, ignore_index=-100):
    V = logits.size(-1)
    log_probs = logits.reshape(-1, V).log_softmax(dim=-1)
    target = target.reshape(-1)
    nll = -(F.one_hot(target, V) * log_probs).sum(dim=-1)
    return _smoothed_from(log_probs, nll, target, smoothing, ignore_index)


# --- ejercicio 8: el optimizador ---------------------------------------------------------


def optimizer_weight_decay_hardcoded(model, lr, weight_decay=0.0):
    return torch.optim.AdamW(
        model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9, weight_decay=0.01
    )


def optimizer_adam_without_decay(model, lr, weight_decay=0.0):
    return torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9)


def optimizer_betas_of_adam(model, lr, weight_decay=0.0):
    return torch.optim.AdamW(
        model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-9, weight_decay=weight_decay
    )


def optimizer_eps_1e8(model, lr, weight_decay=0.0):
    return torch.optim.AdamW(
        model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-8, weight_decay=weight_decay
    )


def optimizer_lr_hardcoded(model, lr, weight_decay=0.0):
    return torch.optim.AdamW(
        model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9, weight_decay=weight_decay
    )


# --- ejercicios 9 y 10: los esquemas de tasa ---------------------------------------------


def noam_without_d_factor(step, d_model, warmup):
    return min(1 / math.sqrt(step), step / warmup**1.5)


def noam_max_of_branches(step, d_model, warmup):
    return max(1 / math.sqrt(step), step / warmup**1.5) / math.sqrt(d_model)


def noam_warmup_square_root(step, d_model, warmup):
    return min(step**-0.5, step / math.sqrt(warmup)) / math.sqrt(d_model)


def noam_sqrt_d_times(step, d_model, warmup):
    return math.sqrt(d_model) * min(1 / math.sqrt(step), step / warmup**1.5)


def cosine_progress_unclamped(step, warmup, total_steps):
    if step <= warmup:
        return step / warmup
    return 0.5 + 0.5 * math.cos(math.pi * (step - warmup) / max(1, total_steps - warmup))


def cosine_progress_without_max(step, warmup, total_steps):
    if step <= warmup:
        return step / warmup
    progress = (step - warmup) / (total_steps - warmup)
    return (1 + math.cos(math.pi * progress)) / 2


def cosine_progress_over_total(step, warmup, total_steps):
    if step <= warmup:
        return step / warmup
    return 0.5 + 0.5 * math.cos(math.pi * min(1.0, (step - warmup) / total_steps))


def cosine_warmup_zero_based(step, warmup, total_steps):
    if step > warmup:
        return ref_training.cosine_warmup_factor(step, warmup, total_steps)
    return (step - 1) / warmup


def cosine_warmup_shifted(step, warmup, total_steps):
    if step <= warmup:
        return step / warmup - 1 / warmup
    progress = min(1.0, (step - warmup) / max(1, total_steps - warmup))
    return (1 + math.cos(math.pi * progress)) / 2


def cosine_without_halves(step, warmup, total_steps):
    if step <= warmup:
        return step / warmup
    progress = min(1.0, (step - warmup) / max(1, total_steps - warmup))
    return 1 + math.cos(progress * math.pi)


# --- ejercicio 11: el bucle de entrenamiento ---------------------------------------------


def _loop(model, steps, batch_size, seq_len, lr, generator, on_step, *, variant):
    """El bucle de la referencia, escrito de otra forma, con un error según ``variant``."""
    model.train()
    optimizer = ref_training.make_optimizer(model, lr)
    warmup = max(1, steps // 10)
    factor = ref_training.cosine_warmup_lambda(warmup, steps)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
    V = model.generator.out_features
    smoothing = 0.1 if variant == "smoothing" else 0.0
    losses = []
    if variant == "zero_grad_once":
        optimizer.zero_grad()
    for i in range(steps):
        src, tgt = ref_training.copy_task_batch(batch_size, seq_len, V, generator)
        tgt_in = tgt[:, :-1]
        tgt_out = tgt_in if variant == "no_shift" else tgt[:, 1:]
        mask = ref.make_tgt_mask(tgt_in, PAD_IDX)
        logits = model(src, tgt_in, ref.make_src_mask(src, PAD_IDX), mask)
        loss = ref_training.label_smoothed_cross_entropy(logits, tgt_out, smoothing, PAD_IDX)
        if variant != "zero_grad_once":
            optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if variant != "scheduler_once":
            scheduler.step()
        losses.append(loss if variant == "tensors" else loss.item())
        if on_step is not None:
            on_step(i if variant == "zero_based" else i + 1, loss.item())
    if variant == "scheduler_once":
        scheduler.step()
    return losses


def _ordered_loop(model, steps, batch_size, seq_len, lr, generator, on_step, *, order):
    """El bucle de la referencia con las llamadas de cada paso en el orden ``order``."""
    model.train()
    optimizer = ref_training.make_optimizer(model, lr)
    warmup = max(1, steps // 10)
    factor = ref_training.cosine_warmup_lambda(warmup, steps)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
    V = model.generator.out_features
    losses = []
    for i in range(steps):
        src, tgt = ref_training.copy_task_batch(batch_size, seq_len, V, generator)
        tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
        logits = model(
            src, tgt_in, ref.make_src_mask(src, PAD_IDX), ref.make_tgt_mask(tgt_in, PAD_IDX)
        )
        loss = ref_training.label_smoothed_cross_entropy(logits, tgt_out, 0.0, PAD_IDX)
        calls = {"zero_grad": optimizer.zero_grad, "backward": loss.backward,
                 "step": optimizer.step, "scheduler": scheduler.step}  # fmt: skip
        for name in order:
            calls[name]()
        losses.append(loss.item())
        if on_step is not None:
            on_step(i + 1, loss.item())
    return losses


def train_zero_grad_after_backward(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    return _ordered_loop(model, steps, batch_size, seq_len, lr, generator, on_step,
                         order=("backward", "zero_grad", "step", "scheduler"))  # fmt: skip


def train_step_before_backward(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    return _ordered_loop(model, steps, batch_size, seq_len, lr, generator, on_step,
                         order=("zero_grad", "step", "backward", "scheduler"))  # fmt: skip


def train_scheduler_before_step(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    return _ordered_loop(model, steps, batch_size, seq_len, lr, generator, on_step,
                         order=("zero_grad", "backward", "scheduler", "step"))  # fmt: skip


def train_scheduler_after_loop(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    return _loop(model, steps, batch_size, seq_len, lr, generator, on_step,
                 variant="scheduler_once")  # fmt: skip


def train_zero_grad_before_loop(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    return _loop(model, steps, batch_size, seq_len, lr, generator, on_step,
                 variant="zero_grad_once")  # fmt: skip


def train_smoothing_positional(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    return _loop(model, steps, batch_size, seq_len, lr, generator, on_step, variant="smoothing")


def train_target_is_input(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    return _loop(model, steps, batch_size, seq_len, lr, generator, on_step, variant="no_shift")


def train_enumerates_from_zero(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    return _loop(model, steps, batch_size, seq_len, lr, generator, on_step, variant="zero_based")


def train_keeps_loss_tensors(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    return _loop(model, steps, batch_size, seq_len, lr, generator, on_step, variant="tensors")


def train_full_target(model, steps, batch_size, seq_len, lr, generator, on_step=None):
    """Sin desplazar: el decodificador recibe ``tgt`` entero y predice ``tgt`` entero."""
    model.train()
    optimizer = ref_training.make_optimizer(model, lr)
    warmup = max(1, steps // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, ref_training.cosine_warmup_lambda(warmup, steps)
    )
    losses = []
    for step in range(1, steps + 1):
        src, tgt = ref_training.copy_task_batch(
            batch_size, seq_len, model.generator.out_features, generator
        )
        logits = model(src, tgt, ref.make_src_mask(src, PAD_IDX), ref.make_tgt_mask(tgt, PAD_IDX))
        loss = ref_training.label_smoothed_cross_entropy(logits, tgt, 0.0, PAD_IDX)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        if on_step is not None:
            on_step(step, loss.item())
    return losses
