"""Avisa al estudiante si su cuaderno cambia aquello en lo que se apoyan las comprobaciones.

Solo aconseja. Al calificar, las pruebas visibles y ocultas se ejecutan en el proceso del
calificador (``course.grading.execute``), que nunca cree lo que dice el núcleo, y el
informe de integridad (``course.grading.integrity``) señala los intentos de trampa. Aquí,
en el núcleo del estudiante, las comprobaciones de ``course.student.checks`` compararían
al estudiante consigo mismo si una celda hace ``F.softmax = mi_softmax``,
``torch.allclose = lambda *a, **k: True`` o ``vars(checks)["close"] = ...``: el aviso
llega mientras trabaja, en español, y no al ver la nota.

Al importarse ``course.student.checks`` (en la celda de preparación) :func:`protect`
apunta la identidad de cada valor de los espacios de nombres que usan las comprobaciones
y la referencia: ``torch``, ``torch.nn``, ``torch.nn.functional``, los métodos de
``torch.Tensor`` y de las clases de ``torch.nn``, ``numpy``, ``math``, las funciones
integradas, ``course.student.checks``, ``course.student.examples`` y los módulos de
``course.reference`` (estos, la primera vez que se ven importados). Cada comprobación
pública de ``course.student.checks`` verifica antes que todo siga igual; si algo cambió, o
si al importar ya había ahí una función definida en el cuaderno (un parche anterior a la
celda de preparación), falla con un mensaje en español que nombra el atributo. Los
nombres nuevos (``torch.mio = 1``) no cuentan: solo los que ya existían.

``course.student.checks`` y ``course.student.examples`` quedan además bloqueados: no
aceptan reasignaciones, y lo que devuelven sus atributos sale de la copia tomada al
importar, no de ``vars(checks)``.

Excepción: si torch cambia una de sus funciones por una envoltura suya
(``torch._dynamo`` hace ``torch.manual_seed = disable(torch.manual_seed)`` al
importarse), se acepta, y también volver al valor original o a una envoltura de torch
del original (deshacer una segunda envoltura devuelve la de ``torch._dynamo``).

Verificarlo cuesta unos 0,5 ms por comprobación (unos 3 200 valores comparados por
identidad). No es un blindaje: quien lea este archivo puede desactivarlo (por ejemplo a
través de ``__closure__``), y reasignar el nombre ``checks`` del cuaderno no pasa por aquí.
"""

import builtins
import functools
import itertools
import math
import operator
import os
import pkgutil
import sys
import types

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import course.reference

SHOWN = 4  # atributos nombrados en el mensaje, como mucho
TORCH = os.path.dirname(torch.__file__) + os.sep


def _spaces(own: list[types.ModuleType]) -> list[tuple[str, dict, bool]]:
    """(etiqueta, diccionario, con nombres privados) de cada espacio de nombres vigilado."""
    spaces = [
        ("torch", vars(torch), False),
        ("torch.nn", vars(nn), False),
        ("torch.nn.functional", vars(F), False),
        ("torch.Tensor", vars(torch.Tensor), True),
        ("numpy", vars(np), False),
        ("math", vars(math), False),
        ("builtins", vars(builtins), False),
    ]
    for name, value in sorted(vars(nn).items()):
        if isinstance(value, type) and issubclass(value, nn.Module):
            spaces.append((f"torch.nn.{name}", vars(value), True))
    spaces += [(module.__name__, vars(module), True) for module in own]
    return spaces


def _owner(label: str) -> type | None:
    """La clase de un espacio de nombres vigilado (``torch.Tensor``, ``torch.nn.Linear``)."""
    if label == "torch.Tensor":
        return torch.Tensor
    if label.startswith("torch.nn.") and label != "torch.nn.functional":
        return getattr(nn, label.removeprefix("torch.nn."))
    return None


