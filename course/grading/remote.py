"""El lado del calificador: objetos del núcleo del estudiante vistos desde las pruebas.

Las celdas de prueba se ejecutan en el proceso de calificación. Los nombres que definió
el cuaderno (``attention_scores``, ``LayerNorm``…) se sustituyen por un :class:`Remote`:
llamarlo, leer un atributo o recorrerlo envía una petición al núcleo
(``course.grading.agent``) y devuelve lo que este contesta. Un tensor llega siempre por
valor, como un ``torch.Tensor`` nuevo de este proceso (``torch.load`` con
``weights_only=True``: la respuesta son datos, nunca código); un objeto que no es un dato
(un módulo, un generador) llega como otro :class:`Remote`.

Lo que se envía al núcleo son las entradas de la prueba, que ya conoce el estudiante por
``course.student.examples``; la referencia y la comparación se quedan aquí.
"""

import base64
import builtins
import importlib
import io
import pickle
from collections.abc import Callable

import torch

from course.grading.agent import MIME  # noqa: F401 (el tipo MIME de las respuestas)

MAX_REPLY_BYTES = 256 * 2**20  # una respuesta mayor se rechaza sin leerla

# Módulos cuyas clases pueden representar aquí la clase de un objeto del núcleo, para
# que ``isinstance(obj, nn.Module)`` funcione con un :class:`Remote`.
_LOCAL_TYPES = ("torch", "builtins", "collections")


class StudentError(Exception):
    """El código del estudiante lanzó ``ename: evalue`` en el núcleo."""

    def __init__(self, ename: str, evalue: str):
        super().__init__(f"{ename}: {evalue}" if evalue else ename)
        self.ename, self.evalue = ename, evalue


class Channel:
    """Transporte de peticiones; ``execute(code)`` devuelve el texto base64 publicado."""

    def __init__(self, execute: Callable[[str], str]):
        self._execute = execute

    def request(self, **request) -> object:
        buffer = io.BytesIO()
        _Pickler(buffer).dump(request)
        payload = base64.b64encode(buffer.getvalue()).decode()
        code = f"import course.grading.agent as _agent\n_agent.serve('{payload}')"
        answer = self._execute(code)
        if len(answer) > MAX_REPLY_BYTES * 4 // 3:
            raise StudentError("RespuestaDemasiadoGrande", "el resultado ocupa más de 256 MiB")
        try:
            reply = torch.load(io.BytesIO(base64.b64decode(answer)), weights_only=True)
        except Exception:  # noqa: BLE001 (cualquier basura del núcleo)
            raise StudentError(
                "RespuestaIlegible", "el núcleo devolvió algo que no es un resultado"
            ) from None
        if type(reply) is not dict or not ({"ok"} == set(reply) or {"error"} == set(reply)):
            raise StudentError(
                "RespuestaIlegible", "el núcleo devolvió algo que no es un resultado"
            )
        if "error" in reply:
            ename, evalue = (list(reply["error"]) + ["", ""])[:2]
            raise _exception(str(ename), str(evalue))
        return _decode(self, reply["ok"])


def _exception(ename: str, evalue: str) -> Exception:
    """La misma excepción integrada que lanzó el núcleo (``ValueError``…) o ``StudentError``.

    Así una prueba que espera ``ValueError`` del código del estudiante la recibe igual.
    """
    kind = getattr(builtins, ename, None)
    if isinstance(kind, type) and issubclass(kind, Exception) and kind is not StopIteration:
        return kind(evalue)
    return StudentError(ename, evalue)


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        return object.__getattribute__(obj, "_handle") if type(obj) is Remote else None


_HANDLE_KEYS = ({"__handle__"}, {"__handle__", "__type__"})


def _mro(answer: object) -> list[tuple[str, str]] | None:
    """La jerarquía que dice el núcleo, si tiene la forma de una: ``None`` si no.

    Solo sirve para elegir una clase local de ``_LOCAL_TYPES`` (``isinstance``) y para
    los mensajes; nunca para decidir una nota.
    """
    if type(answer) is not list or not all(
        type(pair) in (tuple, list) and len(pair) == 2 and all(type(p) is str for p in pair)
        for pair in answer
    ):
        return None
    return [tuple(pair) for pair in answer]


def _decode(channel: Channel, value: object) -> object:
    kind = type(value)
    if kind is dict and set(value) in _HANDLE_KEYS and type(value["__handle__"]) is int:
        return Remote(channel, value["__handle__"], _mro(value.get("__type__")))
    if isinstance(value, torch.Tensor):  # Tensor o Parameter: siempre un Tensor nuevo
        return torch.Tensor(value.detach()) if kind is not torch.Tensor else value.detach()
    if kind in (tuple, list):
        return kind(_decode(channel, item) for item in value)
    if kind is dict:
        return {key: _decode(channel, item) for key, item in value.items()}
    return value


