"""Ayudas de las pruebas que necesitan ejecutar varias operaciones con el código del
estudiante de una vez: gradientes, llamadas con semilla, el código fuente de una función.

En el cuaderno del estudiante se ejecutan tal cual. Al calificar, las pruebas corren en
el proceso de calificación y el objeto del estudiante vive en su núcleo
(``course.grading.remote``): entonces la ayuda entera se ejecuta allí, en el núcleo, y
solo vuelven sus resultados (tensores, números, textos).
"""

import functools
import inspect

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
def source(function) -> str:
    """El código fuente de ``function`` (vacío si no se puede leer)."""
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return ""


def _is_float_tensor(value) -> bool:
    return isinstance(value, torch.Tensor) and value.is_floating_point()


def _detached(value):
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, tuple | list):
        return type(value)(_detached(item) for item in value)
    return value
