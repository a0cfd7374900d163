"""Bucle de entrenamiento compartido por el cuaderno 07 y ``python -m course train``.

Un paso (forzado del profesor, suavizado de etiquetas, recorte del gradiente, AdamW y
planificador) y la validación son dos funciones que :func:`train` recibe como argumentos:
por omisión, ``train_step`` y ``evaluate`` de ``course.reference.translation``; el
cuaderno 07 pasa las que escribe el estudiante. Este módulo añade lo que rodea a esos
pasos, y se lee de arriba abajo:

1. piezas: atención fusionada, ``torchrun`` (:class:`Runtime`), puntos de control;
2. preparación (:func:`setup`): datos, modelo, AdamW, calentamiento y coseno (el de
   ``cosine_warmup_lambda`` del laboratorio 6) y, al reanudar, el estado de ``last.pt``;
3. una época (:func:`train_epoch`): pasos con barra ``tqdm`` (pérdida y *tokens*/s),
   tope de tiempo y, tras los primeros pasos, una estimación de la duración;
4. validación y puntos de control (:func:`end_epoch`): ``last.pt`` (modelo, optimizador,
   planificador, paso, configuración, semilla, tokenizador), para reanudar tras una
   interrupción, y ``best.pt`` (lo mismo sin el estado del optimizador), para traducir;
5. traducción final (:func:`translate_test`) con el promedio de las últimas épocas o
   ``best.pt``, lo que valide mejor;
6. :func:`train`, que encadena las partes.

En CUDA usa ``bfloat16`` con ``autocast``; con ``torchrun``, ``DistributedDataParallel``
(NCCL en GPU, gloo en CPU) y lotes distintos en cada proceso
(``TokenBucketSampler(rank=, world_size=)``). Los *tokens*/s cuentan los *tokens* de
destino que no son relleno (los que puntúa la pérdida), sumados sobre todos los procesos.
"""

import contextlib
import dataclasses
import functools
import json
import math
import os
import time
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import sacrebleu
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils.data import DataLoader
from tqdm.auto import tqdm

from course.labs import CourseError
from course.reference.model import Transformer, count_parameters
from course.reference.multihead import MultiHeadAttention, merge_heads, split_heads
from course.reference.normalization import LayerNorm
from course.reference.training import cosine_warmup_factor, cosine_warmup_lambda, make_optimizer
from course.translation.config import ModelConfig, TrainConfig
from course.translation.data import (
    PAD_IDX,
    Batch,
    PairDataset,
    build_tokenizer,
    make_loader,
    read_split,
)
from course.translation.data.tokenizer import SubwordTokenizer
from course.translation.decoding import BleuReport, bleu, translate

CHECKPOINT_VERSION = 1
TRANSLATIONS_FILE = "test_2016_flickr.en.txt"
METRICS_FILE = "metrics.json"
AVERAGE_FILE = "average.pt"

# train_step(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm) -> pérdida
StepFn = Callable[
    [nn.Module, Batch, torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler | None, int,
     float, float | None],
    float,
]  # fmt: skip
# evaluate(model, batches, pad_idx) -> (pérdida, perplejidad)
EvalFn = Callable[[nn.Module, Iterable[Batch], int], tuple[float, float]]
# collate(pares, pad_idx) -> (src, tgt_in, tgt_out); corpus_bleu(hipótesis, referencias) -> float
CollateFn = Callable[[list[tuple[Tensor, Tensor]], int], tuple[Tensor, Tensor, Tensor]]
BleuFn = Callable[[list[str], list[str]], float]


class CheckpointError(CourseError):
    """Punto de control ilegible, incompleto o de otra receta (mensaje en español)."""


# ---------------------------------------------------------------- núcleos fusionados


def _fused_attention(
    self: MultiHeadAttention, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, None]:
    """``MultiHeadAttention.forward`` con ``F.scaled_dot_product_attention`` (sin pesos)."""
    q = split_heads(self.w_q(query), self.num_heads)  # (B, H, T_q, d_k)
    k = split_heads(self.w_k(key), self.num_heads)  # (B, H, T_k, d_k)
    v = split_heads(self.w_v(value), self.num_heads)  # (B, H, T_k, d_k)
    if mask is not None:
        mask = mask.unsqueeze(-3)  # (B, 1, T_q, T_k); misma convención: True = se puede atender
    p = self.dropout.p if self.training else 0.0
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
    return self.w_o(merge_heads(out)), None  # (B, T_q, D)