def _watched(label: str, space, private: bool) -> list[tuple[str, object]]:
    """Los nombres de ``space`` que se vigilan, con su valor de ahora."""
    pairs = []
    for key, value in list(space.items()):
        if not isinstance(key, str) or (key.startswith("_") and not private):
            continue
        if label == "builtins" and not isinstance(value, types.BuiltinFunctionType | type):
            continue  # IPython cambia exit, quit, get_ipython y display en cada celda
        pairs.append((key, value))
    return pairs


def _from_notebook(value: object) -> bool:
    kind = type(value)
    if kind is types.FunctionType or (isinstance(value, type) and kind is type):
        return getattr(value, "__module__", None) == "__main__"
    return False


def _torch_wrapper(new: object, *olds: object) -> bool:
    """¿Es ``new`` una función de PyTorch que envuelve a uno de ``olds`` (``functools.wraps``)?

    Al importarse, ``torch._dynamo`` cambia ``torch.manual_seed`` por una envoltura suya;
    eso no es un parche del estudiante. Solo cuentan funciones de verdad cuyo código está
    en la carpeta de torch (no se leen atributos de objetos ajenos).
    """
    for _ in range(3):
        if type(new) is not types.FunctionType or not new.__code__.co_filename.startswith(TORCH):
            return False
        new = new.__dict__.get("__wrapped__")
        for old in olds:
            if new is old:
                return True
    return False


def describe(value: object) -> str:
    """``__main__.<lambda>``, ``torch.exp``...; sin tocar atributos de objetos ajenos."""
    kind = type(value)
    if kind in (types.FunctionType, types.BuiltinFunctionType) or kind is type:
        module = getattr(value, "__module__", None) or "?"
        return f"{module}.{getattr(value, '__qualname__', '?')}"
    return f"un objeto {kind.__module__}.{kind.__qualname__}"


def message(changes: list[tuple[str, str]]) -> str:
    named = "; ".join(f"{name} ({what})" for name, what in changes[:SHOWN])
    more = f" y {len(changes) - SHOWN} más" if len(changes) > SHOWN else ""
    return (
        f"El cuaderno ha modificado {named}{more}. Las pruebas usan esas funciones para"
        " comparar tu resultado, así que no pueden darlo por bueno: quita las asignaciones"
        " que las cambian, reinicia el núcleo y ejecuta todo de nuevo."
    )


def _inherited(spaces: list[tuple[str, dict, bool]]):
    """Devuelve ``found()``: claves nuevas de las clases vigiladas que tapan una heredada.

    ``Tensor.masked_fill = ...`` no cambia ningún valor apuntado: crea una clave en
    ``vars(torch.Tensor)``. Como en :func:`_watcher`, lo que usa queda en su cierre.
    """
    map_, len_, vars_, set_, tuple_, sorted_ = map, len, vars, set, tuple, sorted
    describe_ = describe
    classes = []  # etiqueta, clase, nº de claves, heredadas
    for label, space, _ in spaces:
        owner = _owner(label)
        if owner is not None:
            classes.append((label, owner, len(space), set(dir(owner)) - set(space)))
    sizes = tuple(size for _, _, size, _ in classes)
    owners = tuple(owner for _, owner, _, _ in classes)

    def found() -> list[tuple[str, str]]:
        if tuple_(map_(len_, map_(vars_, owners))) == sizes:
            return []
        return [
            (f"{label}.{key}", f"ahora {describe_(vars_(owner)[key])}")
            for label, owner, _, inherited in classes
            for key in sorted_(set_(vars_(owner)) & inherited)
        ]

    return found


