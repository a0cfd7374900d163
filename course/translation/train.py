"""Bucle de entrenamiento compartido por el cuaderno 07 y ``python -m course train``.

Un paso (forzado del profesor, suavizado de etiquetas, recorte del gradiente, AdamW y
planificador) y la validación son dos funciones que :func:`train` recibe como argumentos:
por omisión, ``train_step`` y ``evaluate`` de ``course.reference.translation``; el
cuaderno 07 pasa las que escribe el estudiante. Este módulo añade lo que rodea a esos
pasos, y se lee de arriba abajo:

1. piezas: ``torchrun`` (:class:`Runtime`), motivos de parada (:class:`Stop`), resultado;
2. preparación (:func:`setup`): datos, modelo (con los núcleos fusionados de PyTorch si la
   receta lo pide: ``use_fused_kernels``), AdamW, calentamiento y coseno
   (:class:`~course.translation.schedule.WarmupCosine`) y, al reanudar, ``last.pt``;
3. una época (:func:`train_epoch`): pasos con barra ``tqdm`` (pérdida y *tokens*/s),
   tope de tiempo y, tras los primeros pasos, una estimación de la duración;
4. validación y puntos de control (:func:`end_epoch`): ``last.pt``, para reanudar tras una
   interrupción, y ``best.pt``, para traducir (``course.translation.checkpoint``);
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
import enum
import functools
import json
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import sacrebleu
import torch
import torch.distributed as dist
from torch import Tensor, nn
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.data import DataLoader
from tqdm.auto import tqdm

from course.reference.model import Transformer, count_parameters, use_fused_kernels
from course.reference.training import make_optimizer
from course.text import number
from course.translation import threads
from course.translation.checkpoint import (
    AVERAGE_FILE,
    BEST_FILE,
    CHECKPOINT_VERSION,
    LAST_FILE,
    CheckpointError,
    for_translation,
    load_checkpoint,
    save_checkpoint,
)

# el cuaderno 07 importa estos nombres de aquí
from course.translation.checkpoint import final_checkpoint as final_checkpoint
from course.translation.checkpoint import load_model as load_model
from course.translation.config import ModelConfig, TrainConfig
from course.translation.data import (
    PAD_IDX,
    Batch,
    DeviceBatches,
    PairDataset,
    build_tokenizer,
    make_loader,
    read_split,
)
from course.translation.data.tokenizer import SubwordTokenizer
from course.translation.decoding import BleuReport, bleu, translate
from course.translation.schedule import WarmupCosine

TRANSLATIONS_FILE = "test_2016_flickr.en.txt"
METRICS_FILE = "metrics.json"

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


class Stop(enum.Enum):
    """Por qué una época termina antes de su último lote (el valor se imprime)."""

    STEPS = "límite de pasos"  # max_steps: simula una interrupción; se reanuda con last.pt
    TIME = "tope de tiempo"  # cfg.max_minutes: se valida y se traduce igual


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


def attention_backends(device: torch.device):
    """En CUDA, la atención fusionada sin el núcleo de cuDNN; en CPU, nada cambia.

    cuDNN prepara un plan para cada forma nueva de la atención, y los lotes por cubetas
    traen una forma nueva casi en cada paso: con él, 4-5 pasos/s de la receta ``gpu``; sin
    él (los núcleos *flash* y de memoria eficiente), 42-50 (H200, docs/benchmarks.md).
    """
    if device.type != "cuda":
        return contextlib.nullcontext()
    return sdpa_kernel(
        [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
    )


def autocast(device: torch.device):
    """``bfloat16`` con ``autocast`` en CUDA; en CPU, precisión completa."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


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


class Data(NamedTuple):
    """Tokenizador y lotes: de entrenamiento (por cubetas de longitud) y de validación."""

    tokenizer: SubwordTokenizer
    train: DataLoader | DeviceBatches  # DeviceBatches en GPU con el collate de la referencia
    val: DataLoader


@dataclass
class Position:
    """Dónde va el entrenamiento: lo que ``last.pt`` guarda para seguir desde ahí."""

    step: int = 0  # pasos dados, contando los de antes de reanudar
    epoch: int = 0  # época en curso, desde 0
    batch: int = 0  # primer lote por dar de la época en curso
    best_val: float = math.inf  # menor pérdida de validación (la de best.pt)
    recent: list[dict[str, Tensor]] = field(default_factory=list)  # pesos por promediar
    rng: Tensor | None = None  # generador de last.pt; se restaura al crear los lotes


