"""Comprobaciones de tensores usadas por todas las pruebas, con mensajes en español.

Cada función devuelve ``None`` o lanza ``AssertionError`` (nbgrader lo cuenta como
prueba fallida). El orden es siempre: tipo -> forma -> dtype -> valores finitos ->
valores. Los valores se comparan como arreglos de NumPy en ``float64`` con tolerancias
con nombre; el mensaje nunca imprime el tensor esperado, solo cuántos valores difieren,
la mayor diferencia y su índice. Si el valor que falla coincide con el de un error típico
conocido (``course.mistakes``), el mensaje lo nombra; si no, y guarda con el esperado una
relación que apunta a una idea (el signo cambiado, desplazado una posición, normalizado
sobre otro eje…: :data:`RELATIONS`), la nombra sin ningún valor.
"""

import functools
import inspect
import itertools
import sys
from collections.abc import Callable, Iterable, Mapping

import numpy as np
import torch
from torch import Tensor, nn

from course import mistakes
from course.student import examples, guard
from course.student import hints as spanish_hints

ATOL_F32 = 1e-5
RTOL_F32 = 1e-4

# Referencias tomadas al importar este módulo (la celda de preparación, antes de que corra
# código del estudiante): reasignar después ``torch.allclose``, ``np.abs`` o métodos de
# ``torch.Tensor`` no cambia lo que comprueban estas funciones. ``TensorBase`` es un tipo
# de C inmutable; ``DisableTorchFunctionSubclass`` ignora un ``__torch_function__`` cambiado.
_TENSOR = torch.Tensor
_BASE = torch._C.TensorBase
_PLAIN = torch._C.DisableTorchFunctionSubclass
_BOOL = torch.bool
_abs, _isfinite, _argwhere, _argmax = np.abs, np.isfinite, np.argwhere, np.argmax
_unravel_index, _float64, _float32 = np.unravel_index, np.float64, np.float32
_allclose = torch.allclose
_np_allclose, _log = np.allclose, np.log
_np_isclose, _np_ptp, _np_take, _np_sort = np.isclose, np.ptp, np.take, np.sort
_np_eye, _np_broadcast_arrays = np.eye, np.broadcast_arrays
_permutations = itertools.permutations


def _shape(t: Tensor) -> tuple[int, ...]:
    return tuple(_BASE.shape.__get__(t))


def _dtype(t: Tensor) -> torch.dtype:
    return _BASE.dtype.__get__(t)


def _device(t: Tensor) -> torch.device:
    return _BASE.device.__get__(t)


def _is_tensor(name: str, obj: object) -> None:
    """Exige un ``torch.Tensor`` de verdad: ni subclases ni objetos que lo imiten."""
    if type(obj) is not _TENSOR:
        remote = getattr(type(obj), "type_name", None)  # un objeto del núcleo, al calificar
        got = remote(obj) if remote else f"{type(obj).__module__}.{type(obj).__qualname__}"
        raise AssertionError(
            f"`{name}`: se esperaba un torch.Tensor y se obtuvo {got}."
            " Devuelve el resultado de operaciones de PyTorch."
        )


def _has_shape(name: str, actual: object, expected: tuple[int, ...], dims: str = "") -> None:
    """Comprueba tipo y forma; ``dims`` nombra los ejes, p. ej. ``"(B, T_q, T_k)"``."""
    _is_tensor(name, actual)
    got = _shape(actual)
    if got != tuple(expected):
        named = f" = {dims}" if dims else ""
        raise AssertionError(
            f"`{name}`: forma incorrecta. Se esperaba {tuple(expected)}{named} y se obtuvo {got}."
        )


def dtype(name: str, actual: Tensor, expected: torch.dtype) -> None:
    if _dtype(actual) != expected:
        raise AssertionError(
            f"`{name}`: tipo de dato incorrecto. Se esperaba {expected} y se obtuvo {_dtype(actual)}."
        )


def device(name: str, actual: Tensor, expected: torch.device) -> None:
    if _device(actual) != expected:
        raise AssertionError(
            f"`{name}`: el tensor está en el dispositivo «{_device(actual)}» y se esperaba"
            f" «{expected}». Crea los tensores en el dispositivo de las entradas."
        )


def _numpy(t: Tensor) -> np.ndarray:
    with _PLAIN():
        t = _BASE.resolve_conj(_BASE.to(_BASE.detach(t), "cpu", copy=True))
        return _BASE.numpy(t)


