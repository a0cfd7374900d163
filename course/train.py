"""Bucle de entrenamiento compartido por el cuaderno 07 y ``python -m course train``.

Un paso (forzado del profesor, suavizado de etiquetas, recorte del gradiente, AdamW y
planificador) y la validación son dos funciones que :func:`train` recibe como argumentos:
por omisión, ``train_step`` y ``evaluate`` de ``course.reference.translation``; el
cuaderno 07 pasa las que escribe el estudiante. Este módulo añade lo que rodea a esos pasos:

- dispositivo automático (CUDA si hay, si no CPU) y ``bfloat16`` con ``autocast`` en CUDA;
- calentamiento lineal y caída en coseno (``cosine_warmup_lambda`` del laboratorio 6);
- barra de progreso ``tqdm`` con la pérdida y los *tokens*/s;
- pérdida y perplejidad de validación al final de cada época;
- puntos de control ``last.pt`` (modelo, optimizador, planificador, paso, configuración,
  semilla, tokenizador), para reanudar tras una interrupción, y ``best.pt`` (lo mismo
  sin el estado del optimizador), para traducir;
- ``DistributedDataParallel`` cuando se lanza con ``torchrun`` (NCCL en GPU, gloo en CPU);
  cada proceso recibe lotes distintos (``TokenBucketSampler(rank=, world_size=)``).

Los *tokens*/s cuentan los *tokens* de destino que no son relleno (los que puntúa la
pérdida), sumados sobre todos los procesos.
"""

import contextlib
import dataclasses
import json
import math
import os
import time
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import Tensor, nn
from tqdm.auto import tqdm

from course.config import ModelConfig, TrainConfig
from course.data import PAD_IDX, Batch, PairDataset, build_tokenizer, make_loader, read_split
from course.data.tokenizer import SubwordTokenizer
from course.decoding import BleuReport, bleu, translate
from course.labs import CourseError
from course.reference.model import Transformer, count_parameters
from course.reference.multihead import MultiHeadAttention, merge_heads, split_heads
from course.reference.training import cosine_warmup_factor, cosine_warmup_lambda, make_optimizer

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


class CheckpointError(CourseError):
    """Punto de control ilegible, incompleto o de otra receta (mensaje en español)."""


# ---------------------------------------------------------------- atención fusionada