@dataclass
class Run:
    """Lo que comparten las partes del bucle: receta, datos, modelo, optimización y posición."""

    cfg: TrainConfig
    rt: Runtime
    out_dir: Path
    say: Callable[[str], None]  # mensajes para personas (solo en el proceso 0)
    data: Data
    model: nn.Module  # sin DDP: el que se valida, se guarda y traduce
    train_model: nn.Module  # el que da los pasos (DDP con torchrun; si no, ``model``)
    optimizer: torch.optim.Optimizer
    scheduler: WarmupCosine  # también el reloj del tope de tiempo
    at: Position
    result: TrainResult
    estimate_from: float | None = None  # instante del paso ESTIMATE_STEPS[0] de esta sesión
    saved_at: float = field(default_factory=time.perf_counter)  # el último last.pt guardado

    def save_last(self) -> None:
        """Guarda ``last.pt`` (solo el proceso 0) y anota cuándo."""
        if self.rt.main:
            save_checkpoint(self.out_dir / LAST_FILE, self.checkpoint())
        self.saved_at = time.perf_counter()

    def checkpoint(self) -> dict:
        """Estado para ``last.pt``: reanudar en la época ``at.epoch``, lote ``at.batch``."""
        return {
            "version": CHECKPOINT_VERSION,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "step": self.at.step,
            "epoch": self.at.epoch,
            "batch_in_epoch": self.at.batch,
            "best_val_loss": self.at.best_val,
            "history": self.result.history,
            "recent": self.at.recent,
            "model_config": dataclasses.asdict(self.model.config),
            "train_config": dataclasses.asdict(self.cfg),
            "seed": self.cfg.seed,
            "tokenizer": self.data.tokenizer.tokenizer.to_str(),
            "rng_cpu": torch.get_rng_state(),
        }


def _student_batch(collate: CollateFn, pairs: list[tuple[Tensor, Tensor]]) -> Batch:
    """El lote que forma el ``collate`` del estudiante, como ``Batch`` (con ``.to``)."""
    return Batch(*collate(pairs, PAD_IDX))


