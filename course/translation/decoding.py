"""Decodificación por lotes (voraz y búsqueda en haz) y BLEU con sacreBLEU.

Ninguna función recorre las frases una a una en Python: las frases se ordenan por
longitud, se agrupan en lotes y cada lote avanza *token* a *token* entero (en la búsqueda
en haz, las B·K hipótesis a la vez). El decodificador guarda las claves y los valores de
los pasos anteriores (``course.translation.incremental``), así que cada paso solo calcula la
posición nueva. La decodificación voraz es la búsqueda en haz con K = 1: da lo mismo que
``course.reference.model.greedy_decode``, que recalcula el prefijo entero en cada paso.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import sacrebleu
import torch
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

from course.reference.model import Transformer, greedy_decode, make_src_mask, make_tgt_mask
from course.text import number
from course.translation import incremental
from course.translation.data.tokenizer import BOS_IDX, EOS_IDX, SubwordTokenizer


def gnmt_length_penalty(lengths: Tensor, alpha: float) -> Tensor:
    """Penalización de longitud de GNMT (Wu et al., 2016): ``((5 + |Y|) / 6) ** α``.

    La puntuación final de una hipótesis es ``log P(Y | X) / lp(|Y|)``; con ``α = 0`` es la
    log-probabilidad sin normalizar, que favorece las traducciones cortas.
    """
    return ((5.0 + lengths.float()) / 6.0) ** alpha


@torch.no_grad()
def beam_search(
    model: Transformer,
    src: Tensor,
    src_mask: Tensor,
    beam_size: int,
    max_len: int,
    bos_idx: int = BOS_IDX,
    eos_idx: int = EOS_IDX,
    pad_idx: int = 0,
    length_penalty: float = 0.6,
) -> Tensor:
    """Búsqueda en haz por lotes: las K mejores hipótesis de cada frase avanzan juntas.

    En cada paso, cada hipótesis viva se extiende con todo el vocabulario y, por frase, se
    quedan las K extensiones de mayor log-probabilidad acumulada (``topk`` sobre K·V).
    Una hipótesis que produjo ``eos_idx`` queda terminada: solo puede extenderse con
    ``pad_idx`` sin coste, así que conserva su puntuación y su sitio mientras siga entre
    las K mejores. El bucle para cuando todas las hipótesis del haz están terminadas o al
    llegar a ``max_len``. Al final se elige, por frase, la hipótesis con mayor
    ``log P / lp(longitud)`` (:func:`gnmt_length_penalty`, la longitud cuenta ``<eos>``).
    Con ``beam_size=1`` coincide con ``greedy_decode``. Supone el modelo en modo
    evaluación (la caché de ``course.translation.incremental`` no aplica *dropout*) y no lo cambia.

    Forma:
        src (B, S); src_mask (B, 1, S)
        devuelve (B, T) int64 con T <= max_len: ``bos_idx``, la traducción, ``eos_idx``
        y relleno ``pad_idx``
    """
    B, K = src.size(0), beam_size
    device = src.device
    memory = model.encode(src, src_mask).repeat_interleave(K, dim=0)  # (B·K, S, D)
    cache = incremental.start(model, memory, src_mask.repeat_interleave(K, dim=0))
    ys = torch.full((B * K, 1), bos_idx, dtype=torch.long, device=device)  # (B·K, 1)
    scores = torch.full((B, K), float("-inf"), device=device)  # (B, K)
    scores[:, 0] = 0.0  # al principio solo hay una hipótesis por frase
    finished = torch.zeros(B * K, dtype=torch.bool, device=device)  # (B·K,)
    offsets = (torch.arange(B, device=device) * K).unsqueeze(1)  # (B, 1)
    for position in range(max_len - 1):
        out = incremental.step(model, cache, ys[:, -1], position)  # (B·K, D)
        log_probs = model.generator(out).float().log_softmax(dim=-1)  # (B·K, V)
        V = log_probs.size(-1)
        log_probs[finished] = float("-inf")  # una hipótesis terminada solo admite <pad>...
        log_probs[finished, pad_idx] = 0.0  # ...y sin coste
        candidates = (scores.reshape(-1, 1) + log_probs).reshape(B, K * V)  # (B, K·V)
        scores, flat = candidates.topk(K, dim=-1)  # (B, K) cada uno
        parent = (offsets + flat // V).reshape(-1)  # (B·K,) fila de ys que se extiende
        token = (flat % V).reshape(-1, 1)  # (B·K, 1)
        ys = torch.cat([ys[parent], token], dim=1)  # (B·K, T + 1)
        cache.reorder(parent)
        finished = finished[parent] | (token.squeeze(1) == eos_idx)
        if finished.all():
            break
    is_eos = ys == eos_idx  # (B·K, T)
    lengths = torch.where(is_eos.any(dim=1), is_eos.int().argmax(dim=1), ys.size(1) - 1)
    normalized = scores / gnmt_length_penalty(lengths, length_penalty).reshape(B, K)  # (B, K)
    best = offsets.squeeze(1) + normalized.argmax(dim=-1)  # (B,)
    return ys[best]  # (B, T)


def decode_max_len(src_len: int, model_max_len: int) -> int:
    """Longitud máxima de la salida para un lote cuyo origen ocupa ``src_len`` *tokens*."""
    return min(model_max_len, int(1.5 * src_len) + 10)


@torch.no_grad()
def translate(
    model: Transformer,
    tokenizer: SubwordTokenizer,
    sentences: Sequence[str],
    *,
    beam_size: int = 1,
    length_penalty: float = 0.6,
    batch_size: int = 128,
    device: torch.device | str | None = None,
) -> list[str]:
    """Traduce ``sentences`` por lotes ordenados por longitud; devuelve texto plano en orden.

    Usa :func:`beam_search` (``beam_size=1`` es la decodificación voraz) con
    ``batch_size`` frases, es decir ``batch_size·K`` hipótesis, por lote. Pone el modelo
    en modo evaluación.

    Forma:
        N frases -> N traducciones (str)
    """
    model.eval()
    device = device if device is not None else next(model.parameters()).device
    pad_idx = model.config.pad_idx
    encoded = tokenizer.encode_batch(list(sentences))
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    out = [""] * len(encoded)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        src = pad_sequence(
            [torch.tensor(encoded[i]) for i in chunk], batch_first=True, padding_value=pad_idx
        ).to(device)  # (b, S)
        src_mask = make_src_mask(src, pad_idx)  # (b, 1, S)
        max_len = decode_max_len(src.size(1), model.config.max_len)
        ys = beam_search(
            model, src, src_mask, beam_size, max_len, BOS_IDX, EOS_IDX, pad_idx, length_penalty
        )
        for i, row in zip(chunk, ys[:, 1:].tolist(), strict=True):
            out[i] = tokenizer.decode(row).replace("\n", " ")
    return out


@torch.no_grad()
def translate_with_attention(
    model: Transformer,
    tokenizer: SubwordTokenizer,
    sentence: str,
    max_len: int,
    device: torch.device | str,
) -> tuple[list[str], list[str], Tensor]:
    """Traduce una frase y devuelve la atención cruzada de la última capa del decodificador.

    Decodifica de forma voraz y después vuelve a pasar la salida completa por el
    decodificador para leer los pesos de todas las cabezas: el modelo debe usar la atención
    de la referencia, que devuelve los pesos (``course.translation.checkpoint.load_model`` con ``fused=False``).

    Forma:
        devuelve (tokens de origen S, tokens de salida T, pesos (H, T, S)); la fila t dice
        a qué *tokens* de origen miró la cabeza al predecir el *token* de salida t
    """
    model.eval()
    pad_idx = model.config.pad_idx
    src = torch.tensor([tokenizer.encode(sentence)], device=device)  # (1, S)
    src_mask = make_src_mask(src, pad_idx)  # (1, 1, S)
    ys = greedy_decode(model, src, src_mask, max_len, BOS_IDX, EOS_IDX, pad_idx)  # (1, T + 1)
    ids = ys[0].tolist()
    if EOS_IDX in ids:
        ids = ids[: ids.index(EOS_IDX) + 1]
    tgt_in = torch.tensor([ids[:-1]], device=src.device)  # (1, T): la fila t predice ids[t + 1]
    memory = model.encode(src, src_mask)  # (1, S, D)
    _, weights = model.decode(memory, src_mask, tgt_in, make_tgt_mask(tgt_in, pad_idx))
    vocab = tokenizer.tokenizer
    src_tokens = [vocab.id_to_token(i) for i in src[0].tolist()]
    out_tokens = [vocab.id_to_token(i) for i in ids[1:]]  # lo que predice cada fila
    return src_tokens, out_tokens, weights[0].float().cpu()  # (H, T, S)


@dataclass(frozen=True)
class BleuReport:
    """BLEU de corpus con sacreBLEU: sensible a mayúsculas y en minúsculas, con sus firmas."""

    score: float
    lowercase_score: float
    signature: str
    lowercase_signature: str

    def __str__(self) -> str:
        return (
            f"BLEU {number(self.score, 2)} ({self.signature}); "
            f"en minúsculas {number(self.lowercase_score, 2)} ({self.lowercase_signature})"
        )


def bleu(hypotheses: Sequence[str], references: Sequence[str]) -> BleuReport:
    """sacreBLEU sobre texto detokenizado (tokenizador 13a), con y sin distinguir mayúsculas."""
    if len(hypotheses) != len(references):
        raise ValueError(
            f"Hay {len(hypotheses)} traducciones y {len(references)} referencias: "
            f"debe haber una traducción por referencia."
        )
    cased, lower = sacrebleu.BLEU(), sacrebleu.BLEU(lowercase=True)
    refs = [list(references)]
    return BleuReport(
        score=cased.corpus_score(list(hypotheses), refs).score,
        lowercase_score=lower.corpus_score(list(hypotheses), refs).score,
        signature=str(cased.get_signature()),
        lowercase_signature=str(lower.get_signature()),
    )
