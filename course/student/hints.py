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

# Más errores de Python y PyTorch, de los más concretos a los más generales.
_SHAPES = "Imprime `.shape` de cada tensor de esa línea."
_MORE_RULES: list[tuple[str, str, str | Callable[[re.Match], str]]] = [
    (
        "ZeroDivisionError",
        r"",
        "divides entre cero: una cuenta (de posiciones sin relleno, de pasos, de elementos) vale"
        " 0. Mira de dónde sale el divisor; si puede ser 0, `max(n, 1)` o `.clamp(min=1)`.",
    ),
    (
        "IndexError",
        r"too many indices for tensor of dimension (?P<dims>\d+)",
        lambda m: f"indexas con más índices que ejes tiene el tensor ({m['dims']}). " + _SHAPES,
    ),
    (
        "IndexError",
        r"index (?P<index>-?\d+) is out of bounds for dimension (?P<dim>\d+) with size (?P<size>\d+)",
        lambda m: (
            f"el índice {m['index']} se sale del eje {m['dim']}, que mide {m['size']}: los índices"
            " van de 0 a tamaño − 1 (o de −tamaño a −1)."
        ),
    ),
    (
        "IndexError",
        r"(list|tuple|string) index out of range",
        "pides una posición que la lista (o tupla) no tiene: tiene menos elementos de los que"
        " crees. Imprime `len(...)`; ¿empiezas a contar en 1 en lugar de en 0?",
    ),
    (
        "KeyError",
        r"^'?(?P<key>[^']*)'?$",
        lambda m: (
            f"falta la clave `{m['key']}` en un diccionario (un `state_dict`, un lote, una"
            " configuración): revisa cómo se escribe y qué claves tiene (`print(d.keys())`)."
        ),
    ),
    (
        "TypeError",
        r"'NoneType' object is not (subscriptable|iterable|callable)",
        "el valor es None: ¿le falta un `return` a tu función?",
    ),
    (
        "TypeError",
        r"cannot unpack non-iterable (?P<kind>\w+) object",
        lambda m: (
            f"separas en varios nombres (`a, b = …`) un {m['kind']}, que es un solo valor:"
            " ¿devuelve la función una pareja?"
        ),
    ),
    (
        "TypeError",
        r"(?P<function>[\w.]+)\(\) received an invalid combination of arguments",
        lambda m: (
            f"llamas a `{m['function']}` con argumentos de tipos que no acepta: revisa el orden y"
            " los tipos (¿un tensor donde va un número, una lista donde va un tensor, `dim=`?)."
        ),
    ),
    (
        "TypeError",
        r"^(?P<function>[\w.]+)\(\): argument '(?P<arg>\w+)' (\(position \d+\) )?must be"
        r" (?P<want>[\w. ]+?), not (?P<got>\w+)",
        lambda m: (
            f"el argumento `{m['arg']}` de `{m['function']}` debe ser {m['want']} y recibe un"
            f" {m['got']}: revisa el orden de los argumentos (¿falta `dim=`?)."
        ),
    ),
    (
        "TypeError",
        r"only integer tensors of a single element can be converted to an index",
        "usas un tensor como índice de una lista o como tamaño: conviértelo con `.item()` o"
        " `int(...)`, o indexa el tensor con otro tensor.",
    ),
    (
        "TypeError",
        r"'(?P<kind>\w+)' object is not (subscriptable|iterable)",
        lambda m: (
            f"un {m['kind']} no se puede indexar ni recorrer: ¿esperabas una lista, una tupla o"
            " un tensor? Imprime `type(...)` del valor de esa línea."
        ),
    ),
    (
        "TypeError",
        r"unsupported operand type\(s\) for",
        "la operación no se puede hacer entre esos dos tipos: imprime `type(...)` de cada lado"
        " (¿un None, una lista o una tupla donde va un tensor?).",
    ),
    (
        "ValueError",
        r"not enough values to unpack|too many values to unpack",
        "separas en varios nombres (`a, b = …`) algo con otro número de elementos: ¿cuántos"
        " valores devuelve la función (¿una pareja?) y cuántos ejes tiene el tensor"
        " (`B, T, D = x.shape`)?",
    ),
    (
        "ValueError",
        r"math domain error",
        "`math.log` o `math.sqrt` de un número fuera de su dominio (≤ 0 para log, < 0 para la"
        " raíz): imprime el argumento.",
    ),
    (
        "ValueError",
        r"only one element tensors can be converted to Python scalars",
        "`.item()` o `float(...)` de un tensor con varios valores: reduce antes (`.mean()`,"
        " `.sum()`) o toma un elemento.",
    ),
    (
        "RuntimeError",
        r"a Tensor with \d+ elements cannot be converted to Scalar",
        "`.item()` o `float(...)` de un tensor con varios valores: reduce antes (`.mean()`,"
        " `.sum()`) o toma un elemento.",
    ),
    (
        "RuntimeError",
        r"Expected all tensors to be on the same device",
        "mezclas tensores de la CPU y de la GPU: crea los tensores nuevos con"
        " `device=x.device` y mueve el modelo y los lotes al mismo dispositivo.",
    ),
    (
        "RuntimeError",
        r"Trying to backward through the graph a second time",
        "backward pasa dos veces por el mismo grafo: ¿reutilizas una pérdida (o un tensor"
        " calculado) de un paso anterior? Guarda las pérdidas con `.item()`.",
    ),
    (
        "RuntimeError",
        r"modified by an inplace operation",
        "una operación en su sitio (`x += …`, `masked_fill_`, `relu_`) cambia un tensor que"
        " backward necesita: usa la versión que devuelve uno nuevo (`x = x + …`, `masked_fill`).",
    ),
    (
        "RuntimeError",
        r"a leaf Variable that requires grad is being used in an in-place operation",
        "cambias en su sitio un parámetro (una hoja con gradiente): hazlo dentro de"
        " `with torch.no_grad():`.",
    ),
    (
        "RuntimeError",
        r"0D or 1D target tensor expected|Expected target size",
        "`cross_entropy` espera logits (N, V) y objetivos (N,) con índices de clase: aplana con"
        " `logits.reshape(-1, V)` y `objetivo.reshape(-1)`.",
    ),
    (
        "ValueError",
        r"Expected input batch_size \((?P<a>\d+)\) to match target batch_size \((?P<b>\d+)\)",
        lambda m: (
            f"la pérdida recibe {m['a']} filas de logits y {m['b']} objetivos: ¿aplanas los dos"
            " igual? ¿Desplazaste el destino en uno y no en el otro?"
        ),
    ),
    (
        "RuntimeError",
        r"Sizes of tensors must match except in dimension (?P<dim>\d+)|Tensors must have same"
        r" number of dimensions|stack expects each tensor to be equal size",
        "`torch.cat` o `torch.stack` de tensores con formas que no casan: en `cat` todos los ejes"
        " salvo el de `dim` deben medir lo mismo; en `stack`, todos. " + _SHAPES,
    ),
    (
        "RuntimeError",
        r"Index tensor must have the same number of dimensions as input tensor"
        r"|gather\(\): Expected dtype int64 for index",
        "`gather` pide índices int64 con los mismos ejes que el tensor (`unsqueeze(-1)` para el"
        " último). " + _SHAPES,
    ),
    (
        "RuntimeError",
        r"Expected tensor for argument #1 'indices' to have one of the following scalar types",
        "los índices de `nn.Embedding` deben ser enteros (`torch.long`), no float.",
    ),
    (
        "RuntimeError",
        r"Given normalized_shape=(?P<shape>\[[^\]]*\]), expected input with shape",
        lambda m: (
            f"la LayerNorm espera que el último eje mida {m['shape']}: ¿la creaste con el D de"
            " las entradas? " + _SHAPES
        ),
    ),
    (
        "RuntimeError",
        r"number of dims don't match in permute|does not match the length of the desired"
        r" ordering of dimensions",
        "`permute` necesita un índice por cada eje del tensor. " + _SHAPES,
    ),
    (
        "RuntimeError",
        r"output with shape (?P<a>\[[^\]]*\]) doesn't match the broadcast shape (?P<b>\[[^\]]*\])",
        lambda m: (
            f"una operación en su sitio (`+=`, `add_`) daría forma {m['b']}, pero el tensor que"
            f" cambia mide {m['a']}. " + _SHAPES
        ),
    ),
    (
        "RuntimeError",
        r"out of memory",
        "el dispositivo se quedó sin memoria: usa lotes más pequeños o frases más cortas, y"
        " envuelve la evaluación en `torch.no_grad()`.",
    ),
    (
        "NameError",
        r"name '(?P<name>\w+)' is not defined",
        lambda m: (
            f"`{m['name']}` no está definido: ¿ejecutaste la celda que lo define (y la de"
            " preparación)? Al reiniciar el núcleo hay que volver a ejecutar las de arriba."
        ),
    ),
    (
        "UnboundLocalError",
        r"",
        "usas una variable de la función antes de asignarla (quizá solo se asigna dentro de un"
        " `if` o de un bucle que no llegó a ejecutarse).",
    ),
    (
        "RecursionError",
        r"",
        "una función se llama a sí misma sin fin: ¿`forward` llama a `self(...)` o a"
        " `self.forward`, o una función tuya tiene el mismo nombre que la que llama?",
    ),
    (
        "ImportError",
        r"cannot import name '(?P<name>\w+)' from '(?P<module>[\w.]+)'",
        lambda m: f"`{m['module']}` no tiene `{m['name']}`: revisa el nombre.",
    ),
    (
        "FileNotFoundError",
        r"",
        "ese archivo no existe: las rutas relativas parten de la carpeta del cuaderno.",
    ),
    (
        "StopIteration",
        r"",
        "pides con `next(...)` otro elemento a un iterador que ya se acabó.",
    ),
    (
        "MemoryError",
        r"",
        "el proceso se quedó sin memoria: ¿un tensor enorme, como uno (N, N) con N muy grande?",
    ),
    (
        "AssertionError",
        r"^$",
        "falla un `assert` sin mensaje de tu propio código: la traza marca la línea.",
    ),
]

