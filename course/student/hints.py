"""Una línea en español para los errores de Python y PyTorch que más aparecen en el curso.

El mensaje original (en inglés) y la traza se conservan; :func:`hint` solo añade una
línea que dice qué suele significar y qué mirar. Al importarse ``course.student.checks`` dentro
de IPython (la celda de preparación), :func:`install` la engancha al núcleo; el
calificador la añade a las celdas de prueba que fallan (``course.grading.execute``).
"""

import re
import sys
from collections.abc import Callable

from course import labs

PREFIX = "Pista: "


def _module(match: re.Match) -> str:
    name = match["module"]
    if name == "course" or not name.startswith("course."):
        if name.split(".")[0] == "course":
            return (
                "el paquete del curso no está instalado en el entorno de este núcleo;"
                " `python -m course doctor` dice qué falta."
            )
        return f"el paquete `{name.split('.')[0]}` no está instalado en el entorno de este núcleo."
    module = name.removeprefix("course.reference.")
    for lab in labs.LABS.values():
        if name.startswith("course.reference.") and module in lab.reference:
            return (
                f"`{name}` es la solución del laboratorio {lab.id} («{lab.title}»): solo llega"
                " en el paquete de los laboratorios siguientes. Usa tu propio código."
            )
    return f"el módulo `{name}` no existe en esta versión del curso; revisa el nombre."


def _attribute(match: re.Match) -> str:
    owner, attribute = match["owner"] or f"módulo {match['module']}", match["attribute"]
    if owner == "NoneType":
        return f"el valor es None al pedirle `.{attribute}`: ¿le falta un `return` a tu función?"
    if owner == "tuple":
        return (
            f"es una tupla y no tiene `.{attribute}`: ¿la función devuelve varios valores,"
            " como (salida, pesos)? Sepáralos al asignar: `salida, pesos = …`."
        )
    if owner == "Tensor" or (match["module"] or "").split(".")[0] == "torch":
        return f"`{attribute}` no existe en PyTorch con ese nombre: revisa cómo se escribe."
    return (
        f"`{owner}` no tiene el atributo `{attribute}`: revisa el nombre y, si es una clase"
        f" tuya, que `__init__` asigne `self.{attribute}` después de `super().__init__()`."
        " Los nombres de atributo del enunciado son parte de la interfaz: las pruebas los"
        " usan, así que no los cambies."
    )


# Las causas de un fallo de difusión que más se ven en el curso.
_BROADCAST_CAUSES = (
    " Suele ser un tamaño tomado del eje equivocado (el lote B o D donde va la longitud T,"
    " como `arange(D)` o `pe[:B]`), consultas intercambiadas con claves y valores en la"
    " atención cruzada o una máscara pasada a la atención que no es la suya."
)