def load_data(
    cfg: TrainConfig, rt: Runtime, data_dir=None, sums=None, collate: CollateFn | None = None
) -> Data:
    """Tokenizador y lotes de entrenamiento (por cubetas de longitud) y de validación.

    Con ``collate`` (el del cuaderno 07), los lotes los forma esa función: la copia del
    paquete que ve el núcleo al calificar no lleva ``course.translation.data.collate``, que
    es una respuesta del laboratorio.
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
    if pin and collate is None:  # en GPU, los lotes se forman en ella (DeviceBatches)
        loader = DeviceBatches(train_set, loader.batch_sampler, rt.device)
    val_tokens = max(cfg.max_tokens, max(val_set.lengths))
    val_loader = make_loader(val_set, val_tokens, shuffle=False, pin_memory=pin, **batching)
    return Data(tokenizer, loader, val_loader)


def setup(
    cfg: TrainConfig, out_dir: Path, rt: Runtime, log: Callable[[str], None], resume: bool,
    data_dir=None, sums=None, collate: CollateFn | None = None,
) -> Run:  # fmt: skip
    """Datos, modelo, AdamW y planificador; con ``resume``, el estado de ``out_dir/last.pt``."""
    torch.manual_seed(cfg.seed)
    resumed = None  # un last.pt dañado se detecta antes de leer los datos
    if resume and (out_dir / LAST_FILE).is_file():
        resumed = load_checkpoint(out_dir / LAST_FILE)
    data = load_data(cfg, rt, data_dir, sums, collate)
    model = Transformer(cfg.model_config(data.tokenizer.vocab_size))
    use_fused_kernels(model, cfg.fused_kernels)
    model.to(rt.device)
    optimizer = make_optimizer(model, cfg.lr, cfg.weight_decay)
    total_steps = cfg.epochs * len(data.train)
    seconds = None if cfg.max_minutes is None else cfg.max_minutes * 60
    scheduler = WarmupCosine(optimizer, min(cfg.warmup_steps, total_steps), total_steps, seconds)
    result = TrainResult(
        out_dir, count_parameters(model), 0, device=str(rt.device), world_size=rt.world_size,
        model=model,
    )  # fmt: skip
    train_model = model
    if rt.distributed:
        ids = [rt.device.index] if rt.device.type == "cuda" else None
        train_model = nn.parallel.DistributedDataParallel(model, device_ids=ids)
    say = log if rt.main else (lambda _msg: None)
    run = Run(cfg, rt, out_dir, say, data, model, train_model, optimizer, scheduler,
              Position(), result)  # fmt: skip
    if resumed is not None:
        _restore(run, resumed)
    processes = f" × {rt.world_size} procesos" if rt.distributed else ""
    say(
        f"Modelo: {number(result.parameters)} parámetros · dispositivo {rt.device}{processes} · "
        f"{number(len(data.train.dataset))} pares de entrenamiento, "
        f"{number(len(data.train))} lotes por época."
    )
    if rt.device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(rt.device)  # la memoria máxima de entrenar
    return run


def _restore(run: Run, state: dict) -> None:
    """Continúa desde ``last.pt``: pesos, optimizador, planificador, posición y curvas."""
    # un punto de control anterior a un campo nuevo de ModelConfig lo toma por omisión
    if ModelConfig(**state["model_config"]) != run.model.config:
        raise CheckpointError(
            f"{run.out_dir / LAST_FILE} es de otro modelo ({state['train_config']['name']}): "
            f"usa otra carpeta con --out o entrena sin --resume."
        )
    run.model.load_state_dict(state["model"])
    run.optimizer.load_state_dict(state["optimizer"])
    run.scheduler.load_state_dict(state["scheduler"])
    run.at = Position(
        state["step"], state["epoch"], state["batch_in_epoch"], state["best_val_loss"],
        state.get("recent", []), rng=state["rng_cpu"],
    )  # fmt: skip
    run.result.history = state["history"]
    run.say(
        f"Reanudando desde {run.out_dir / LAST_FILE}: paso {number(run.at.step)}, "
        f"época {run.at.epoch + 1}."
    )


# ---------------------------------------------------------------- una época


@dataclass
class EpochStats:
    """Lo que deja una época (o el trozo que se dio de ella) para su validación."""

    first_batch: int  # primer lote dado en esta sesión
    next_batch: int  # lote siguiente al último dado (= lotes por época si terminó)
    started: float
    tokens: int = 0
    stop: Stop | None = None


SAVE_SECONDS = 60.0  # last.pt al final de una época, si el anterior tiene al menos esto
ESTIMATE_STEPS = (5, 25)  # la estimación mide la velocidad entre estos pasos de la sesión


def train_epoch(run: Run, train_step: StepFn, progress: bool, max_steps: int | None) -> EpochStats:
    """Da los pasos de la época ``run.at.epoch`` desde el lote ``run.at.batch``.

    Se para antes si se llega a ``max_steps`` o al tope de tiempo ``cfg.max_minutes``;
    entonces guarda ``last.pt`` con el lote siguiente, para reanudar ahí.
    """
    cfg, rt, at = run.cfg, run.rt, run.at
    run.data.train.batch_sampler.set_epoch(at.epoch)
    bar = tqdm(
        total=len(run.data.train), initial=at.batch, leave=False,
        desc=f"época {at.epoch + 1}/{cfg.epochs}", disable=not (progress and rt.main),
    )  # fmt: skip
    stats = EpochStats(at.batch, at.batch, time.perf_counter())
    for i, batch in enumerate(_batches(run)):
        if i < stats.first_batch:
            continue  # lotes ya vistos antes de la interrupción
        tokens = int((batch.tgt_out != PAD_IDX).sum())  # en la CPU: sin esperar a la GPU
        batch = batch.to(rt.device, non_blocking=True)
        with autocast(rt.device):
            loss = train_step(
                run.train_model, batch, run.optimizer, run.scheduler, PAD_IDX,
                cfg.label_smoothing, cfg.clip_norm,
            )  # fmt: skip
        at.step, at.batch, stats.next_batch = at.step + 1, i + 1, i + 1
        stats.tokens += tokens * rt.world_size
        run.result.train_losses.append(loss)
        rate = stats.tokens / max(time.perf_counter() - stats.started, 1e-9)
        bar.set_postfix(pérdida=number(loss, 3), tok_s=number(rate), refresh=False)
        bar.update()
        _maybe_estimate(run)
        stats.stop = _stop_reason(run, max_steps)
        if stats.stop or (cfg.save_every and at.step % cfg.save_every == 0):
            run.save_last()
        if stats.stop:
            with tqdm.external_write_mode():  # el mensaje en su línea, no tras la barra
                run.say(
                    f"Entrenamiento detenido en el paso {number(at.step)} "
                    f"(época {at.epoch + 1}): {stats.stop.value}."
                )
            break
    bar.close()
    return stats


def _stop_reason(run: Run, max_steps: int | None) -> Stop | None:
    """El tope de tiempo (se valida igual, como al final de una época) o ``max_steps``."""
    if run.cfg.max_minutes is not None and run.scheduler.elapsed() >= run.cfg.max_minutes * 60:
        return Stop.TIME
    if max_steps is not None and run.at.step >= max_steps:
        return Stop.STEPS
    return None


def _batches(run: Run) -> Iterable[Batch]:
    """Iterador de los lotes de la época; al reanudar, con el generador como estaba."""
    pending, run.at.rng = run.at.rng, None
    if pending is not None and run.at.batch == 0:
        torch.set_rng_state(pending)  # guardado al final de una época
    batches = iter(run.data.train)  # el DataLoader toma una semilla del generador global
    if pending is not None and run.at.batch > 0:
        torch.set_rng_state(pending)  # guardado a mitad de época, tras crear el iterador
    return batches


def _maybe_estimate(run: Run) -> None:
    """Tras los primeros pasos, anuncia cuánto tardará el entrenamiento en esta máquina.

    Mide entre los pasos ``ESTIMATE_STEPS`` de esta sesión (el primero de la sesión paga
    la puesta en marcha). Con tope de tiempo, dice también en qué época cortará.
    """
    first, last = ESTIMATE_STEPS
    session_step = len(run.result.train_losses)
    if session_step == first:
        run.estimate_from = time.perf_counter()
    if session_step != last or run.estimate_from is None:
        return
    per_step = (time.perf_counter() - run.estimate_from) / (last - first)
    steps_per_epoch, elapsed = len(run.data.train), run.scheduler.elapsed()
    full = elapsed + per_step * (run.cfg.epochs * steps_per_epoch - run.at.step)
    text = (
        f"Estimación en esta máquina: ~{number(full / 60, 0 if full >= 600 else 1)} min para "
        f"{run.cfg.epochs} épocas ({number(1 / per_step, 1)} pasos/s)"
    )
    cap = run.cfg.max_minutes
    if cap is not None and full > cap * 60:
        reached = (run.at.step + (cap * 60 - elapsed) / per_step) / steps_per_epoch
        text += (
            f"; el tope de {_minutes(cap)} min lo corta hacia la época {number(reached, 1)}"
            " y el coseno termina igual"
        )
    with tqdm.external_write_mode():
        run.say(text + ".")


def _minutes(value: float) -> str:
    """Minutos de una receta sin ceros de más: «2,5», «10»."""
    return number(value, 2).rstrip("0").rstrip(",")


# ---------------------------------------------------------------- validación y puntos de control


def end_epoch(run: Run, stats: EpochStats, evaluate: EvalFn) -> None:
    """Valida, anota la época en el historial y guarda ``best.pt`` y ``last.pt``.

    Tras un tope de tiempo a mitad de época se valida igual (``last.pt`` ya se guardó en
    el bucle, con el lote siguiente). En las últimas ``cfg.average_last`` épocas guarda
    además una copia de los pesos, para promediarlos al final.
    """
    cfg, at = run.cfg, run.at
    with autocast(run.rt.device):
        val_loss, val_ppl = evaluate(run.model, run.data.val, PAD_IDX)
    done = stats.next_batch - stats.first_batch
    losses = run.result.train_losses[len(run.result.train_losses) - done :]
    train_mean = sum(losses) / max(1, len(losses))
    seconds = time.perf_counter() - stats.started
    run.result.history.append(
        {
            "epoch": at.epoch + 1,
            "step": at.step,
            "train_loss": train_mean,
            "val_loss": val_loss,
            "val_ppl": val_ppl,
            "tokens_per_second": stats.tokens / seconds,
            "seconds": seconds,
            "elapsed": run.scheduler.elapsed(),
        }
    )
    run.say(
        f"Época {at.epoch + 1}/{cfg.epochs}: pérdida de entrenamiento {number(train_mean, 3)}, "
        f"validación {number(val_loss, 3)} (perplejidad {number(val_ppl, 2)}), "
        f"{number(stats.tokens / seconds)} tokens/s, {number(seconds, 1)} s."
    )
    per_epoch = seconds / done * len(run.data.train) if done else 0.0  # validación incluida
    if cfg.average_last > 1 and (
        _epochs_left(cfg, at.epoch, per_epoch, run.scheduler.elapsed()) < cfg.average_last
    ):
        at.recent = (at.recent + [_cpu_state(run.model)])[-cfg.average_last :]
    partial = stats.stop is not None and stats.next_batch < len(run.data.train)
    if not partial:
        at.epoch, at.batch = at.epoch + 1, 0
    if val_loss < at.best_val:
        at.best_val = val_loss
        if run.rt.main:
            save_checkpoint(run.out_dir / BEST_FILE, for_translation(run.checkpoint()))
    if not partial and _last_due(run, stats):
        run.save_last()
    run.rt.barrier()


def _last_due(run: Run, stats: EpochStats) -> bool:
    """¿Toca ``last.pt`` al final de la época? Al final, tras un tope o cada ``SAVE_SECONDS``.

    Con épocas de pocos segundos (en GPU), guardar cada época costaba más que entrenar:
    ``last.pt`` lleva el optimizador y los pesos por promediar (cientos de MB). Un corte
    pierde como mucho ``SAVE_SECONDS`` de entrenamiento.
    """
    elapsed = time.perf_counter() - run.saved_at
    return stats.stop is not None or run.at.epoch >= run.cfg.epochs or elapsed >= SAVE_SECONDS


def _epochs_left(cfg: TrainConfig, epoch: int, per_epoch: float, elapsed: float) -> float:
    """Épocas que quedan tras ``epoch``: las de la receta o, con tope de tiempo, las que caben.

    Con el tope, a ``per_epoch`` segundos por época (los de esta, validación incluida); así
    el promedio de ``average_last`` épocas usa las últimas aunque el tope corte antes de
    ``cfg.epochs``.
    """
    left = cfg.epochs - (epoch + 1)
    if cfg.max_minutes is not None and per_epoch > 0:
        left = min(left, (cfg.max_minutes * 60 - elapsed) / per_epoch)
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


# ---------------------------------------------------------------- traducción final


def translate_test(
    run: Run, evaluate: EvalFn, data_dir=None, sums=None, corpus_bleu: BleuFn | None = None
) -> None:
    """Elige los pesos (promedio o ``best.pt``), traduce la prueba con haz y mide su BLEU."""
    cfg, result = run.cfg, run.result
    result.decoded_with = _choose_weights(run, evaluate)
    test_pairs = read_split("test_2016_flickr", data_dir, sums=sums)[: cfg.max_test_pairs]
    t0 = time.perf_counter()
    with autocast(run.rt.device):
        hypotheses = translate(
            run.model, run.data.tokenizer, [de for de, _ in test_pairs], beam_size=cfg.beam_size,
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
        f"Prueba ({number(len(test_pairs))} frases, haz {cfg.beam_size}, "
        f"{number(result.decode_seconds, 1)} s): {result.bleu}"
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


def _choose_weights(run: Run, evaluate: EvalFn) -> str:
    """Deja en ``model`` los pesos con menor pérdida de validación: promedio o ``best.pt``.

    El promedio ganador se guarda en ``average.pt``; si gana ``best.pt``, se borra un
    ``average.pt`` anterior, de modo que :func:`final_checkpoint` siempre dice la verdad.
    """
    model, recent, best_val, out_dir = run.model, run.at.recent, run.at.best_val, run.out_dir
    device = next(model.parameters()).device
    best = load_checkpoint(out_dir / BEST_FILE, map_location=device)
    if len(recent) > 1:
        model.load_state_dict(_average(recent))
        with autocast(device):
            avg_loss, _ = evaluate(model, run.data.val, PAD_IDX)
        if avg_loss <= best_val:
            run.say(
                f"Se traduce con el promedio de las últimas {len(recent)} épocas "
                f"(validación {number(avg_loss, 3)} ≤ {number(best_val, 3)} del mejor punto de "
                "control)."
            )
            save_checkpoint(out_dir / AVERAGE_FILE, {**best, "model": model.state_dict()})
            return f"promedio de {len(recent)} épocas"
    (out_dir / AVERAGE_FILE).unlink(missing_ok=True)
    model.load_state_dict(best["model"])
    run.say(f"Se traduce con best.pt (validación {number(best_val, 3)}).")
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

    Escribe en ``out_dir``: ``last.pt``, ``best.pt``, ``metrics.json`` y, si ``decode_test``,
    las traducciones de la prueba. En CPU, ajusta los hilos a los núcleos libres
    (:mod:`course.translation.threads`).

    Args:
        cfg: receta (``course.translation.config.PRESETS``).
        out_dir: carpeta de resultados.
        data_dir, sums: dónde están los datos y sus sumas (``course.translation.data.read_split``).
        resume: continúa desde ``out_dir/last.pt`` si existe (mismo paso, mismo orden de lotes).
        device: fuerza un dispositivo; por omisión CUDA si hay, si no CPU.
        progress, log: barra ``tqdm`` (en el proceso 0) y quién recibe los mensajes.
        max_steps: detiene el entrenamiento tras este paso global (simula una interrupción).
        train_step, evaluate: un paso (dentro de ``autocast``) y la validación, con las
            firmas de ``course.reference.translation``, que se importa solo si falta
            alguno (el zip del laboratorio 7 no la lleva; el cuaderno pasa los suyos).
        collate, corpus_bleu: los lotes y el BLEU de la prueba con las funciones del
            cuaderno (firmas de ``course.reference.translation``); por omisión, los de
            ``course.translation.data`` y ``course.translation.decoding``.
    """
    train_step, evaluate = _with_reference(train_step, evaluate)
    rt = setup_runtime(device)
    with attention_backends(rt.device):  # hasta el final: también traduce
        run = setup(cfg, Path(out_dir), rt, log, resume, data_dir, sums, collate)
        run.scheduler.restart()  # el tope de tiempo cuenta desde aquí, no desde leer los datos
        _finish_training(run, _epochs(run, train_step, evaluate, progress, max_steps))
        if decode_test and rt.main and run.result.history:
            translate_test(run, evaluate, data_dir, sums, corpus_bleu)
    if rt.main:
        (run.out_dir / METRICS_FILE).write_text(_json(run.result.to_json()), encoding="utf-8")
    rt.barrier()
    return run.result