def _all_finite(name: str, actual: Tensor) -> None:
    """Exige que no haya ``nan`` ni ``inf``; dice cuántos hay y dónde está el primero."""
    _is_tensor(name, actual)
    if _dtype(actual) == _BOOL:
        return
    values = _numpy(actual)
    bad = ~_isfinite(values)
    if bad.any():
        first = tuple(int(i) for i in _argwhere(bad)[0])
        raise AssertionError(
            f"`{name}`: {int(bad.sum())} valores no finitos (nan o inf); el primero en {list(first)}."
        )


# Pistas de ``close``: parejas ``(mensaje, salida del error típico)`` (varias salidas pueden
# compartir mensaje), un dict ``{mensaje: salida}``, o una función sin argumentos que
# devuelve cualquiera de los dos y solo se llama si la comparación falla.
Hints = Iterable[tuple[str, Tensor]] | Mapping[str, Tensor] | Callable[[], "Hints"]


def _close(
    name: str,
    actual: object,
    expected: Tensor,
    atol: float = ATOL_F32,
    rtol: float = RTOL_F32,
    hints: Hints | None = None,
) -> None:
    """Compara ``actual`` con ``expected``: tipo, forma, dtype, finitud y valores.

    Args:
        hints: errores típicos, como ``[("¿Falta dividir por √d_k?", tensor_sin_escala)]``;
            si ``actual`` coincide con la salida de uno, su texto se añade al mensaje (una
            vez, aunque coincidan varias salidas con el mismo texto). Las pruebas ocultas
            los dan en una función (``hints=lambda: mistakes.hints(...)``): ejecutar los
            mutantes cuesta más que comparar, y con una respuesta correcta no hace falta.
    """
    try:
        _compare(name, actual, expected, atol, rtol)
    except AssertionError as error:
        found = _hint(actual, hints)
        failure = AssertionError(f"{error}{found}")
        failure.diagnosis = found.strip()  # lo que puede decir una prueba oculta
        raise failure from None


def _compare(name: str, actual: object, expected: Tensor, atol: float, rtol: float) -> None:
    _has_shape(name, actual, _shape(expected))
    dtype(name, actual, _dtype(expected))
    device(name, actual, _device(expected))
    if _dtype(expected) == _BOOL:
        got, want = _numpy(actual), _numpy(expected)
        wrong = got != want
        if wrong.any():
            first = [int(i) for i in _argwhere(wrong)[0]]
            raise AssertionError(
                f"`{name}`: {int(wrong.sum())} de {want.size} valores difieren; el primero en {first}"
                f" (se esperaba {bool(want[tuple(first)])})."
            )
        return
    _all_finite(name, actual)
    got, want = _numpy(actual).astype(_float64), _numpy(expected).astype(_float64)
    diff = _abs(got - want)
    wrong = diff > atol + rtol * _abs(want)
    if wrong.any():
        worst = [int(i) for i in _unravel_index(int(_argmax(diff)), diff.shape)]
        raise AssertionError(
            f"`{name}`: {int(wrong.sum())} de {want.size} valores difieren"
            f" (máx. |Δ| = {diff.max():.3g} en {worst}; tolerancia atol={atol:g}, rtol={rtol:g})."
        )


def _hint(actual: object, hints: Hints | None) -> str:
    """Los textos, sin repetir, de los errores típicos cuya salida es ``actual`` (misma forma,
    dtype y valores). Calcular las pistas nunca tapa el fallo: si se rompe, no hay pista."""
    if type(actual) is not _TENSOR or hints is None:
        return ""
    try:
        if callable(hints):
            hints = hints()
        pairs = hints.items() if isinstance(hints, Mapping) else hints
        found = []
        for text, output in pairs:
            if text not in found and isinstance(output, _TENSOR) and _same(actual, output):
                found.append(text)
    except Exception:  # noqa: BLE001 (una pista rota no cambia el fallo de la prueba)
        return ""
    return "".join(f" {text}" for text in found)


def _same(actual: Tensor, mutant: Tensor) -> bool:
    """Misma forma, dtype y valores; un tensor sin datos (``meta``) no se parece a nada."""
    if _shape(mutant) != _shape(actual) or _dtype(mutant) != _dtype(actual):
        return False
    if _device(actual).type == "meta" or _device(mutant).type == "meta":
        return False
    a, b = actual.detach().cpu().double(), mutant.detach().cpu().double()
    return _allclose(a, b, atol=ATOL_F32, rtol=RTOL_F32, equal_nan=True)


def _rows_sum_to_one(name: str, weights: Tensor, atol: float = ATOL_F32) -> None:
    """Cada fila (último eje) de ``weights`` suma 1."""
    _all_finite(name, weights)
    sums = _numpy(weights).astype(_float64).sum(axis=-1)
    diff = _abs(sums - 1.0)
    if (diff > atol).any():
        worst = [int(i) for i in _unravel_index(int(_argmax(diff)), diff.shape)]
        raise AssertionError(
            f"`{name}`: las filas (último eje) deben sumar 1; la fila {worst} suma"
            f" {sums[tuple(worst)]:.6g}."
        )