def _fused_forward(
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


def use_fused_attention(model: nn.Module, enabled: bool = True) -> nn.Module:
    """Cambia la atención de cada ``MultiHeadAttention`` de ``model`` por la fusionada de PyTorch.

    Mismos parámetros y mismas cuentas (hasta el redondeo), pero sin materializar la
    matriz de pesos (B, H, T_q, T_k) ni devolverla: ``model.decode`` devuelve ``None``
    como pesos cruzados. Los puntos de control son intercambiables con el modelo de
    referencia; para dibujar mapas de atención, usa ``enabled=False``. Devuelve ``model``.
    """
    for module in model.modules():
        if isinstance(module, MultiHeadAttention):
            if enabled:
                module.forward = types.MethodType(_fused_forward, module)
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
    use_fused_attention(model, fused)
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


# ---------------------------------------------------------------- bucle


def _average(states: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {
        k: (sum(s[k].float() for s in states) / len(states)).to(states[0][k].dtype)
        if states[0][k].is_floating_point()
        else states[0][k]
        for k in states[0]
    }


def _cpu_state(model: nn.Module) -> dict[str, Tensor]:
    return {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}


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
) -> TrainResult:
    """Entrena un Transformer alemán→inglés en Multi30k con la receta ``cfg``.

    Escribe en ``out_dir``: ``last.pt`` (cada época, y cada ``cfg.save_every`` pasos),
    ``best.pt`` (la menor pérdida de validación), ``metrics.json`` y, si ``decode_test``,
    las traducciones del conjunto de prueba (``test_2016_flickr.en.txt``, una por línea).

    Args:
        cfg: receta (``course.config.PRESETS``).
        out_dir: carpeta de resultados.
        data_dir, sums: dónde están los datos y sus sumas (como ``course.data.read_split``).
        resume: continúa desde ``out_dir/last.pt`` si existe (mismo paso, mismo orden de lotes).
        device: fuerza un dispositivo; por omisión CUDA si hay, si no CPU.
        progress: barra ``tqdm`` (solo en el proceso 0).
        log: función que recibe los mensajes de progreso en español.
        max_steps: detiene el entrenamiento tras este paso global (simula una interrupción).
        train_step: un paso de optimización, con la firma de
            ``course.reference.translation.train_step``; se llama dentro de ``autocast``.
        evaluate: pérdida y perplejidad de validación, con la firma de
            ``course.reference.translation.evaluate``; también decide entre el promedio
            de pesos y ``best.pt``.

    Sin ``train_step`` o ``evaluate`` se usan los de la referencia, que se importan solo
    entonces: el zip del laboratorio 7 no lleva esa referencia (son sus soluciones) y el
    cuaderno pasa las funciones del estudiante.
    """
    if train_step is None or evaluate is None:
        from course.reference import translation

        train_step = train_step or translation.train_step
        evaluate = evaluate or translation.evaluate
    rt = setup_runtime(device)
    out_dir = Path(out_dir)
    say = log if rt.main else (lambda _msg: None)
    torch.manual_seed(cfg.seed)
    # un punto de control dañado se detecta antes de leer los datos o construir el modelo
    resumed = None
    if resume and (out_dir / "last.pt").is_file():
        resumed = load_checkpoint(out_dir / "last.pt")

    # datos: el proceso 0 entrena (o lee) el tokenizador antes que los demás
    if rt.main:
        tokenizer = build_tokenizer(cfg.vocab_size, data_dir, sums=sums)
    rt.barrier()
    if not rt.main:
        tokenizer = build_tokenizer(cfg.vocab_size, data_dir, sums=sums)
    train_pairs = read_split("train", data_dir, sums=sums)[: cfg.max_train_pairs]
    val_pairs = read_split("val", data_dir, sums=sums)[: cfg.max_val_pairs]
    train_set = PairDataset(train_pairs, tokenizer)
    keep = [i for i, n in enumerate(train_set.lengths) if n <= cfg.max_sentence_tokens]
    if len(keep) < len(train_set):
        train_set.src = [train_set.src[i] for i in keep]
        train_set.tgt = [train_set.tgt[i] for i in keep]
    val_set = PairDataset(val_pairs, tokenizer)
    pin = rt.device.type == "cuda"
    loader = make_loader(
        train_set,
        cfg.max_tokens,
        seed=cfg.seed,
        rank=rt.rank,
        world_size=rt.world_size,
        pin_memory=pin,
    )
    val_loader = make_loader(
        val_set, max(cfg.max_tokens, max(val_set.lengths)), shuffle=False, pin_memory=pin
    )

    # modelo, optimizador y planificador
    model_config = cfg.model_config(tokenizer.vocab_size)
    model = Transformer(model_config)
    use_fused_attention(model, cfg.fused_attention)
    model.to(rt.device)
    parameters = count_parameters(model)
    optimizer = make_optimizer(model, cfg.lr, cfg.weight_decay)
    steps_per_epoch = len(loader)
    total_steps = cfg.epochs * steps_per_epoch
    warmup = min(cfg.warmup_steps, total_steps)
    clock = {"start": time.perf_counter()}
    if cfg.max_minutes is None:
        schedule = cosine_warmup_lambda(warmup, total_steps)
    else:
        schedule = _timed_cosine(warmup, total_steps, cfg.max_minutes * 60, clock)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)

    result = TrainResult(
        out_dir, parameters, 0, device=str(rt.device), world_size=rt.world_size, model=model
    )
    step, epoch, batch_in_epoch, best_val = 0, 0, 0, math.inf
    recent: list[dict[str, Tensor]] = []
    pending_rng = None
    if resumed is not None:
        state = resumed
        if state["model_config"] != dataclasses.asdict(model_config):
            raise CheckpointError(
                f"{out_dir / 'last.pt'} es de otro modelo ({state['train_config']['name']}): "
                f"usa otra carpeta con --out o entrena sin --resume."
            )
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        step, epoch, batch_in_epoch = state["step"], state["epoch"], state["batch_in_epoch"]
        best_val, result.history = state["best_val_loss"], state["history"]
        recent = state.get("recent", [])
        pending_rng = state["rng_cpu"]  # se restaura en el mismo punto en que se guardó
        say(f"Reanudando desde {out_dir / 'last.pt'}: paso {step}, época {epoch + 1}.")

    train_model: nn.Module = model
    if rt.distributed:
        ids = [rt.device.index] if rt.device.type == "cuda" else None
        train_model = nn.parallel.DistributedDataParallel(model, device_ids=ids)

    def state_dict(next_epoch: int, next_batch: int) -> dict:
        return {
            "version": CHECKPOINT_VERSION,
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "step": step,
            "epoch": next_epoch,
            "batch_in_epoch": next_batch,
            "best_val_loss": best_val,
            "history": result.history,
            "recent": recent,
            "model_config": dataclasses.asdict(model_config),
            "train_config": dataclasses.asdict(cfg),
            "seed": cfg.seed,
            "tokenizer": tokenizer.tokenizer.to_str(),
            "rng_cpu": torch.get_rng_state(),
        }

    say(
        f"Modelo: {parameters / 1e6:.2f} M parámetros · dispositivo {rt.device}"
        f"{f' × {rt.world_size} procesos' if rt.distributed else ''} · "
        f"{len(train_set)} pares de entrenamiento, {steps_per_epoch} lotes por época."
    )
    if rt.device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(rt.device)
    started = clock["start"] = time.perf_counter()
    tokens_seen, stop, timed_out = 0, False, False
    while epoch < cfg.epochs and not stop:
        loader.batch_sampler.set_epoch(epoch)
        bar = tqdm(
            total=steps_per_epoch,
            initial=batch_in_epoch,
            desc=f"época {epoch + 1}/{cfg.epochs}",
            disable=not (progress and rt.main),
            leave=False,
        )
        epoch_start, epoch_tokens = time.perf_counter(), 0
        if pending_rng is not None and batch_in_epoch == 0:
            torch.set_rng_state(pending_rng)  # guardado al final de una época
        batches = iter(loader)  # el DataLoader toma una semilla del generador global
        if pending_rng is not None and batch_in_epoch > 0:
            torch.set_rng_state(pending_rng)  # guardado a mitad de época, tras crear el iterador
        pending_rng, first_batch, i = None, batch_in_epoch, batch_in_epoch - 1
        for i, batch in enumerate(batches):
            if i < batch_in_epoch:
                continue  # lotes ya vistos antes de la interrupción
            batch = batch.to(rt.device, non_blocking=True)
            with autocast(rt.device):
                loss = train_step(
                    train_model, batch, optimizer, scheduler, PAD_IDX, cfg.label_smoothing,
                    cfg.clip_norm,
                )  # fmt: skip
            step += 1
            tokens = int((batch.tgt_out != PAD_IDX).sum()) * rt.world_size
            epoch_tokens += tokens
            result.train_losses.append(loss)
            rate = epoch_tokens / max(time.perf_counter() - epoch_start, 1e-9)
            bar.set_postfix(pérdida=f"{loss:.3f}", tok_s=f"{rate:,.0f}")
            bar.update()
            if cfg.save_every and step % cfg.save_every == 0 and rt.main:
                save_checkpoint(out_dir / "last.pt", state_dict(epoch, i + 1))
            elapsed_min = (time.perf_counter() - started) / 60
            timed_out = cfg.max_minutes is not None and elapsed_min >= cfg.max_minutes
            if (max_steps is not None and step >= max_steps) or timed_out:
                stop = True
                if rt.main:
                    save_checkpoint(out_dir / "last.pt", state_dict(epoch, i + 1))
                say(f"Entrenamiento detenido en el paso {step} (época {epoch + 1}).")
                break
        bar.close()
        tokens_seen += epoch_tokens
        partial = stop and i + 1 < steps_per_epoch
        if partial and not timed_out:
            break  # interrupción: se reanuda desde last.pt, ya guardado
        with autocast(rt.device):
            val_loss, val_ppl = evaluate(model, val_loader, PAD_IDX)
        this_epoch = result.train_losses[-(i + 1 - first_batch) :]
        train_mean = sum(this_epoch) / max(1, len(this_epoch))
        seconds = time.perf_counter() - epoch_start
        result.history.append(
            {
                "epoch": epoch + 1,
                "step": step,
                "train_loss": train_mean,
                "val_loss": val_loss,
                "val_ppl": val_ppl,
                "tokens_per_second": epoch_tokens / seconds,
                "seconds": seconds,
                "elapsed": time.perf_counter() - started,
            }
        )
        say(
            f"Época {epoch + 1}/{cfg.epochs}: pérdida de entrenamiento {train_mean:.3f}, "
            f"validación {val_loss:.3f} (perplejidad {val_ppl:.2f}), "
            f"{epoch_tokens / seconds:,.0f} tokens/s, {seconds:.1f} s."
        )
        if cfg.average_last > 1 and epoch + 1 > cfg.epochs - cfg.average_last:
            recent = (recent + [_cpu_state(model)])[-cfg.average_last :]
        # tope de tiempo a mitad de época: se valida igual; last.pt ya se guardó en el bucle
        epoch, batch_in_epoch = (epoch, i + 1) if partial else (epoch + 1, 0)
        if rt.main:
            if val_loss < best_val:
                best_val = val_loss
                state = state_dict(epoch, batch_in_epoch)
                save_checkpoint(out_dir / "best.pt", _without(state, RESUME_KEYS))
            if not partial:
                save_checkpoint(out_dir / "last.pt", state_dict(epoch, 0))
        rt.barrier()

    result.step = step
    result.train_seconds = time.perf_counter() - started
    result.tokens_per_second = tokens_seen / max(result.train_seconds, 1e-9)
    if rt.device.type == "cuda":
        result.peak_memory_mb = torch.cuda.max_memory_allocated(rt.device) / 2**20
    say(
        f"Entrenamiento: {step} pasos en {result.train_seconds:.1f} s, "
        f"{result.tokens_per_second:,.0f} tokens/s de media."
    )

    if decode_test and rt.main and result.history:
        result.decoded_with = _choose_weights(
            model, recent, val_loader, out_dir, best_val, say, evaluate
        )
        test_pairs = read_split("test_2016_flickr", data_dir, sums=sums)[: cfg.max_test_pairs]
        t0 = time.perf_counter()
        with autocast(rt.device):
            hypotheses = translate(
                model,
                tokenizer,
                [de for de, _ in test_pairs],
                beam_size=cfg.beam_size,
                length_penalty=cfg.length_penalty,
                batch_size=cfg.decode_batch_size,
            )
        result.decode_seconds = time.perf_counter() - t0
        (out_dir / TRANSLATIONS_FILE).write_text(
            "".join(f"{h}\n" for h in hypotheses), encoding="utf-8"
        )
        result.bleu = bleu(hypotheses, [en for _, en in test_pairs])
        say(
            f"Prueba ({len(test_pairs)} frases, haz {cfg.beam_size}, "
            f"{result.decode_seconds:.1f} s): {result.bleu}"
        )
    if rt.main:
        (out_dir / METRICS_FILE).write_text(
            json.dumps(result.to_json(), indent=2, ensure_ascii=False, default=str),
            encoding="utf-8",
        )
    rt.barrier()
    return result


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