def _epochs(
    run: Run, train_step: StepFn, evaluate: EvalFn, progress: bool, max_steps: int | None
) -> int:
    """Las épocas que quedan (o hasta un tope); devuelve los *tokens* de destino entrenados."""
    rt, tokens = run.rt, 0
    with threads.beside_others(rt.device.type == "cpu" and not rt.distributed, run.say) as adjust:
        while run.at.epoch < run.cfg.epochs:
            adjust()  # un hilo menos por núcleo que ocupen otros programas
            stats = train_epoch(run, train_step, progress, max_steps)
            tokens += stats.tokens
            if stats.stop is Stop.STEPS and stats.next_batch < len(run.data.train):
                break  # interrupción: se reanuda desde last.pt, ya guardado
            end_epoch(run, stats, evaluate)
            if stats.stop:
                break
    return tokens


def _with_reference(train_step: StepFn | None, evaluate: EvalFn | None) -> tuple[StepFn, EvalFn]:
    """Las funciones que faltan, de ``course.reference.translation`` (solo entonces se importa)."""
    if train_step is None or evaluate is None:
        from course.reference import translation

        train_step = train_step or translation.train_step
        evaluate = evaluate or translation.evaluate
    return train_step, evaluate


def _json(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


def _finish_training(run: Run, tokens: int) -> None:
    """Anota pasos, tiempo, *tokens*/s y memoria máxima de la GPU en ``run.result``."""
    result = run.result
    result.step = run.at.step
    result.train_seconds = run.scheduler.elapsed()
    result.tokens_per_second = tokens / max(result.train_seconds, 1e-9)
    if run.rt.device.type == "cuda":
        result.peak_memory_mb = torch.cuda.max_memory_allocated(run.rt.device) / 2**20
    run.say(
        f"Entrenamiento: {number(result.step)} pasos en {number(result.train_seconds, 1)} s, "
        f"{number(result.tokens_per_second)} tokens/s de media."
    )
