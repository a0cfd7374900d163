"""El lado del núcleo en la calificación: ejecuta lo que pide el calificador y responde.

Al calificar, las celdas de prueba no se ejecutan en el núcleo del estudiante sino en el
proceso de calificación (``course.grading.remote``). Cuando una prueba llama a una
función del estudiante, el calificador envía aquí una petición y este módulo la cumple
en el núcleo: busca un nombre del cuaderno, lee un atributo, llama a un objeto…

Lo que vuelve al calificador viaja como datos, nunca como código: tensores, números,
cadenas y tuplas, listas y diccionarios de ellos (``torch.save``, que el calificador lee
con ``weights_only=True``). Cualquier otro objeto se queda aquí y viaja como un número
de referencia. Nada de lo que haga este módulo decide una nota: el calificador compara
lo que recibe con la referencia, que el núcleo nunca ve.
"""

import base64
import io
import pickle
from collections import OrderedDict

import torch

MIME = "application/x-course-result"
_objects: dict[int, object] = {}
_SCALARS = (bool, int, float, str, bytes, type(None), torch.dtype, torch.device, torch.Size)


def _encode(obj: object) -> object:
    """``obj`` como datos puros; lo que no lo es queda aquí como ``{"__handle__": id}``."""
    kind = type(obj)
    if kind in _SCALARS:
        return obj
    if isinstance(obj, torch.Tensor) and kind in (torch.Tensor, torch.nn.Parameter):
        return obj.detach().clone()
    if kind in (tuple, list):
        return kind(_encode(item) for item in obj)
    if kind in (dict, OrderedDict) and all(type(key) in (str, int) for key in obj):
        return {key: _encode(value) for key, value in obj.items()}
    _objects[id(obj)] = obj
    return {"__handle__": id(obj), "__type__": _mro(obj)}


def _mro(obj: object) -> list[tuple[str, str]]:
    """``(módulo, clase)`` de cada clase de su jerarquía: viaja con la referencia, para que
    ``isinstance`` en el calificador no cueste otra petición."""
    return [(k.__module__, k.__qualname__) for k in type(obj).__mro__]


class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid):
        return _objects[pid]


def _apply(request: dict) -> object:
    op, target = request["op"], _objects.get(request.get("handle"))
    if op == "name":
        return get_ipython().user_ns[request["name"]]  # noqa: F821 (definido por IPython)
    if op == "names":  # los que existan; el calificador solo enlaza los que pidió
        namespace = get_ipython().user_ns  # noqa: F821
        return {name: namespace[name] for name in request["names"] if name in namespace}
    if op == "getattr":
        return getattr(target, request["name"])
    if op == "setattr":
        setattr(target, request["name"], request["value"])
        return None
    if op == "call":
        return target(*request["args"], **request["kwargs"])
    if op == "callattr":  # ``obj.método(...)`` en una sola petición
        return getattr(target, request["name"])(*request["args"], **request["kwargs"])
    if op == "getitem":
        return target[request["key"]]
    if op == "iter":
        return list(target)
    if op == "len":
        return len(target)
    if op == "bool":
        return bool(target)
    if op == "function":
        module, name = request["name"].rsplit(":", 1)
        function = getattr(__import__(module, fromlist=[name]), name)
        return function(*request["args"], **request["kwargs"])
    if op == "type":
        return _mro(target)
    raise ValueError(f"operación desconocida: {op}")


def serve(payload: str) -> None:
    """Cumple una petición (``pickle`` del calificador, en base64) y publica la respuesta."""
    from IPython.display import display

    try:
        request = _Unpickler(io.BytesIO(base64.b64decode(payload))).load()
        reply = {"ok": _encode(_apply(request))}
    except BaseException as error:  # noqa: BLE001 (también KeyboardInterrupt y SystemExit)
        reply = {"error": [type(error).__name__, str(error)[:2000]]}
    buffer = io.BytesIO()
    try:
        torch.save(reply, buffer)
    except Exception as error:  # noqa: BLE001
        buffer = io.BytesIO()
        torch.save({"error": [type(error).__name__, str(error)[:2000]]}, buffer)
    display({MIME: base64.b64encode(buffer.getvalue()).decode()}, raw=True)
