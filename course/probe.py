"""Ayudas de las pruebas que necesitan ejecutar varias operaciones con el código del
estudiante de una vez: gradientes, llamadas con semilla, pasos de un optimizador.

En el cuaderno del estudiante se ejecutan tal cual. Al calificar, las pruebas corren en
el proceso de calificación y el objeto del estudiante vive en su núcleo
(``course.grading.remote``): entonces la ayuda entera se ejecuta allí, en el núcleo, y
solo vuelven sus resultados (tensores, números, textos).
"""

import functools
import importlib
import tempfile
from pathlib import Path

import torch
from torch import nn


def remotable(function):
    """Si algún argumento vive en otro núcleo, ``function`` se ejecuta en ese núcleo."""
    name = f"{function.__module__}:{function.__qualname__}"

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        for arg in (*args, *kwargs.values()):
            run = getattr(type(arg), "run_in_kernel", None)
            if run is not None:
                return run(arg, name, args, kwargs)
        return function(*args, **kwargs)

    return wrapper


@remotable
def gradients(function, *inputs, upstream=None, pick=None):
    """Salida y gradientes de ``sum(function(*inputs)[pick] * upstream)``.

    Los tensores de coma flotante de ``inputs`` se copian como hojas con gradiente.
    Devuelve ``(salida, gradientes de las entradas, gradientes de los parámetros)``:
    la salida sin grafo; una lista con el gradiente de cada entrada (``None`` si no es
    un tensor de coma flotante o no lo recibe); un diccionario nombre -> gradiente de
    los parámetros si ``function`` es un ``nn.Module``.
    """
    leaves = [t.detach().clone().requires_grad_() if _is_float_tensor(t) else t for t in inputs]
    output = function(*leaves)
    picked = output if pick is None else output[pick]
    (picked if upstream is None else picked * upstream).sum().backward()
    parameters = dict(function.named_parameters()) if isinstance(function, nn.Module) else {}
    return (
        _detached(output),
        [t.grad if _is_float_tensor(t) else None for t in leaves],
        {name: p.grad for name, p in parameters.items()},
    )


@remotable
def seeded(seed, function, *args, **kwargs):
    """``function(*args, **kwargs)`` justo después de ``torch.manual_seed(seed)``."""
    torch.manual_seed(seed)
    return _detached(function(*args, **kwargs))


@remotable
def module(anchor, name: str):
    """El módulo ``name`` importado donde vive ``anchor`` (un objeto del estudiante).

    Sirve para crear objetos (un modelo, un optimizador) junto al código del estudiante
    cuando ese código los va a modificar: al calificar, en su núcleo.
    """
    return importlib.import_module(name)


PATH = "<ruta de un archivo temporal>"  # marcador para :func:`with_output_file`


@remotable
def with_output_file(function, *args):
    """``function(*args)`` con el marcador :data:`PATH` cambiado por un archivo temporal.

    Devuelve ``(resultado, texto del archivo)``; el texto es ``None`` si no se escribió.
    """
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "salida.txt"
        result = function(*(path if isinstance(arg, str) and arg == PATH else arg for arg in args))
        text = path.read_text(encoding="utf-8") if path.is_file() else None
    return _detached(result), text


@remotable
def read_files(folder, names, limit: int = 64 * 2**20) -> dict:
    """Los bytes de cada archivo regular ``folder/name`` que existe (como mucho ``limit``)."""
    found = {}
    for name in names:
        path = Path(folder) / name
        if path.is_file() and not path.is_symlink() and path.stat().st_size <= limit:
            found[name] = path.read_bytes()
    return found


def _is_float_tensor(value) -> bool:
    return isinstance(value, torch.Tensor) and value.is_floating_point()


def _detached(value):
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, tuple | list):
        return type(value)(_detached(item) for item in value)
    return value


# --- Laboratorio 6: identidad de objetos, llamadas anotadas y modelos de prueba ---


