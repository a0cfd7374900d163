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


# --- Laboratorio 2: gradientes de los módulos pasados como argumento ---


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


# --- Laboratorio 5: identidad de varios objetos, parámetros a cero, formas del estado ---


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


@remotable
def state_shapes(module) -> dict | None:
    """Nombre -> forma de cada tensor de ``module.state_dict()`` (``None`` si no es un ``nn.Module``).

    Una sola petición al núcleo: sirve para ver si ``load_state_dict`` encajará antes de cargar.
    """
    if not isinstance(module, nn.Module):
        return None
    return {name: tuple(value.shape) for name, value in module.state_dict().items()}


# --- Laboratorio 6: identidad de objetos, llamadas anotadas y el optimizador ---


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


@remotable
def training_events(function, *args, **kwargs):
    """``function(*args, **kwargs)`` anotando, en orden, cada paso de un bucle de entrenamiento.

    Devuelve ``(resultado, sucesos)``: ``"zero_grad"`` (del optimizador o del modelo),
    ``"backward"``, ``"clip"`` (``clip_grad_norm_`` o ``clip_grad_value_`` de
    ``torch.nn.utils``), ``"step"`` (de cualquier optimizador) y ``"scheduler"``
    (``step`` de un planificador; el primero lo da el propio planificador al crearse). Solo
    anota: qué orden es el bueno lo decide quien lo pide (``checks.training_order``). Todo
    lo cambiado vuelve a su sitio al terminar, también si ``function`` falla.
    """
    from torch.nn import utils
    from torch.nn.utils import clip_grad
    from torch.optim import lr_scheduler

    optimizers = importlib.import_module("torch.optim.optimizer")  # (torch.optim lo oculta)

    events: list[str] = []

    def recording(name, original):
        @functools.wraps(original)
        def wrapper(*inner, **named):
            events.append(name)
            return original(*inner, **named)

        return wrapper

    patches = [
        (torch.optim.Optimizer, "zero_grad", "zero_grad"),
        (nn.Module, "zero_grad", "zero_grad"),
        (torch.autograd, "backward", "backward"),
        (lr_scheduler.LRScheduler, "step", "scheduler"),
        *((owner, name, "clip") for owner in (utils, clip_grad)
          for name in ("clip_grad_norm_", "clip_grad_value_")),
    ]  # fmt: skip
    saved = [(owner, name, vars(owner)[name]) for owner, name, _ in patches]
    hook = optimizers.register_optimizer_step_pre_hook(lambda *_: events.append("step"))
    try:
        for owner, name, event in patches:
            setattr(owner, name, recording(event, getattr(owner, name)))
        result = function(*args, **kwargs)
    finally:
        hook.remove()
        for owner, name, original in saved:
            setattr(owner, name, original)
    return _detached(result), events