def _named(check):
    """``check`` con el error típico que reconoce ``course.mistakes``, si lo hay, en su mensaje."""
    signature = inspect.signature(check)
    value = list(signature.parameters)[1]  # lo que se comprueba: actual, obj, weights

    @functools.wraps(check)
    def named(*args, **kwargs):
        try:
            return check(*args, **kwargs)
        except AssertionError as error:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            tolerance = {k: bound.arguments[k] for k in ("atol", "rtol") if k in bound.arguments}
            try:
                diagnosis = mistakes.diagnose(
                    bound.arguments["name"], bound.arguments[value], **tolerance
                )
                hinted = getattr(error, "diagnosis", "")  # las pistas de close, ya calculadas
                if diagnosis is None and not hinted:  # un error con nombre gana a una relación
                    diagnosis = _related(bound.arguments)
            except Exception:  # noqa: BLE001 (el diagnóstico nunca tapa el fallo de la prueba)
                diagnosis = None
            if diagnosis is None or diagnosis in str(error):
                raise
            failure = AssertionError(f"{error} {diagnosis}")
            # Solo el nombre del error, sin valores: lo muestra la devolución de una prueba
            # oculta (``course.grading.diagnosis``).
            failure.diagnosis = f"{getattr(error, 'diagnosis', '')} {diagnosis}".strip()
            raise failure from None

    return named