# Para cualquier otro mensaje de estos tipos: qué suele querer decir, sin copiar nada de él.
FALLBACK = {
    "RuntimeError": "PyTorch no pudo hacer la operación de la línea marcada en la traza: la"
    " última línea del mensaje dice por qué. " + _SHAPES,
    "IndexError": "un índice se sale de su eje, lista o tupla. " + _SHAPES,
    "KeyError": "falta una clave en un diccionario: revisa cómo se escribe y qué claves tiene.",
    "AttributeError": "ese objeto no tiene el atributo que pides: revisa el nombre e imprime"
    " `type(...)` del objeto.",
    "TypeError": "un valor no es del tipo que espera la operación o la función: imprime"
    " `type(...)` de sus argumentos y revisa cuántos pasas.",
    "ValueError": "un argumento tiene el tipo correcto pero un valor que no vale: lee la última"
    " línea del mensaje e imprime ese argumento.",
    "NotImplementedError": "esa función o método aún no está escrito: si es tuyo, borra"
    " `raise NotImplementedError()` y escribe tu código.",
    "OverflowError": "un número se sale del rango de los float: ¿exp de un número grande?",
    "ModuleNotFoundError": "ese módulo no está instalado en el entorno de este núcleo.",
    "ImportError": "no se pudo importar ese nombre: revisa cómo se escribe.",
    "NameError": "usas un nombre que no está definido: ¿ejecutaste la celda que lo define?",
    "SyntaxError": "Python no entiende cómo está escrita la línea marcada (^): revisa que"
    " cierren los paréntesis, corchetes y comillas y que no falten los dos puntos de"
    " `def`, `if` o `for`.",
    "IndentationError": "la sangría no cuadra: el cuerpo de `def`, `if` o `for` va cuatro"
    " espacios más adentro, igual en todas sus líneas.",
    "OSError": "falló una operación con un archivo o con el sistema: lee la última línea del"
    " mensaje.",
}
GENERIC = (
    "Python se detuvo con este error: la última línea de la traza dice qué pasó y la flecha"
    " (---->) dónde. Imprime los valores que usa esa línea."
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
    *_MORE_RULES,
]


def hint(ename: str, evalue: str) -> str | None:
    """La línea en español para la excepción ``ename: evalue``.

    Primero la regla de :data:`RULES` que casa; si no, la general de su tipo
    (:data:`FALLBACK`) o, para cualquier otro tipo, :data:`GENERIC`. ``None`` solo para un
    ``AssertionError`` con mensaje: el de las comprobaciones del curso ya está en español.
    """
    for kind, pattern, text in RULES:
        if kind != ename:
            continue
        match = re.search(pattern, evalue.strip())
        if match:
            return PREFIX + (text if isinstance(text, str) else text(match))
    return fallback(ename)


def fallback(ename: str) -> str | None:
    """La línea general de ``ename`` (sin nada de su mensaje); ``None`` para ``AssertionError``."""
    if ename == "AssertionError":
        return None
    return PREFIX + FALLBACK.get(ename, GENERIC)


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