def _follow(anchor, path: str):
    for name in path.split("."):
        anchor = getattr(anchor, name)
    return anchor


@remotable
def same_object(anchor, first: str, second: str) -> bool:
    """¿``anchor.<first>`` es el mismo objeto (``is``) que ``anchor.<second>``?

    Las rutas son atributos separados por puntos: ``"generator.weight"``.
    """
    return _follow(anchor, first) is _follow(anchor, second)


@remotable
def parameter_ids(owner) -> list[int]:
    """``id`` de cada parámetro de un ``nn.Module`` o de un optimizador (``param_groups``).

    Solo sirven para compararse entre sí, con otra lista de esta ayuda en el mismo proceso.
    """
    if isinstance(owner, torch.optim.Optimizer):
        return [id(p) for group in owner.param_groups for p in group["params"]]
    return [id(p) for p in owner.parameters()]


@remotable
def recording_calls(function, *args, keyword: str = "on_step", **kwargs):
    """``function(*args, **kwargs, keyword=anotador)``; el anotador guarda cada llamada.

    Devuelve ``(resultado, llamadas)``: una tupla con los argumentos de cada llamada.
    """
    calls = []

    def record(*arguments, **named):
        calls.append((*arguments, *named.values()))

    result = function(*args, **kwargs, **{keyword: record})
    return _detached(result), _detached(calls)


class CopyOracle(nn.Module):
    """«Modelo» de mentira para probar una decodificación: copia el origen y después emite EOS.

    ``encode`` devuelve el propio origen; ``decode``, en cada posición del destino, el
    *one-hot* (B, T_q, V) del símbolo de origen de esa posición (``eos_idx`` tras el último),
    que el generador (la identidad) deja como *logits*.
    """

    def __init__(self, vocab_size: int, eos_idx: int):
        super().__init__()
        self.vocab_size, self.eos_idx, self.generator = vocab_size, eos_idx, nn.Identity()

    def encode(self, src, src_mask):
        return src

    def decode(self, memory, src_mask, tgt, tgt_mask):
        following = torch.cat([memory, torch.full_like(memory[:, :1], self.eos_idx)], dim=1)
        position = torch.arange(tgt.size(1)).clamp(max=memory.size(1))
        return torch.nn.functional.one_hot(following[:, position], self.vocab_size).float(), None