class Remote:
    """Un objeto que vive en el núcleo del estudiante."""

    __slots__ = ("_channel", "_handle", "_mro", "_type")

    def __init__(self, channel: Channel, handle: int, mro: list[tuple[str, str]] | None = None):
        object.__setattr__(self, "_channel", channel)
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "_mro", mro)  # la que llegó con la referencia, si llegó
        object.__setattr__(self, "_type", None)

    def _ask(self, op: str, **fields) -> object:
        channel = object.__getattribute__(self, "_channel")
        return channel.request(op=op, handle=object.__getattribute__(self, "_handle"), **fields)

    def __getattr__(self, name: str) -> object:
        return self._ask("getattr", name=name)

    def __setattr__(self, name: str, value: object) -> None:
        self._ask("setattr", name=name, value=value)

    def __call__(self, *args, **kwargs) -> object:
        return self._ask("call", args=args, kwargs=kwargs)

    def __getitem__(self, key: object) -> object:
        return self._ask("getitem", key=key)

    def __iter__(self):
        return iter(self._ask("iter"))

    def __len__(self) -> int:
        return self._ask("len")

    def __bool__(self) -> bool:
        return self._ask("bool") is True

    def __repr__(self) -> str:
        return "<objeto del cuaderno del estudiante>"

    def type_name(self) -> str:
        """``módulo.Clase`` del objeto en el núcleo, para los mensajes."""
        mro = self._hierarchy()
        return ".".join(mro[0]) if mro and all(type(p) is str for p in mro[0]) else "?"

    def _hierarchy(self) -> object:
        """La jerarquía de clases que llegó con la referencia o, si no, la que se pide."""
        known = object.__getattribute__(self, "_mro")
        return known if known is not None else self._ask("type")

    def call_method(self, name: str, args: tuple, kwargs: dict) -> object:
        """``obj.name(*args, **kwargs)`` en una sola petición (:func:`method`)."""
        return self._ask("callattr", name=name, args=args, kwargs=kwargs)

    def run_in_kernel(self, function: str, args: tuple, kwargs: dict) -> object:
        """Ejecuta ``módulo:función`` (una ayuda de ``course.student.probe``) en el núcleo."""
        channel = object.__getattribute__(self, "_channel")
        return channel.request(op="function", name=function, args=args, kwargs=kwargs)

    @property
    def __class__(self) -> type:
        """La clase local más cercana de su jerarquía (``nn.Module`` para un módulo propio)."""
        known = object.__getattribute__(self, "_type")
        if known is None:
            known = Remote
            for module, qualname in self._hierarchy():
                if type(module) is str and module.split(".")[0] in _LOCAL_TYPES:
                    known = _local_class(module, qualname) or Remote
                    if known is not Remote:
                        break
            object.__setattr__(self, "_type", known)
        return known


def _local_class(module: str, qualname: str) -> type | None:
    try:
        found = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None
    return found if isinstance(found, type) else None


def bind_names(namespace: dict, names: set[str], channel: Channel) -> None:
    """Trae del núcleo cada nombre de ``names`` que no está en ``namespace``.

    Un dato llega por valor y un objeto como :class:`Remote`; un nombre que el núcleo no
    tiene se deja sin definir (la prueba fallará con ``NameError``, como en el núcleo).
    """
    wanted = sorted(n for n in names if n not in namespace and not hasattr(builtins, n))
    if not wanted:
        return
    found = channel.request(op="names", names=wanted)  # todos en una sola petición
    if type(found) is not dict:
        raise StudentError("RespuestaIlegible", "el núcleo devolvió algo que no es un resultado")
    for name in wanted:  # solo los pedidos, aunque el núcleo conteste otros
        if name in found:
            namespace[name] = found[name]


def method(obj: object, name: str) -> object:
    """``obj.name`` en una llamada ``obj.name(...)`` de una celda de prueba.

    Para un :class:`Remote`, leer el atributo y llamarlo es una sola petición al núcleo
    (:class:`_PendingCall`); para cualquier otro objeto, ``getattr`` de siempre. Las
    celdas de prueba se reescriben así al compilarlas (``course.grading.execute``).
    """
    if type(obj) is Remote:
        return _PendingCall(obj, name)
    return getattr(obj, name)


class _PendingCall:
    """``remote.name`` a la espera de sus argumentos; solo existe dentro de la llamada."""

    __slots__ = ("_name", "_target")

    def __init__(self, target: Remote, name: str):
        self._target, self._name = target, name

    def __call__(self, *args, **kwargs) -> object:
        return self._target.call_method(self._name, args, kwargs)