# Relaciones entre la salida del estudiante y la esperada que nombran una idea sin ningún
# valor: sirven para errores que el catálogo no tiene (otra forma, otra función).
INVERTED = "¿Está invertida? Tu máscara es la negación de la esperada: True = se puede atender."
TRANSPOSED = "¿Está traspuesta? Tu resultado es el esperado con los dos últimos ejes cambiados."
SQRT_FACTOR = (
    "Tu resultado es el esperado por una raíz cuadrada constante (o su inversa): ¿sobra o"
    " falta una escala, o divides donde va multiplicar?"
)
SQRT_SIZE = (
    "Tu resultado es el esperado por la raíz del tamaño del último eje (o su inversa): ¿sobra"
    " o falta dividir o multiplicar por √D (o √d_k)?"
)
COUNT_FACTOR = (
    "Tu resultado es el esperado por un factor constante: ¿sumas en lugar de promediar,"
    " divides entre otra cuenta (p. ej. contando el relleno) o sobra o falta una escala?"
)
OTHER_BASE = "Tu valor es otra potencia de la pérdida: la perplejidad es e^pérdida (math.exp)."
OTHER_AXIS = "¿Normalizas sobre el penúltimo eje? Cada fila (último eje) debe sumar 1."
AXES_ORDER = (
    "Tu resultado es el esperado con los ejes en otro orden: revisa transpose, permute y dónde"
    " añades cada eje."
)
SIZES_ORDER = (
    "Tu forma tiene los tamaños de la esperada en otro orden: imprime .shape tras cada paso"
    " (transpose, permute, view, dónde añades cada eje, qué tamaño usas en cada sitio)."
)
UNIT_AXIS = (
    "¿Sobra o falta un eje de tamaño 1? Revisa unsqueeze, squeeze, keepdim y los índices como [0]."
)
REDUCED = (
    "¿Reduces un eje de más? Una suma o una media sin dim= (o con otro dim) se come ejes que"
    " la salida debe conservar."
)
LOG_BASE = "¿Usas un logaritmo en otra base? Aquí va el natural (torch.log, math.log)."
SOME_SENTENCES = (
    "Unas frases del lote coinciden y otras no: ¿qué tienen de distinto? Si son las que"
    " llevan relleno, ¿se pierde una máscara (de relleno, de la memoria) por el camino?"
)
MASK_NUMBERS = (
    "Tu máscara tiene los ceros y unos esperados, pero en números: ¿falta .bool() o construirla"
    " con una comparación? La máscara es de tipo bool."
)
DIAGONAL = (
    "Tu máscara difiere de la esperada justo en una diagonal: ¿puede cada posición atenderse a"
    " sí misma? Revisa diagonal= en torch.tril o torch.triu y si comparas con < o con <=."
)
SUMS_ELSEWHERE = (
    "Tus valores suman uno sobre otro eje (o sobre todo el tensor), no sobre cada fila (último"
    " eje): ¿normalizas (softmax, la suma) con otro dim=?"
)
PRECISION = (
    "Tu resultado difiere muy poco del esperado, pero en casi todos los valores, como al"
    " redondear: ¿calculas algo en float32 en lugar de float64 (o conviertes demasiado pronto)?"
)
DROPOUT = (
    "Tu resultado y el esperado coinciden salvo por ceros sueltos (y quizá una escala): ¿se"
    " aplica dropout en modo de entrenamiento (falta model.eval()), donde no toca, o falta?"
)
FUTURE = (
    "Solo coincide la última posición (la que ya puede ver toda la frase): ¿falta la máscara"
    " causal (o no llega a la autoatención del decodificador)?"
)
SOME_POSITIONS = (
    "Tu resultado coincide salvo en unas pocas filas (último eje): ¿qué tienen de especial?"
    " Cambian solo esas si se pierde o sobra una máscara (de relleno, causal) o si algo (un"
    " recorte, el relleno) toca solo algunas posiciones."
)
SHIFTED = (
    "Tu resultado es el esperado desplazado una posición a lo largo de un eje: ¿desplazas de"
    " más o de menos (la entrada del decodificador frente al objetivo, teacher forcing)?"
)
BROADCAST = (
    "Tu resultado repite en todo un eje una sola fila de la esperada (la primera frase o"
    " posición, por ejemplo): ¿indexas, recortas o difundes por el eje equivocado?"
)
ONE_MINUS = (
    "Tu resultado es uno menos el esperado: ¿confundes la probabilidad de conservar con la"
    " de anular (p frente a uno menos p), o la máscara está al revés?"
)
NEGATED = (
    "Tu resultado es el esperado con el signo cambiado: ¿restas al revés o sobra un signo menos?"
)
OFFSET = (
    "Tu resultado es el esperado más una constante: ¿sobra o falta sumar o restar algo (la"
    " media, un sesgo, un uno, el máximo)?"
)
ROW_OFFSET = (
    "Cada fila (último eje) de tu resultado es la esperada más una constante propia: ¿falta"
    " o sobra restar algo en cada fila, como la media o el logaritmo de la suma de exponenciales?"
)
SQUARED = (
    "Tu resultado es el esperado al cuadrado o su raíz cuadrada: ¿confundes la varianza con"
    " la desviación típica (sobra o falta torch.sqrt)?"
)
COLUMNS = (
    "Tu resultado tiene las mismas columnas (último eje) que el esperado, en otro orden:"
    " ¿intercalas seno y coseno de otra forma (mitades frente a pares e impares) o juntas"
    " las cabezas en otro orden?"
)
PERCENT = (
    "Tu valor es el esperado multiplicado o dividido entre cien: ¿tanto por uno frente a tanto"
    " por ciento? El BLEU de sacreBLEU va de cero a cien."
)
REARRANGED = (
    "Tu resultado tiene los mismos valores que el esperado, en otras posiciones: ¿reordenas"
    " los ejes con view o reshape donde hace falta transpose o permute?"
)
RELATIONS = (
    INVERTED, TRANSPOSED, SQRT_FACTOR, SQRT_SIZE, COUNT_FACTOR, OTHER_BASE, OTHER_AXIS,
    AXES_ORDER, SIZES_ORDER, UNIT_AXIS, REDUCED, LOG_BASE, SOME_SENTENCES, MASK_NUMBERS, DIAGONAL, SUMS_ELSEWHERE,
    PRECISION, DROPOUT, SOME_POSITIONS, FUTURE, SHIFTED, BROADCAST, ONE_MINUS, NEGATED, OFFSET,
    ROW_OFFSET, SQUARED, COLUMNS, REARRANGED, PERCENT,
)  # fmt: skip


MAX_RELATED = 1_000_000  # valores; con más, buscar relaciones tardaría segundos


def _related(arguments: dict) -> str | None:
    """La relación de :data:`RELATIONS` entre el valor comprobado y el esperado, si la hay."""
    actual = arguments.get("actual", arguments.get("weights"))
    if type(actual) is not _TENSOR or _device(actual).type == "meta":
        return None
    if "expected" not in arguments:
        if len(_shape(actual)) < 2 or _shape(actual)[-2] < 2:
            return None  # con una sola fila, sumar por columnas no dice nada
        sums = _numpy(actual).astype(_float64).sum(axis=-2)
        return OTHER_AXIS if (_abs(sums - 1.0) < 1e-4).all() else None
    expected = arguments["expected"]
    if type(expected) is tuple:  # checks.shape: solo formas
        return _related_shapes(_shape(actual), tuple(expected))
    if type(expected) is not _TENSOR:
        return None
    if _shape(expected) != _shape(actual):
        relation = _related_shapes(_shape(actual), _shape(expected))
        small = 0 < _BASE.numel(expected) <= MAX_RELATED
        if relation == SIZES_ORDER and small and _permuted(_numpy(actual), _numpy(expected)):
            return AXES_ORDER  # comprobado: los valores son los esperados, reordenados
        return relation
    got, want = _numpy(actual), _numpy(expected)
    if want.size > MAX_RELATED:
        return None
    if want.dtype == bool:
        return _related_masks(got, want)
    if got.dtype == bool or want.size == 0:
        return None
    wide = _dtype(expected) == torch.float64  # el estudiante pudo calcular en float32
    return _related_values(got.astype(_float64), want.astype(_float64), wide)