class ToySeq2Seq(nn.Module):
    """Modelo de juguete con la interfaz del Transformer del laboratorio 6 (no es uno).

    ``encode``: *embedding* del origen. ``decode``: una atención cruzada por posiciones
    (consultas y claves = *embeddings* de posición, valores = ``memory``, con ``src_mask``)
    más la media de los *embeddings* del destino que ``tgt_mask`` deja ver, repetida
    ``layers`` veces (con 2, como en un decodificador de dos capas, la salida de la última
    posición ya depende de ``tgt_mask``). Sin normas ni autoatención aprendida. Los pesos
    son normales de desviación ``scale`` y dependen solo de ``seed``; cada llamada a
    ``decode`` anota el tamaño del lote en ``decode_batches``.

    En evaluación, ``forward`` suma ``eval_shift`` a todos los *logits*: la pérdida y el
    *softmax* no cambian, pero los *logits* dicen el modo del modelo con un valor que el
    calificador puede recalcular (lo que contesta el núcleo sobre ``model.training`` no
    se puede comprobar).
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int = 16,
        max_len: int = 32,
        seed: int = 0,
        scale: float = 1.0,
        layers: int = 1,
        eval_shift: float = 0.0,
    ):
        super().__init__()
        self.layers, self.eval_shift = layers, eval_shift
        self.src_embed = nn.Embedding(vocab_size, d_model)
        self.tgt_embed = nn.Embedding(vocab_size, d_model)
        self.position = nn.Embedding(max_len, d_model)
        self.generator = nn.Linear(d_model, vocab_size)
        self.decode_batches: list[int] = []
        random = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for parameter in self.parameters():
                parameter.copy_(torch.randn(parameter.shape, generator=random) * scale)

    def encode(self, src, src_mask):
        return self.src_embed(src)  # (B, T_k, D)

    def decode(self, memory, src_mask, tgt, tgt_mask):
        self.decode_batches.append(tgt.size(0))
        T_q, T_k, D = tgt.size(1), memory.size(1), memory.size(2)
        query = self.position(torch.arange(T_q, device=tgt.device))  # (T_q, D)
        key = self.position(torch.arange(T_k, device=tgt.device))  # (T_k, D)
        scores = (query @ key.T / D**0.5).expand(memory.size(0), T_q, T_k)
        if src_mask is not None:
            scores = scores.masked_fill(~src_mask, float("-inf"))
        weights = scores.softmax(dim=-1)  # (B, T_q, T_k)
        seen = tgt_mask.float() if tgt_mask is not None else torch.ones(T_q, T_q)
        prefix = self.tgt_embed(tgt)  # (B, T_q, D)
        for _ in range(self.layers):
            prefix = seen @ prefix / seen.sum(dim=-1, keepdim=True).clamp(min=1)
        return weights @ memory + prefix + query, weights.unsqueeze(1)

    def forward(self, src, tgt, src_mask, tgt_mask):
        out, _ = self.decode(self.encode(src, src_mask), src_mask, tgt, tgt_mask)
        logits = self.generator(out)  # (B, T_q, V)
        return logits if self.training else logits + self.eval_shift


# --- Laboratorio 5: identidad de varios objetos, parámetros a cero y capas de prueba ---


@remotable
def distinct(*objects) -> int:
    """Cuántos objetos distintos (por identidad, ``is``) hay entre ``objects``."""
    return len({id(obj) for obj in objects})


@remotable
def zero_parameters(module, *paths: str) -> None:
    """Pone a cero, en su sitio, los parámetros de cada submódulo ``module.<ruta>``.

    Las rutas son las de ``get_submodule``: ``"self_attn.w_o"``, ``"feed_forward.linear2"``.
    """
    with torch.no_grad():
        for path in paths:
            for parameter in module.get_submodule(path).parameters():
                parameter.zero_()


def _toy_mix(query, memory, mask):
    """Media de ``memory`` con pesos softmax(query memoryᵀ/√D) que respetan ``mask``."""
    scores = query @ memory.transpose(-2, -1) / query.size(-1) ** 0.5
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)  # finito: una fila sin nada visible no da NaN
    return scores.softmax(dim=-1) @ memory


class ToyEncoderLayer(nn.Module):
    """Capa de mentira con la interfaz de una capa del codificador (no es una).

    Sirve para probar una pila de capas sin depender de la capa del estudiante:
    ``x + dropout(tanh(mix(media de las posiciones de norm1(x) que mask deja ver))))``.
    Sin atención multicabeza ni *feed-forward*, y con la misma fórmula sea cual sea
    ``norm_first``, que solo se guarda para que la pila lo lea. ``norm1.weight`` tiene
    D elementos.
    """

    def __init__(self, d_model: int, dropout: float = 0.0, norm_first: bool = False):
        super().__init__()
        self.norm_first = norm_first
        self.norm1 = nn.LayerNorm(d_model)
        self.mix = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        h = self.norm1(x)  # (B, T, D)
        return x + self.dropout(torch.tanh(self.mix(_toy_mix(h, h, mask))))


class ToyDecoderLayer(nn.Module):
    """Capa de mentira con la interfaz de una capa del decodificador (no es una).

    Como :class:`ToyEncoderLayer` con ``tgt_mask``, más unos pesos «cruzados» por cabeza,
    softmax((norm1(x) W_h) memoryᵀ/√D) con ``memory_mask``, cuya media de ``memory`` se
    suma a la mezcla. Devuelve ``(salida (B, T_q, D), pesos (B, H, T_q, T_k))``.
    """

    def __init__(
        self, d_model: int, num_heads: int, dropout: float = 0.0, norm_first: bool = False
    ):
        super().__init__()
        self.norm_first, self.num_heads = norm_first, num_heads
        self.norm1 = nn.LayerNorm(d_model)
        self.query = nn.Linear(d_model, num_heads * d_model)
        self.mix = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        h = self.norm1(x)  # (B, T_q, D)
        B, T_q, D = h.shape
        query = self.query(h).view(B, T_q, self.num_heads, D).transpose(1, 2)  # (B, H, T_q, D)
        scores = query @ memory.unsqueeze(1).transpose(-2, -1) / D**0.5  # (B, H, T_q, T_k)
        if memory_mask is not None:
            scores = scores.masked_fill(~memory_mask.unsqueeze(-3), -1e9)
        weights = scores.softmax(dim=-1)
        cross = (weights @ memory.unsqueeze(1)).mean(dim=1)  # (B, T_q, D)
        out = torch.tanh(self.mix(_toy_mix(h, h, tgt_mask) + cross))
        return x + self.dropout(out), weights


@remotable
def state_shapes(module) -> dict | None:
    """Nombre -> forma de cada tensor de ``module.state_dict()`` (``None`` si no es un ``nn.Module``).

    Una sola petición al núcleo: sirve para ver si ``load_state_dict`` encajará antes de cargar.
    """
    if not isinstance(module, nn.Module):
        return None
    return {name: tuple(value.shape) for name, value in module.state_dict().items()}


# --- Laboratorio 2: subcapas de prueba y gradientes de los módulos pasados como argumento ---


class Scale(nn.Module):
    """Subcapa de mentira sin parámetros: ``factor * x`` (``Scale(0.0)`` devuelve ceros).

    Sustituye a una ``lambda`` como subcapa de una prueba: al calificar, una ``lambda`` no
    puede viajar al núcleo del estudiante y un módulo de ``course.probe`` sí.
    """

    def __init__(self, factor: float):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return self.factor * x


@remotable
def gradients_with_modules(function, *inputs, upstream=None, pick=None):
    """Como :func:`gradients`, más los gradientes de cada ``nn.Module`` de ``inputs``.

    Sirve cuando ``function`` recibe una subcapa (``residual(x, sublayer)``). Esos módulos
    se copian antes (``copy.deepcopy``), así que los originales no cambian ni acumulan
    gradientes. Devuelve ``(salida, gradientes de las entradas, gradientes de los
    parámetros de function, módulos)``, donde ``módulos`` tiene, por cada entrada, un
    diccionario nombre -> gradiente si es un ``nn.Module`` y ``None`` si no.
    """
    import copy

    copies = [copy.deepcopy(arg) if isinstance(arg, nn.Module) else arg for arg in inputs]
    output, input_grads, parameter_grads = gradients(
        function, *copies, upstream=upstream, pick=pick
    )
    modules = [
        {name: p.grad for name, p in arg.named_parameters()} if isinstance(arg, nn.Module) else None
        for arg in copies
    ]
    return output, input_grads, parameter_grads, modules


# --- Laboratorio 6: el optimizador, comprobado por los pesos que deja ---


@remotable
def optimizer_steps(optimizer, model, inputs, steps: int = 5, scale: float = 1e-9) -> dict:
    """``steps`` pasos de ``optimizer`` con la pérdida ``scale · Σ model(inputs)²``.

    Devuelve el ``state_dict`` final de ``model``. El calificador repite los pasos con el
    optimizador del enunciado y compara los pesos: así comprueba ``lr``, ``betas``,
    ``eps`` (con ``scale`` diminuto los gradientes son del orden de ``eps``),
    ``weight_decay`` y que estén todos los parámetros, sin creerse ``param_groups``.
    """
    for _ in range(steps):
        optimizer.zero_grad()
        (scale * model(inputs).square().sum()).backward()
        optimizer.step()
    return {name: value.detach().clone() for name, value in model.state_dict().items()}