def _fused_layer_norm(self: LayerNorm, x: Tensor) -> Tensor:
    """``LayerNorm.forward`` con ``F.layer_norm``: (..., D) -> (..., D)."""
    return F.layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)


FUSED = {MultiHeadAttention: _fused_attention, LayerNorm: _fused_layer_norm}


def use_fused_kernels(model: nn.Module, enabled: bool = True) -> nn.Module:
    """Cambia la atención y la normalización de ``model`` por las funciones de PyTorch.

    ``F.scaled_dot_product_attention`` y ``F.layer_norm`` hacen las mismas cuentas que los
    módulos de los laboratorios (hasta el redondeo) en menos pasadas por memoria: con
    módulos de 128 dimensiones en CPU, las operaciones elemento a elemento de la versión
    escrita a mano cuestan tanto como las multiplicaciones de matrices. Mismos
    parámetros: los puntos de control son intercambiables. La atención fusionada no
    materializa la matriz de pesos (B, H, T_q, T_k) ni la devuelve: ``model.decode``
    devuelve ``None`` como pesos cruzados; para dibujar mapas de atención, usa
    ``enabled=False``. Devuelve ``model``.
    """
    for module in model.modules():
        fused = FUSED.get(type(module))
        if fused is None:
            continue
        if enabled:
            module.forward = types.MethodType(fused, module)
        elif "forward" in vars(module):
            del module.forward
    return model


# ---------------------------------------------------------------- distribuido


@dataclass(frozen=True)
class Runtime:
    """Dónde corre este proceso: dispositivo, rango y número de procesos."""

    device: torch.device
    rank: int = 0
    world_size: int = 1

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @property
    def main(self) -> bool:
        return self.rank == 0

    def barrier(self) -> None:
        if self.distributed:
            dist.barrier()


def setup_runtime(device: str | torch.device | None = None) -> Runtime:
    """Detecta ``torchrun`` (variables ``RANK``/``WORLD_SIZE``) e inicia el grupo de procesos.

    NCCL si hay CUDA, gloo en CPU. Sin ``torchrun``: un proceso, CUDA si está disponible.
    """
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size > 1:
        rank, local_rank = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
        use_cuda = torch.cuda.is_available() and (device is None or str(device).startswith("cuda"))
        if use_cuda:
            torch.cuda.set_device(local_rank)
        if not dist.is_initialized():
            dist.init_process_group("nccl" if use_cuda else "gloo")
        dev = torch.device("cuda", local_rank) if use_cuda else torch.device("cpu")
        return Runtime(dev, rank, world_size)
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return Runtime(torch.device(device))


def autocast(device: torch.device):
    """``bfloat16`` con ``autocast`` en CUDA; en CPU, precisión completa."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


# ---------------------------------------------------------------- puntos de control


def save_checkpoint(path: Path, state: Mapping) -> None:
    """Guarda ``state`` con ``torch.save`` de forma atómica (nunca deja un archivo a medias)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.part")
    torch.save(dict(state), partial)
    partial.replace(path)


REQUIRED_KEYS = ("version", "model", "model_config", "train_config", "step", "tokenizer")
# solo last.pt los guarda: best.pt y average.pt sirven para traducir y se entregan con el
# laboratorio 7, así que llevan los pesos, la configuración y el tokenizador, nada más
RESUME_KEYS = ("optimizer", "scheduler", "recent", "rng_cpu")


def _without(state: Mapping, keys: tuple[str, ...]) -> dict:
    return {k: v for k, v in state.items() if k not in keys}