def _related_masks(got: np.ndarray, want: np.ndarray) -> str | None:
    """Relaciones de una máscara booleana: números en vez de ``bool``, invertida,
    traspuesta o con la diagonal de más o de menos."""
    if got.dtype != bool:
        as_mask = got != 0
        zeros_ones = ((got == 0) | (got == 1)).all()
        return MASK_NUMBERS if zeros_ones and (as_mask == want).all() else None
    if want.size >= 2 and (got == ~want).all():  # un solo valor mal siempre es su negación
        return INVERTED
    if want.ndim < 2 or want.shape[-1] != want.shape[-2] or want.shape[-1] < 2:
        return None
    if (got == want.swapaxes(-1, -2)).all():
        return TRANSPOSED
    size = want.shape[-1]
    wrong = (got != want).reshape(-1, size, size).any(axis=0)
    for offset in (-1, 0, 1):
        if (wrong == _np_eye(size, k=offset, dtype=bool)).all():
            return DIAGONAL
    return None


def _related_shapes(got: tuple[int, ...], want: tuple[int, ...]) -> str | None:
    if got == want:
        return None
    if sorted(got) == sorted(want):
        return SIZES_ORDER  # sin los valores, solo se sabe de los tamaños
    if [n for n in got if n != 1] == [n for n in want if n != 1]:
        return UNIT_AXIS
    rest = iter(want)
    if len(got) < len(want) and all(n in rest for n in got):  # got, subsecuencia de want
        return REDUCED
    return None


def _permuted(got: np.ndarray, want: np.ndarray) -> bool:
    """``got`` es ``want`` con los ejes en otro orden (alguna permutación de sus ejes)."""
    if got.dtype == bool or want.dtype == bool or want.ndim > 6:
        return False
    for order in _permutations(range(want.ndim)):
        moved = want.transpose(order)
        if moved.shape == got.shape and _near(got.astype(_float64), moved.astype(_float64)):
            return True
    return False


def _related_values(got: np.ndarray, want: np.ndarray, wide: bool = False) -> str | None:
    """La relación entre valores de la misma forma; de la más concreta a la más general.

    ``wide``: lo esperado es ``float64`` (un cálculo en ``float32`` se nota al redondear).
    """
    if _near(got, want):  # casi igual: solo lo dice el redondeo
        return PRECISION if wide and _rounded(got, want) else None
    if want.ndim >= 2 and want.shape[-1] == want.shape[-2] and _near(got, want.swapaxes(-1, -2)):
        return TRANSPOSED
    if want.size == 1 and want.item() > 1.0 and got.item() > 0.0:
        power = _log(got.item()) / _log(want.item())
        if any(_near(power, _log(base)) for base in (2.0, 10.0)):
            return OTHER_BASE
    if _percent(got, want):
        return PERCENT
    if wide and _rounded(got, want):
        return PRECISION
    if _dropout(got, want) or _dropout(want, got):
        return DROPOUT
    if _broadcast(got, want):
        return BROADCAST
    if _sums_elsewhere(got, want):
        return SUMS_ELSEWHERE
    if want.ndim >= 3 and want.shape[0] >= 2:  # (B, T, D): ¿solo algunas frases?
        same = [_near(got[b], want[b]) for b in range(want.shape[0])]
        if any(same) and not all(same):
            return SOME_SENTENCES
    if _some_positions(got, want):
        return SOME_POSITIONS
    if _only_last_position(got, want):
        return FUTURE
    if want.size >= 2 and _np_ptp(want) > 1e-6:  # lo esperado varía: la relación dice algo
        for relation, message in _SHAPES_OF_VALUES:
            if relation(got, want):
                return message
    return _factor(got, want)


def _near(a: np.ndarray | float, b: np.ndarray | float) -> bool:
    """Iguales salvo redondeo; primero un trozo, que descarta casi todo sin recorrer el resto."""
    a, b = _np_broadcast_arrays(a, b)
    head = slice(0, 1024)
    return _np_allclose(a.flat[head], b.flat[head], rtol=1e-4, atol=1e-6) and _np_allclose(
        a, b, rtol=1e-4, atol=1e-6
    )


