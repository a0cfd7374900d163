"""Ayudas de las pruebas que necesitan ejecutar varias operaciones con el código del
estudiante de una vez: gradientes, llamadas con semilla, el código fuente de una función.

En el cuaderno del estudiante se ejecutan tal cual. Al calificar, las pruebas corren en
el proceso de calificación y el objeto del estudiante vive en su núcleo
(``course.grading.remote``): entonces la ayuda entera se ejecuta allí, en el núcleo, y
solo vuelven sus resultados (tensores, números, textos).
"""

import functools
import importlib
import inspect
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
def source(function) -> str:
    """El código fuente de ``function`` (vacío si no se puede leer)."""
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return ""


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