# (tipo de excepción, expresión regular sobre el mensaje, línea o función que la construye)
RULES: list[tuple[str, str, str | Callable[[re.Match], str]]] = [
    (
        "RuntimeError",
        r"mat1 and mat2 shapes cannot be multiplied \((?P<a>\S+) and (?P<b>\S+)\)",
        lambda m: (
            f"producto de matrices con formas {m['a']} y {m['b']}: el último eje del primero"
            " debe medir lo mismo que el penúltimo del segundo. Imprime `.shape` de ambos."
        ),
    ),
    (
        "RuntimeError",
        r"The size of tensor a \((?P<a>\d+)\) must match the size of tensor b \((?P<b>\d+)\)"
        r" at non-singleton dimension (?P<dim>\d+)",
        lambda m: (
            f"las formas no encajan elemento a elemento: en el eje {m['dim']} una mide {m['a']}"
            f" y la otra {m['b']}, y solo se difunden tamaños iguales o 1. Imprime `.shape`."
            + _BROADCAST_CAUSES
        ),
    ),
    (
        "RuntimeError",
        r"The expanded size of the tensor \((?P<a>\d+)\) must match the existing size"
        r" \((?P<b>\d+)\) at non-singleton dimension (?P<dim>\d+)",
        lambda m: (
            f"las formas no encajan: en el eje {m['dim']} hace falta {m['a']} y el tensor"
            f" mide {m['b']}. Imprime `.shape`." + _BROADCAST_CAUSES
        ),
    ),
    (
        "RuntimeError",
        r"Expected size for first two dimensions of batch2 tensor to be: (?P<a>\[[^\]]*\])"
        r" but got: (?P<b>\[[^\]]*\])",
        lambda m: (
            f"producto de matrices por lotes: se esperaba el segundo operando con {m['a']} al"
            f" principio y tiene {m['b']}. Imprime `.shape` de ambos."
        ),
    ),
    (
        "RuntimeError",
        r"view size is not compatible with input tensor's size and stride",
        "tras `transpose` o `permute` el tensor no es contiguo en memoria: usa `.reshape(...)`"
        " en lugar de `.view(...)`.",
    ),
    (
        "RuntimeError",
        r"shape '(?P<shape>\[[^\]]*\])' is invalid for input of size (?P<size>\d+)",
        lambda m: (
            f"la forma {m['shape']} no encaja con los {m['size']} elementos del tensor: el"
            f" producto de sus tamaños debe ser {m['size']} (imprime `.shape`)."
        ),
    ),
    (
        "IndexError",
        r"Dimension out of range \(expected to be in range of \[-?\d+, (?P<last>\d+)\], but got (?P<got>-?\d+)\)",
        lambda m: (
            f"el tensor tiene {int(m['last']) + 1} ejes y pides el eje {m['got']}: imprime"
            " `.shape`; con índices negativos (-1, -2) se cuenta desde el final."
        ),
    ),
    (
        "IndexError",
        r"index out of range in self",
        "un índice se sale de la tabla (p. ej. un token ≥ tamaño del vocabulario de"
        " `nn.Embedding`, o negativo).",
    ),
    (
        "RuntimeError",
        r"expected (scalar type|m1 and m2 to have the same dtype|mat1 and mat2 to have the same dtype)",
        "mezclas tipos de dato (p. ej. float32 y float64): crea los tensores con el `dtype`"
        " de las entradas.",
    ),
    (
        "RuntimeError",
        r"(masked_fill_? only supports boolean masks|expected mask dtype to be Bool)",
        "la máscara debe ser booleana (`dtype=torch.bool`).",
    ),
    (
        "RuntimeError",
        r"Boolean value of Tensor with more than one value is ambiguous",
        "un tensor con varios valores en un `if`, `and` u `or`: ¿querías `.all()`, `.any()`,"
        " `&` o `|`?",
    ),
    (
        "RuntimeError",
        r"does not require grad and does not have a grad_fn",
        "el resultado no está conectado al grafo: ¿usas `.detach()`, `.item()`,"
        " `torch.no_grad()` o creas un tensor nuevo por el camino?",
    ),
    (
        "AttributeError",
        r"cannot assign module before Module.__init__\(\) call",
        "llama a `super().__init__()` al principio de `__init__`, antes de crear capas.",
    ),
    (
        "ModuleNotFoundError",
        r"No module named '(?P<module>[\w.]+)'",
        _module,
    ),
    (
        "AttributeError",
        r"^(module '(?P<module>[\w.]+)'|'(?P<owner>\w+)' object) has no attribute"
        r" '(?P<attribute>\w+)'",
        _attribute,
    ),
    (
        "TypeError",
        r"^(?P<function>[\w.]+)\(\) (takes|missing|got an unexpected)",
        lambda m: (
            f"la llamada a `{m['function']}` no coincide con su firma: revisa cuántos"
            " argumentos pasas, en qué orden y con qué nombres."
        ),
    ),
    (
        "TypeError",
        r"(must be Tensor, not tuple|for [^:]+: '(Tensor|tuple)' and '(tuple|Tensor)'"
        r"|can only concatenate tuple)",
        "un valor es una tupla donde se esperaba un tensor: ¿una función que devuelve"
        " (salida, pesos), como la atención? Toma la salida con `[0]` o separa la pareja al"
        " asignar: `salida, pesos = …`.",
    ),
    (
        "OverflowError",
        r"math range error",
        "`math.exp` desborda con argumentos mayores que ~709: ¿aplicas exp a una suma (de"
        " pérdidas, de tokens) en lugar de a la media por token? La perplejidad es"
        " exp(pérdida media).",
    ),
    (
        "TypeError",
        r"^'(?P<kind>Tensor|float|int)' object is not callable",
        lambda m: (
            f"llamas a un {m['kind']} como si fuera una función: ¿una variable tapa a una"
            " función con el mismo nombre (p. ej. `softmax = softmax(x)`)?"
        ),
    ),
    (
        "NotImplementedError",
        r"^$",
        "aún no has escrito esta parte: borra `raise NotImplementedError()` y escribe tu código.",
    ),
]


def hint(ename: str, evalue: str) -> str | None:
    """La línea en español para la excepción ``ename: evalue``, o ``None`` si no se conoce."""
    for kind, pattern, text in RULES:
        if kind != ename:
            continue
        match = re.search(pattern, evalue.strip())
        if match:
            return PREFIX + (text if isinstance(text, str) else text(match))
    return None


def _handler(shell, etype, value, tb, tb_offset=None) -> None:
    """Manejador de IPython: la traza de siempre y, si se conoce el error, una línea más."""
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    line = hint(etype.__name__, str(value))
    if line:
        print(line, file=sys.stderr)


def install() -> bool:
    """Engancha :func:`hint` al IPython en marcha; ``False`` fuera de IPython o si ya hay otro."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython else None
    if shell is None or (shell.custom_exceptions and shell.custom_exceptions != (Exception,)):
        return False
    shell.set_custom_exc((Exception,), _handler)
    return True