def _factor(got: np.ndarray, want: np.ndarray) -> str | None:
    """``got = c · want``: el signo, una raíz, un logaritmo en otra base o una cuenta."""
    norm = float((want * want).sum())
    if norm == 0.0 or want.size < 2:
        return None  # dos números cualesquiera son proporcionales: no dice nada
    factor = float((got * want).sum()) / norm
    if abs(factor) < 1e-6 or _near(factor, 1.0) or not _near(got, factor * want):
        return None
    if _near(factor, -1.0):
        return NEGATED
    for ratio in (factor, 1.0 / factor):
        if any(_near(ratio, _log(base)) for base in (2.0, 10.0)):
            return LOG_BASE
        if ratio > 1.0 and _near(ratio**2, round(ratio**2)) and not _near(ratio, round(ratio)):
            # La causa (√D) solo se nombra si el factor es la raíz del último eje, que se ve.
            return SQRT_SIZE if _near(ratio**2, float(want.shape[-1])) else SQRT_FACTOR
    return COUNT_FACTOR


def _percent(got: np.ndarray, want: np.ndarray) -> bool:
    """``got`` es ``want`` por cien o entre cien (también con un solo número)."""
    if not (want != 0.0).any():
        return False
    return any(_near(got, want * ratio) for ratio in (100.0, 0.01))


def _rounded(got: np.ndarray, want: np.ndarray) -> bool:
    """Diferencias de redondeo: valores de ``float32`` o |Δ| diminuta en casi todos."""
    diff, scale = _abs(got - want), max(float(_abs(want).max()), 1.0)
    if not 1e-10 * scale < diff.max() <= 1e-3 * scale:  # (por debajo, el redondeo de float64)
        return False
    as_single = (got.astype(_float32).astype(_float64) == got).all()
    return bool(as_single and not (want.astype(_float32).astype(_float64) == want).all()) or (
        (diff > 0).mean() >= 0.5
    )


def _dropout(got: np.ndarray, want: np.ndarray) -> bool:
    """Ceros sueltos (no filas enteras) donde lo esperado no es cero; el resto, ``c · want``
    con ``c ≥ 1`` (dropout escala lo que conserva)."""
    zeros = (got == 0.0) & (_abs(want) > 1e-6)
    kept = (got != 0.0) & (_abs(want) > 1e-6)
    if not zeros.any() or kept.sum() < 2 or want.ndim == 0:
        return False
    scattered = (zeros.any(axis=-1) & ~zeros.all(axis=-1)).any()
    scale = float((got[kept] / want[kept]).mean())
    return bool(scattered and 1.0 - 1e-4 <= scale <= 10.0 and _near(got[kept], scale * want[kept]))


def _sums_elsewhere(got: np.ndarray, want: np.ndarray) -> bool:
    """Las filas (último eje) de ``want`` suman 1 y las de ``got`` no, pero ``got`` suma 1
    sobre otro eje, sobre los dos últimos o sobre todo el tensor."""
    if want.ndim == 0 or want.shape[-1] < 2 or (want < 0).any() or (got < 0).any():
        return False
    if not _near(want.sum(axis=-1), 1.0) or _near(got.sum(axis=-1), 1.0):
        return False
    axes = [(axis,) for axis in range(want.ndim - 1)] + [tuple(range(want.ndim))]
    if want.ndim >= 3:
        axes.append((-2, -1))
    return any(_near(got.sum(axis=axis), 1.0) for axis in axes)


def _some_positions(got: np.ndarray, want: np.ndarray) -> bool:
    """Como mucho la mitad de las filas (último eje) difieren; las demás, iguales."""
    if want.ndim < 2 or want.size // want.shape[-1] < 2:
        return False
    rows = _np_isclose(got, want, rtol=1e-4, atol=1e-6).all(axis=-1)
    wrong = int((~rows).sum())
    if not 0 < wrong <= rows.size // 2:
        return False
    scale = max(float(_abs(want).max()), 1.0)  # una máscara cambia mucho, no un redondeo
    return float(_abs(got - want)[~rows].max()) > 1e-3 * scale


def _only_last_position(got: np.ndarray, want: np.ndarray) -> bool:
    """A lo largo de las posiciones (penúltimo eje) solo coincide la última (con relleno al
    final, en alguna frase no coincide ni esa)."""
    if want.ndim < 2 or want.shape[-2] < 2:
        return False
    same = _np_isclose(got, want, rtol=1e-4, atol=1e-6).all(axis=-1)  # (..., T)
    return bool(same[..., -1].any() and not same[..., :-1].any())