def load_checkpoint(path: str | os.PathLike, map_location="cpu") -> dict:
    """Lee un punto de control; si está truncado, dañado o incompleto lanza ``CheckpointError``."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"No existe el punto de control {path}.")
    try:
        state = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as error:  # zip truncado, pickle roto, archivo vacío...
        raise CheckpointError(
            f"El punto de control {path} está dañado o incompleto y no se puede leer "
            f"({type(error).__name__}). Probablemente la escritura se interrumpió: bórralo y "
            f"vuelve a entrenar desde cero, o reanuda desde last.pt si es otro el dañado."
        ) from None
    missing = [k for k in REQUIRED_KEYS if not isinstance(state, dict) or k not in state]
    if missing:
        raise CheckpointError(
            f"{path} no es un punto de control de este curso: le faltan {', '.join(missing)}."
        )
    return state


def load_model(
    path: str | os.PathLike, device: str | torch.device = "cpu", fused: bool = False
) -> tuple[Transformer, SubwordTokenizer, dict]:
    """Modelo (en modo evaluación), tokenizador y estado de un punto de control."""
    from tokenizers import Tokenizer

    state = load_checkpoint(path)
    model = Transformer(ModelConfig(**state["model_config"]))
    model.load_state_dict(state["model"])
    use_fused_kernels(model, fused)
    tokenizer = SubwordTokenizer(Tokenizer.from_str(state["tokenizer"]))
    return model.to(device).eval(), tokenizer, state


def final_checkpoint(out_dir: str | os.PathLike) -> Path:
    """El punto de control con el que :func:`train` tradujo el conjunto de prueba.

    ``average.pt`` si el promedio de las últimas épocas ganó en validación; si no, ``best.pt``.
    """
    out_dir = Path(out_dir)
    average = out_dir / AVERAGE_FILE
    return average if average.is_file() else out_dir / "best.pt"


# ---------------------------------------------------------------- resultado


@dataclass
class TrainResult:
    """Lo que devuelve :func:`train`: curvas, tiempos y, en el proceso 0, BLEU."""

    out_dir: Path
    parameters: int
    step: int
    history: list[dict] = field(default_factory=list)  # una entrada por época
    train_losses: list[float] = field(default_factory=list)  # una por paso (este proceso)
    train_seconds: float = 0.0
    tokens_per_second: float = 0.0
    peak_memory_mb: float | None = None
    bleu: BleuReport | None = None
    decode_seconds: float | None = None
    decoded_with: str | None = None
    device: str = "cpu"
    world_size: int = 1
    model: nn.Module | None = field(default=None, repr=False)  # el modelo entrenado (sin DDP)

    def to_json(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["out_dir"] = str(self.out_dir)
        data["bleu"] = dataclasses.asdict(self.bleu) if self.bleu is not None else None
        data.pop("train_losses")
        data.pop("model")
        return data


# ---------------------------------------------------------------- preparación


@dataclass
class Run:
    """Lo que comparten las partes del bucle: receta, datos, modelo, optimizador y contadores."""

    cfg: TrainConfig
    rt: Runtime
    out_dir: Path
    say: Callable[[str], None]
    tokenizer: SubwordTokenizer
    loader: DataLoader
    val_loader: DataLoader
    model: nn.Module  # sin DDP: el que se valida, se guarda y traduce
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    clock: dict  # {"start": instante en que empezó el entrenamiento}, lo lee _timed_cosine
    result: TrainResult
    train_model: nn.Module | None = None  # el que da los pasos (DDP con torchrun)
    step: int = 0  # pasos dados, contando los de antes de reanudar
    epoch: int = 0  # época en curso, desde 0
    batch_in_epoch: int = 0  # primer lote por dar de la época en curso
    best_val: float = math.inf
    recent: list[dict[str, Tensor]] = field(default_factory=list)  # pesos para promediar
    pending_rng: Tensor | None = None  # estado del generador guardado en last.pt
    tokens_seen: int = 0
    estimate_from: float | None = None  # instante del paso ESTIMATE_STEPS[0] de esta sesión

    @property
    def total_steps(self) -> int:
        return self.cfg.epochs * len(self.loader)

    def elapsed(self) -> float:
        return time.perf_counter() - self.clock["start"]

    def checkpoint(self, next_epoch: int, next_batch: int) -> dict:
        """Estado para ``last.pt``: reanudar en la época ``next_epoch``, lote ``next_batch``."""
        return {
            "version": CHECKPOINT_VERSION,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "step": self.step,
            "epoch": next_epoch,
            "batch_in_epoch": next_batch,
            "best_val_loss": self.best_val,
            "history": self.result.history,
            "recent": self.recent,
            "model_config": dataclasses.asdict(self.model.config),
            "train_config": dataclasses.asdict(self.cfg),
            "seed": self.cfg.seed,
            "tokenizer": self.tokenizer.tokenizer.to_str(),
            "rng_cpu": torch.get_rng_state(),
        }


def _student_batch(collate: CollateFn, pairs: list[tuple[Tensor, Tensor]]) -> Batch:
    """El lote que forma el ``collate`` del estudiante, como ``Batch`` (con ``.to``)."""
    return Batch(*collate(pairs, PAD_IDX))


def load_data(
    cfg: TrainConfig, rt: Runtime, data_dir=None, sums=None, collate: CollateFn | None = None
) -> tuple[SubwordTokenizer, DataLoader, DataLoader]:
    """Tokenizador y lotes de entrenamiento (por cubetas de longitud) y de validación.

    Con ``collate`` (el del cuaderno 07), los lotes los forma esa función: la copia del
    paquete que ve el núcleo al calificar no lleva ``course.translation.data.collate``, que es una
    respuesta del laboratorio.
    """
    batching = {} if collate is None else {"collate_fn": functools.partial(_student_batch, collate)}
    if rt.main:  # el proceso 0 entrena (o lee) el tokenizador antes que los demás
        tokenizer = build_tokenizer(cfg.vocab_size, data_dir, sums=sums)
    rt.barrier()
    if not rt.main:
        tokenizer = build_tokenizer(cfg.vocab_size, data_dir, sums=sums)
    train_set = PairDataset(
        read_split("train", data_dir, sums=sums)[: cfg.max_train_pairs], tokenizer
    )
    keep = [i for i, n in enumerate(train_set.lengths) if n <= cfg.max_sentence_tokens]
    if len(keep) < len(train_set):
        train_set.src = [train_set.src[i] for i in keep]
        train_set.tgt = [train_set.tgt[i] for i in keep]
    val_set = PairDataset(read_split("val", data_dir, sums=sums)[: cfg.max_val_pairs], tokenizer)
    pin = rt.device.type == "cuda"
    loader = make_loader(
        train_set, cfg.max_tokens, seed=cfg.seed, rank=rt.rank, world_size=rt.world_size,
        pin_memory=pin, **batching,
    )  # fmt: skip
    val_tokens = max(cfg.max_tokens, max(val_set.lengths))
    val_loader = make_loader(val_set, val_tokens, shuffle=False, pin_memory=pin, **batching)
    return tokenizer, loader, val_loader


def setup(
    cfg: TrainConfig, out_dir: Path, rt: Runtime, log: Callable[[str], None], resume: bool,
    data_dir=None, sums=None, collate: CollateFn | None = None,
) -> Run:  # fmt: skip
    """Datos, modelo, AdamW y planificador; con ``resume``, el estado de ``out_dir/last.pt``."""
    torch.manual_seed(cfg.seed)
    resumed = None  # un last.pt dañado se detecta antes de leer los datos
    if resume and (out_dir / "last.pt").is_file():
        resumed = load_checkpoint(out_dir / "last.pt")
    tokenizer, loader, val_loader = load_data(cfg, rt, data_dir, sums, collate)
    model = Transformer(cfg.model_config(tokenizer.vocab_size))
    use_fused_kernels(model, cfg.fused_kernels)
    model.to(rt.device)
    optimizer = make_optimizer(model, cfg.lr, cfg.weight_decay)
    total_steps = cfg.epochs * len(loader)
    warmup = min(cfg.warmup_steps, total_steps)
    clock = {"start": time.perf_counter()}
    if cfg.max_minutes is None:
        schedule = cosine_warmup_lambda(warmup, total_steps)
    else:
        schedule = _timed_cosine(warmup, total_steps, cfg.max_minutes * 60, clock)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    result = TrainResult(
        out_dir, count_parameters(model), 0, device=str(rt.device), world_size=rt.world_size,
        model=model,
    )  # fmt: skip
    say = log if rt.main else (lambda _msg: None)
    run = Run(cfg, rt, out_dir, say, tokenizer, loader, val_loader, model, optimizer, scheduler,
              clock, result)  # fmt: skip
    if resumed is not None:
        _restore(run, resumed)
    say(
        f"Modelo: {result.parameters / 1e6:.2f} M parámetros · dispositivo {rt.device}"
        f"{f' × {rt.world_size} procesos' if rt.distributed else ''} · "
        f"{len(loader.dataset)} pares de entrenamiento, {len(loader)} lotes por época."
    )
    run.train_model = model
    if rt.distributed:
        ids = [rt.device.index] if rt.device.type == "cuda" else None
        run.train_model = nn.parallel.DistributedDataParallel(model, device_ids=ids)
    return run


def _restore(run: Run, state: dict) -> None:
    """Continúa desde ``last.pt``: pesos, optimizador, planificador, contadores y curvas."""
    if state["model_config"] != dataclasses.asdict(run.model.config):
        raise CheckpointError(
            f"{run.out_dir / 'last.pt'} es de otro modelo ({state['train_config']['name']}): "
            f"usa otra carpeta con --out o entrena sin --resume."
        )
    run.model.load_state_dict(state["model"])
    run.optimizer.load_state_dict(state["optimizer"])
    run.scheduler.load_state_dict(state["scheduler"])
    run.step, run.epoch, run.batch_in_epoch = state["step"], state["epoch"], state["batch_in_epoch"]
    run.best_val, run.result.history = state["best_val_loss"], state["history"]
    run.recent = state.get("recent", [])
    run.pending_rng = state["rng_cpu"]  # se restaura en el mismo punto en que se guardó
    run.say(f"Reanudando desde {run.out_dir / 'last.pt'}: paso {run.step}, época {run.epoch + 1}.")


# ---------------------------------------------------------------- una época


@dataclass
class EpochStats:
    """Lo que deja una época (o el trozo que se dio de ella) para su validación."""

    first_batch: int  # primer lote dado en esta sesión
    next_batch: int  # lote siguiente al último dado (= lotes por época si terminó)
    started: float
    tokens: int = 0
    stop: str | None = None  # "pasos" (max_steps: simula una interrupción) o "tiempo"


ESTIMATE_STEPS = (5, 25)  # la estimación mide la velocidad entre estos pasos de la sesión


def train_epoch(run: Run, train_step: StepFn, progress: bool, max_steps: int | None) -> EpochStats:
    """Da los pasos de la época ``run.epoch`` desde el lote ``run.batch_in_epoch``.

    Se para antes si se llega a ``max_steps`` o al tope de tiempo ``cfg.max_minutes``;
    entonces guarda ``last.pt`` con el lote siguiente, para reanudar ahí.
    """
    cfg, rt = run.cfg, run.rt
    run.loader.batch_sampler.set_epoch(run.epoch)
    steps_per_epoch = len(run.loader)
    bar = tqdm(
        total=steps_per_epoch, initial=run.batch_in_epoch, leave=False,
        desc=f"época {run.epoch + 1}/{cfg.epochs}", disable=not (progress and rt.main),
    )  # fmt: skip
    stats = EpochStats(run.batch_in_epoch, run.batch_in_epoch, time.perf_counter())
    for i, batch in enumerate(_batches(run)):
        if i < stats.first_batch:
            continue  # lotes ya vistos antes de la interrupción
        batch = batch.to(rt.device, non_blocking=True)
        with autocast(rt.device):
            loss = train_step(
                run.train_model, batch, run.optimizer, run.scheduler, PAD_IDX,
                cfg.label_smoothing, cfg.clip_norm,
            )  # fmt: skip
        run.step, stats.next_batch = run.step + 1, i + 1
        stats.tokens += int((batch.tgt_out != PAD_IDX).sum()) * rt.world_size
        run.result.train_losses.append(loss)
        rate = stats.tokens / max(time.perf_counter() - stats.started, 1e-9)
        bar.set_postfix(pérdida=f"{loss:.3f}", tok_s=f"{rate:,.0f}")
        bar.update()
        _maybe_estimate(run)
        if cfg.save_every and run.step % cfg.save_every == 0 and rt.main:
            save_checkpoint(run.out_dir / "last.pt", run.checkpoint(run.epoch, i + 1))
        if cfg.max_minutes is not None and run.elapsed() >= cfg.max_minutes * 60:
            stats.stop = "tiempo"  # se valida igual, como al final de una época
        elif max_steps is not None and run.step >= max_steps:
            stats.stop = "pasos"
        if stats.stop:
            if rt.main:
                save_checkpoint(run.out_dir / "last.pt", run.checkpoint(run.epoch, i + 1))
            with tqdm.external_write_mode():  # el mensaje en su línea, no tras la barra
                run.say(f"Entrenamiento detenido en el paso {run.step} (época {run.epoch + 1}).")
            break
    bar.close()
    run.tokens_seen += stats.tokens
    return stats


def _batches(run: Run) -> Iterable[Batch]:
    """Iterador de los lotes de la época; al reanudar, con el generador como estaba."""
    pending, run.pending_rng = run.pending_rng, None
    if pending is not None and run.batch_in_epoch == 0:
        torch.set_rng_state(pending)  # guardado al final de una época
    batches = iter(run.loader)  # el DataLoader toma una semilla del generador global
    if pending is not None and run.batch_in_epoch > 0:
        torch.set_rng_state(pending)  # guardado a mitad de época, tras crear el iterador
    return batches


def _maybe_estimate(run: Run) -> None:
    """Tras los primeros pasos, anuncia cuánto tardará el entrenamiento en esta máquina."""
    first, last = ESTIMATE_STEPS
    local_step = len(run.result.train_losses)  # pasos de esta sesión
    if local_step == first:
        run.estimate_from = time.perf_counter()
    if local_step != last or run.estimate_from is None:
        return
    per_step = (time.perf_counter() - run.estimate_from) / (last - first)
    full = run.elapsed() + per_step * (run.total_steps - run.step)
    text = (
        f"Estimación en esta máquina: ~{_es(full / 60, '.0f' if full >= 600 else '.1f')} min para "
        f"{run.cfg.epochs} épocas ({_es(1 / per_step)} pasos/s)"
    )
    cap = run.cfg.max_minutes
    if cap is not None and full > cap * 60:
        reached = (run.step + (cap * 60 - run.elapsed()) / per_step) / len(run.loader)
        text += (
            f"; el tope de {_es(cap, 'g')} min lo corta hacia la época {_es(reached)}"
            " y el coseno termina igual"
        )
    with tqdm.external_write_mode():
        run.say(text + ".")


def _es(x: float, spec: str = ".1f") -> str:
    """Número con coma decimal: ``_es(10.54)`` → «10,5»."""
    return format(x, spec).replace(".", ",")


# ---------------------------------------------------------------- validación y puntos de control


def end_epoch(run: Run, stats: EpochStats, evaluate: EvalFn) -> None:
    """Valida, anota la época en el historial y guarda ``best.pt`` y ``last.pt``.

    Tras un tope de tiempo a mitad de época se valida igual (``last.pt`` ya se guardó en
    el bucle, con el lote siguiente). En las últimas ``cfg.average_last`` épocas guarda
    además una copia de los pesos, para promediarlos al final.
    """
    cfg, result = run.cfg, run.result
    with autocast(run.rt.device):
        val_loss, val_ppl = evaluate(run.model, run.val_loader, PAD_IDX)
    done = stats.next_batch - stats.first_batch
    losses = result.train_losses[len(result.train_losses) - done :]
    train_mean = sum(losses) / max(1, len(losses))
    seconds = time.perf_counter() - stats.started
    result.history.append(
        {
            "epoch": run.epoch + 1,
            "step": run.step,
            "train_loss": train_mean,
            "val_loss": val_loss,
            "val_ppl": val_ppl,
            "tokens_per_second": stats.tokens / seconds,
            "seconds": seconds,
            "elapsed": run.elapsed(),
        }
    )
    run.say(
        f"Época {run.epoch + 1}/{cfg.epochs}: pérdida de entrenamiento {train_mean:.3f}, "
        f"validación {val_loss:.3f} (perplejidad {val_ppl:.2f}), "
        f"{stats.tokens / seconds:,.0f} tokens/s, {seconds:.1f} s."
    )
    if cfg.average_last > 1 and _epochs_left(run, stats) < cfg.average_last:
        run.recent = (run.recent + [_cpu_state(run.model)])[-cfg.average_last :]
    partial = stats.stop is not None and stats.next_batch < len(run.loader)
    run.epoch, run.batch_in_epoch = (run.epoch, stats.next_batch) if partial else (run.epoch + 1, 0)
    if run.rt.main:
        if val_loss < run.best_val:
            run.best_val = val_loss
            state = run.checkpoint(run.epoch, run.batch_in_epoch)
            save_checkpoint(run.out_dir / "best.pt", _without(state, RESUME_KEYS))
        if not partial:
            save_checkpoint(run.out_dir / "last.pt", run.checkpoint(run.epoch, 0))
    run.rt.barrier()


def _epochs_left(run: Run, stats: EpochStats) -> float:
    """Épocas que quedan tras esta: las de la receta o, con tope de tiempo, las que caben.

    Con el tope, a la velocidad de esta época (validación incluida); así el promedio de
    ``average_last`` épocas usa las últimas aunque el tope corte antes de ``cfg.epochs``.
    """
    left = run.cfg.epochs - (run.epoch + 1)
    done = stats.next_batch - stats.first_batch
    if run.cfg.max_minutes is not None and done > 0:
        per_epoch = (time.perf_counter() - stats.started) / done * len(run.loader)
        left = min(left, (run.cfg.max_minutes * 60 - run.elapsed()) / per_epoch)
    return left


def _average(states: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {
        k: (sum(s[k].float() for s in states) / len(states)).to(states[0][k].dtype)
        if states[0][k].is_floating_point()
        else states[0][k]
        for k in states[0]
    }


def _cpu_state(model: nn.Module) -> dict[str, Tensor]:
    return {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}


def _timed_cosine(
    warmup: int, total_steps: int, seconds: float, clock: dict
) -> Callable[[int], float]:
    """Coseno con calentamiento cuyo avance es el mayor entre pasos dados y tiempo gastado.

    Con un tope de tiempo (``max_minutes``), la tasa llega a 0 al agotarse el tiempo aunque
    no se hayan dado ``total_steps`` pasos (en una CPU lenta, por ejemplo). El reloj empieza
    al comenzar el entrenamiento; al reanudar, vuelve a empezar.
    """

    def factor(epoch: int) -> float:
        step = epoch + 1
        if step <= warmup:
            return cosine_warmup_factor(step, warmup, total_steps)
        fraction = min(1.0, (time.perf_counter() - clock["start"]) / seconds)
        by_time = warmup + fraction * (total_steps - warmup)
        return cosine_warmup_factor(max(step, math.ceil(by_time)), warmup, total_steps)

    return factor


# ---------------------------------------------------------------- traducción final


def translate_test(
    run: Run, evaluate: EvalFn, data_dir=None, sums=None, corpus_bleu: BleuFn | None = None
) -> None:
    """Elige los pesos (promedio o ``best.pt``), traduce la prueba con haz y mide su BLEU."""
    cfg, result = run.cfg, run.result
    result.decoded_with = _choose_weights(
        run.model, run.recent, run.val_loader, run.out_dir, run.best_val, run.say, evaluate
    )
    test_pairs = read_split("test_2016_flickr", data_dir, sums=sums)[: cfg.max_test_pairs]
    t0 = time.perf_counter()
    with autocast(run.rt.device):
        hypotheses = translate(
            run.model, run.tokenizer, [de for de, _ in test_pairs], beam_size=cfg.beam_size,
            length_penalty=cfg.length_penalty, batch_size=cfg.decode_batch_size,
        )  # fmt: skip
    result.decode_seconds = time.perf_counter() - t0
    (run.out_dir / TRANSLATIONS_FILE).write_text(
        "".join(f"{h}\n" for h in hypotheses), encoding="utf-8"
    )
    references = [en for _, en in test_pairs]
    result.bleu = (
        bleu(hypotheses, references)
        if corpus_bleu is None
        else _student_bleu(corpus_bleu, hypotheses, references)
    )
    run.say(
        f"Prueba ({len(test_pairs)} frases, haz {cfg.beam_size}, "
        f"{result.decode_seconds:.1f} s): {result.bleu}"
    )


def _student_bleu(corpus_bleu: BleuFn, hypotheses: list[str], references: list[str]):
    """``BleuReport`` con el ``corpus_bleu`` del cuaderno 07 (la copia del paquete que ve el
    núcleo al calificar no lleva ``course.translation.decoding.bleu``, que es una respuesta)."""
    lower = [h.lower() for h in hypotheses], [r.lower() for r in references]
    return BleuReport(
        score=float(corpus_bleu(hypotheses, references)),
        lowercase_score=float(corpus_bleu(*lower)),
        signature=_signature(lowercase=False),
        lowercase_signature=_signature(lowercase=True),
    )


def _signature(lowercase: bool) -> str:
    """Firma de sacreBLEU (dice el número de referencias, así que se evalúa una frase)."""
    metric = sacrebleu.BLEU(lowercase=lowercase)
    metric.corpus_score(["."], [["."]])
    return str(metric.get_signature())


def _choose_weights(
    model, recent, val_loader, out_dir: Path, best_val: float, say, evaluate: EvalFn
) -> str:
    """Deja en ``model`` los pesos con menor pérdida de validación: promedio o ``best.pt``.

    El promedio ganador se guarda en ``average.pt``; si gana ``best.pt``, se borra un
    ``average.pt`` anterior, de modo que :func:`final_checkpoint` siempre dice la verdad.
    """
    device = next(model.parameters()).device
    best = load_checkpoint(out_dir / "best.pt", map_location=device)
    if len(recent) > 1:
        model.load_state_dict(_average(recent))
        with autocast(device):
            avg_loss, _ = evaluate(model, val_loader, PAD_IDX)
        if avg_loss <= best_val:
            say(
                f"Se traduce con el promedio de las últimas {len(recent)} épocas "
                f"(validación {avg_loss:.3f} <= {best_val:.3f} del mejor punto de control)."
            )
            save_checkpoint(out_dir / AVERAGE_FILE, {**best, "model": model.state_dict()})
            return f"promedio de {len(recent)} épocas"
    (out_dir / AVERAGE_FILE).unlink(missing_ok=True)
    model.load_state_dict(best["model"])
    say(f"Se traduce con best.pt (validación {best_val:.3f}).")
    return "best.pt"


# ---------------------------------------------------------------- el bucle entero


def train(
    cfg: TrainConfig,
    out_dir: str | os.PathLike,
    *,
    data_dir: str | os.PathLike | None = None,
    sums: Mapping[str, str] | None = None,
    resume: bool = False,
    device: str | torch.device | None = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
    decode_test: bool = True,
    max_steps: int | None = None,
    train_step: StepFn | None = None,
    evaluate: EvalFn | None = None,
    collate: CollateFn | None = None,
    corpus_bleu: BleuFn | None = None,
) -> TrainResult:
    """Entrena un Transformer alemán→inglés en Multi30k con la receta ``cfg``.

    Preparación (:func:`setup`), épocas (:func:`train_epoch`, :func:`end_epoch`) y
    traducción final (:func:`translate_test`). Escribe en ``out_dir``: ``last.pt``,
    ``best.pt``, ``metrics.json`` y, si ``decode_test``, las traducciones de la prueba.

    Args:
        cfg: receta (``course.translation.config.PRESETS``).
        out_dir: carpeta de resultados.
        data_dir, sums: dónde están los datos y sus sumas (como ``course.translation.data.read_split``).
        resume: continúa desde ``out_dir/last.pt`` si existe (mismo paso, mismo orden de lotes).
        device: fuerza un dispositivo; por omisión CUDA si hay, si no CPU.
        progress: barra ``tqdm`` (solo en el proceso 0).
        log: función que recibe los mensajes de progreso en español.
        max_steps: detiene el entrenamiento tras este paso global (simula una interrupción).
        train_step, evaluate: un paso (dentro de ``autocast``) y la validación, con las
            firmas de ``course.reference.translation``, que se importa solo si falta
            alguno (el zip del laboratorio 7 no la lleva; el cuaderno pasa los suyos).
        collate, corpus_bleu: los lotes y el BLEU de la prueba con las funciones del
            cuaderno (firmas de ``course.reference.translation``); por omisión, los de
            ``course.translation.data`` y ``course.translation.decoding``.
    """
    if train_step is None or evaluate is None:
        from course.reference import translation

        train_step = train_step or translation.train_step
        evaluate = evaluate or translation.evaluate
    rt = setup_runtime(device)
    run = setup(cfg, Path(out_dir), rt, log, resume, data_dir, sums, collate)
    if rt.device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(rt.device)
    run.clock["start"] = time.perf_counter()
    while run.epoch < cfg.epochs:
        stats = train_epoch(run, train_step, progress, max_steps)
        if stats.stop == "pasos" and stats.next_batch < len(run.loader):
            break  # interrupción: se reanuda desde last.pt, ya guardado
        end_epoch(run, stats, evaluate)
        if stats.stop:
            break
    _finish_training(run)
    if decode_test and rt.main and run.result.history:
        translate_test(run, evaluate, data_dir, sums, corpus_bleu)
    if rt.main:
        (run.out_dir / METRICS_FILE).write_text(
            json.dumps(run.result.to_json(), indent=2, ensure_ascii=False, default=str),
            encoding="utf-8",
        )
    rt.barrier()
    return run.result


def _finish_training(run: Run) -> None:
    """Anota pasos, tiempo, *tokens*/s y memoria máxima de la GPU en ``run.result``."""
    result = run.result
    result.step = run.step
    result.train_seconds = run.elapsed()
    result.tokens_per_second = run.tokens_seen / max(result.train_seconds, 1e-9)
    if run.rt.device.type == "cuda":
        result.peak_memory_mb = torch.cuda.max_memory_allocated(run.rt.device) / 2**20
    run.say(
        f"Entrenamiento: {result.step} pasos en {result.train_seconds:.1f} s, "
        f"{result.tokens_per_second:,.0f} tokens/s de media."
    )