def _watcher(own: list[types.ModuleType]):
    """Devuelve ``changes()``: los cambios desde ahora, como (atributo, descripción).

    Todo lo que usa ``changes`` (funciones integradas incluidas) queda en su cierre, no en
    los globales de este módulo: cambiar ``vars(course.student.guard)`` no la desactiva.
    Para que sea rápido, los valores se guardan en listas planas (una para diccionarios de
    módulo y otra para los de clase) que se recorren con ``map`` de una vez.
    """
    missing = object()
    list_, map_, range_, len_, vars_ = list, map, range, len, vars
    is_not, compress, repeat = operator.is_not, itertools.compress, itertools.repeat
    describe_, from_notebook, modules, watched = describe, _from_notebook, sys.modules, _watched
    trusted = _torch_wrapper
    proxy = types.MappingProxyType
    # Por tipo de diccionario: espacio, clave, valor aceptado, etiqueta y valor original.
    flat = {dict: ([], [], [], [], []), proxy: ([], [], [], [], [])}
    early: list[tuple[str, str]] = []  # parches anteriores a la importación

    def take(label: str, space, private: bool, since: str) -> None:
        spaces, keys, values, labels, originals = flat[type(space)]
        for key, value in watched(label, space, private):
            spaces.append(space)
            keys.append(key)
            values.append(value)
            labels.append(label)
            originals.append(value)
            if from_notebook(value):
                early.append((f"{label}.{key}", f"{describe_(value)} {since}"))

    spaces = _spaces(own)
    for label, space, private in spaces:
        take(label, space, private, "desde antes de importar course.student.checks")
    inherited = _inherited(spaces)
    pending = [
        f"course.reference.{m.name}" for m in pkgutil.iter_modules(course.reference.__path__)
    ]

    def changes() -> list[tuple[str, str]]:
        for name in [n for n in pending if n in modules]:  # importados desde la última vez
            pending.remove(name)
            take(name, vars_(modules[name]), True, "desde antes de la primera comprobación")
        found = list_(early)
        for get, (spaces, keys, values, labels, originals) in (
            (dict.get, flat[dict]),
            (proxy.get, flat[proxy]),
        ):
            now = list_(map_(get, spaces, keys, repeat(missing)))
            differ = list_(map_(is_not, now, values))
            if True in differ:
                for i in compress(range_(len_(differ)), differ):
                    if now[i] is originals[i] or trusted(now[i], values[i], originals[i]):
                        # el original, o torch envolviendo lo aceptado o el original: se adopta
                        values[i] = now[i]
                        continue
                    what = "borrado" if now[i] is missing else f"ahora {describe_(now[i])}"
                    found.append((f"{labels[i]}.{keys[i]}", what))
        return found + inherited()

    return changes


def _guarded(function, changes, failure=AssertionError, render=message):
    @functools.wraps(function)
    def guarded(*args, **kwargs):
        found = changes()
        if found:
            raise failure(render(found))
        return function(*args, **kwargs)

    return guarded


def _locked_class(frozen: dict[str, dict[str, object]]) -> type:
    get = types.ModuleType.__getattribute__

    class Locked(types.ModuleType):
        """Módulo que no acepta reasignaciones y sirve sus atributos desde ``frozen``."""

        def __getattribute__(self, name: str) -> object:
            values = frozen.get(get(self, "__name__"))
            if values is not None and name in values:
                return values[name]
            return get(self, name)

        def __setattr__(self, name: str, value: object) -> None:
            raise AttributeError(
                f"{get(self, '__name__')} no se puede modificar (intento de cambiar `{name}`);"
                " las pruebas dependen de él."
            )

        def __delattr__(self, name: str) -> None:
            self.__setattr__(name, None)

    return Locked


def protect(checks: types.ModuleType, checked: tuple[str, ...], *others: types.ModuleType) -> None:
    """Bloquea ``checks`` y ``others``; las funciones ``checked`` verifican antes de comprobar.

    Las llamadas internas de ``checks`` (``close`` llama a ``shape``) usan las funciones
    sin envolver: se verifica una vez por comprobación pedida desde el cuaderno.
    """
    changes = _watcher([checks, *others])
    frozen = {}
    for module in (checks, *others):
        values = {k: v for k, v in vars(module).items() if not k.startswith("_")}
        if module is checks:
            values.update({name: _guarded(values[name], changes) for name in checked})
        frozen[module.__name__] = values
    locked = _locked_class(frozen)
    for module in (checks, *others):
        module.__class__ = locked