def _shifted(got: np.ndarray, want: np.ndarray) -> bool:
    """``got`` es ``want`` desplazado una posición a lo largo de un eje (de 3 o más)."""
    for axis, size in enumerate(want.shape):
        if size < 3:
            continue
        head, tail = _np_take(want, range(size - 1), axis), _np_take(want, range(1, size), axis)
        if _near(head, tail):
            continue  # lo esperado no cambia a lo largo de este eje
        got_head, got_tail = (
            _np_take(got, range(size - 1), axis),
            _np_take(got, range(1, size), axis),
        )
        if _near(got_tail, head) or _near(got_head, tail):
            return True
    return False


def _broadcast(got: np.ndarray, want: np.ndarray) -> bool:
    """``got`` repite la primera o la última fila de ``want`` a lo largo de un eje."""
    for axis, size in enumerate(want.shape):
        for index in (0, size - 1) if size >= 2 else ():
            row = _np_take(want, [index], axis)
            if not _near(want, row) and _near(got, row):
                return True
    return False


def _row_offset(got: np.ndarray, want: np.ndarray) -> bool:
    """``got - want`` es constante en cada fila (último eje), pero no en todo el tensor."""
    if want.ndim < 2 or want.shape[-1] < 2 or want.size // want.shape[-1] < 2:
        return False
    varying = (_np_ptp(want, axis=-1) > 1e-6).mean() >= 0.5
    diff = got - want
    return bool(varying and _near(diff, diff.mean(axis=-1, keepdims=True)))


def _offset(got: np.ndarray, want: np.ndarray) -> bool:
    diff = got - want
    return abs(float(diff.mean())) > 1e-6 and _near(diff, float(diff.mean()))


def _squared(got: np.ndarray, want: np.ndarray) -> bool:
    """``got`` es ``want²`` o ``√want`` (y ``want`` no es solo ceros y unos)."""
    if _near(want * want, want):
        return False
    return _near(got, want * want) or bool((want >= 0).all() and _near(got, want**0.5))


def _columns(got: np.ndarray, want: np.ndarray) -> bool:
    """Cada columna (último eje) de ``got`` es una columna distinta de ``want``."""
    if want.ndim < 2 or want.shape[-1] < 2 or want.size * want.shape[-1] > 5e7:
        return False  # (con muchas columnas, compararlas todas tarda demasiado)
    a, b = got.reshape(-1, got.shape[-1]).T, want.reshape(-1, want.shape[-1]).T
    distance = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * a @ b.T
    order = distance.argmin(axis=1)
    moved = (order != range(len(order))).any()
    return bool(moved and len(set(order.tolist())) == len(order) and _near(a, b[order]))


def _one_minus(got: np.ndarray, want: np.ndarray) -> bool:
    return _near(got, 1.0 - want)


def _rearranged(got: np.ndarray, want: np.ndarray) -> bool:
    return _near(_np_sort(got, axis=None), _np_sort(want, axis=None))


# Relaciones que solo dicen algo si lo esperado varía, en orden de comprobación.
_SHAPES_OF_VALUES = (
    (_shifted, SHIFTED),
    (_one_minus, ONE_MINUS),
    (_offset, OFFSET),
    (_row_offset, ROW_OFFSET),
    (_squared, SQUARED),
    (_columns, COLUMNS),
    (_rearranged, REARRANGED),
)


tensor = _named(_is_tensor)
shape = _named(_has_shape)
finite = _named(_all_finite)
close = _named(_close)
rows_sum_to_one = _named(_rows_sum_to_one)


# El orden de un bucle de entrenamiento, visto por ``probe.training_events``: lo que se anota
# en el núcleo solo son nombres de sucesos; qué orden es el bueno se decide aquí.
TRAIN_NO_BACKWARD = "¿Llamas a loss.backward() en cada paso?"
TRAIN_ZERO_GRAD = "¿Llamas a optimizer.zero_grad() antes de backward?"
TRAIN_ZERO_GRAD_LATE = (
    "optimizer.zero_grad() llega entre backward y step: borra los gradientes antes de que step"
    " los use. Va antes de backward (o al empezar cada paso)."
)
TRAIN_STEP_EARLY = (
    "optimizer.step() llega antes de loss.backward(): cada paso usa los gradientes del paso"
    " anterior. El orden es zero_grad, backward, step."
)
TRAIN_CLIP = (
    "El recorte de gradientes va entre backward y step: antes de backward no hay gradientes"
    " que recortar y después de step ya no cambia nada."
)
TRAIN_SCHEDULER = "¿Llamas a scheduler.step() en cada paso?"
TRAIN_SCHEDULER_EARLY = (
    "scheduler.step() llega antes de optimizer.step(): la tasa cambia antes de dar el paso"
    " (PyTorch avisa de ello). Va después de optimizer.step()."
)
_TRAINING_EVENTS = frozenset({"zero_grad", "backward", "clip", "step", "scheduler"})


def training_order(name: str, events: Iterable[str]) -> None:
    """Comprueba el orden de los sucesos de un bucle de entrenamiento (``probe.training_events``).

    En cada paso: ``zero_grad`` antes de ``backward`` (o al empezar), el recorte entre
    ``backward`` y ``step``, y ``scheduler.step`` después de ``optimizer.step``, una vez por
    paso. El primer ``scheduler`` lo da el planificador al crearse. Falla con el primer
    desorden, nombrado.
    """
    seen = [event for event in map(str, events) if event in _TRAINING_EVENTS]
    if seen[:1] == ["scheduler"]:
        seen = seen[1:]
    if "backward" not in seen:
        raise AssertionError(f"`{name}`: no hay ningún backward. {TRAIN_NO_BACKWARD}")
    pending = False  # hay gradientes nuevos de un backward que aún no usó un step
    zeroed = True  # desde el último step se pusieron a cero (al empezar no hay gradientes)
    stepped = False  # hubo un step desde el último scheduler
    for event in seen:
        problem = None
        if event == "zero_grad":
            problem, zeroed = (TRAIN_ZERO_GRAD_LATE if pending else None), True
        elif event == "backward":
            problem, pending = (None if zeroed else TRAIN_ZERO_GRAD), True
        elif event == "clip" and not pending:
            problem = TRAIN_CLIP
        elif event == "step":
            problem = None if pending else TRAIN_STEP_EARLY
            pending, zeroed, stepped = False, False, True
        elif event == "scheduler":
            problem, stepped = (None if stepped else TRAIN_SCHEDULER_EARLY), False
        if problem:
            raise AssertionError(f"`{name}`: {problem}")
    if seen.count("scheduler") < seen.count("step"):
        raise AssertionError(f"`{name}`: {TRAIN_SCHEDULER}")


def load_reference(name: str, student: nn.Module, reference: nn.Module) -> None:
    """Carga (estricta) los pesos de ``reference`` en el módulo del estudiante.

    Dice en español qué parámetro falta, sobra o tiene otra forma.
    """
    if not isinstance(student, nn.Module):
        raise AssertionError(
            f"`{name}`: se esperaba un nn.Module y se obtuvo {type(student).__name__}."
        )
    want, got = reference.state_dict(), student.state_dict()
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"faltan {missing}")
        if extra:
            parts.append(f"sobran {extra}")
        raise AssertionError(
            f"`{name}`: los parámetros no coinciden con la referencia: {'; '.join(parts)}."
            " Usa exactamente los nombres de atributo del enunciado."
        )
    for key, value in want.items():
        if tuple(got[key].shape) != tuple(value.shape):
            raise AssertionError(
                f"`{name}`: el parámetro `{key}` tiene forma {tuple(got[key].shape)};"
                f" se esperaba {tuple(value.shape)}."
            )
    student.load_state_dict(want, strict=True)


def copy_mha_weights(source: nn.MultiheadAttention, target: nn.Module) -> None:
    """Copia los pesos de ``nn.MultiheadAttention`` en un módulo con ``w_q, w_k, w_v, w_o``.

    PyTorch apila las tres proyecciones de entrada en ``in_proj_weight`` (3D, D) en el
    orden Q, K, V; aquí se parte en tercios.
    """
    w_q, w_k, w_v = source.in_proj_weight.detach().chunk(3, dim=0)
    b_q, b_k, b_v = source.in_proj_bias.detach().chunk(3, dim=0)
    state = {
        "w_q.weight": w_q,
        "w_q.bias": b_q,
        "w_k.weight": w_k,
        "w_k.bias": b_k,
        "w_v.weight": w_v,
        "w_v.bias": b_v,
        "w_o.weight": source.out_proj.weight.detach(),
        "w_o.bias": source.out_proj.bias.detach(),
    }
    missing = sorted(set(state) - set(target.state_dict()))
    if missing:
        raise AssertionError(
            f"El módulo no tiene los parámetros {missing}; usa w_q, w_k, w_v y w_o."
        )
    target.load_state_dict(state, strict=False)


# En el núcleo del estudiante, los errores conocidos de PyTorch llevan una línea en español.
spanish_hints.install()

# Desde aquí, cada comprobación pedida desde el cuaderno verifica antes que el código del
# estudiante no haya cambiado torch, numpy, este módulo ni la referencia (course.student.guard), y
# `checks.close = ...` falla con un mensaje claro.
guard.protect(
    sys.modules[__name__],
    ("tensor", "shape", "dtype", "device", "finite", "close", "rows_sum_to_one",
     "load_reference", "copy_mha_weights", "training_order"),
    examples,
)  # fmt: skip
