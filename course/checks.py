"""Comprobaciones de tensores usadas por todas las pruebas, con mensajes en español.

Cada función devuelve ``None`` o lanza ``AssertionError`` (nbgrader lo cuenta como
prueba fallida). El orden es siempre: tipo -> forma -> dtype -> valores finitos ->
valores. Los valores se comparan como arreglos de NumPy en ``float64`` con tolerancias
con nombre; el mensaje nunca imprime el tensor esperado, solo cuántos valores difieren,
la mayor diferencia y su índice.
"""

import numpy as np
import torch
from torch import Tensor, nn

ATOL_F32 = 1e-5
RTOL_F32 = 1e-4


def tensor(name: str, obj: object) -> None:
    """Exige un ``torch.Tensor`` de verdad: ni subclases ni objetos que lo imiten."""
    if type(obj) is not torch.Tensor:
        raise AssertionError(
            f"`{name}`: se esperaba un torch.Tensor y se obtuvo {type(obj).__module__}."
            f"{type(obj).__qualname__}. Devuelve el resultado de operaciones de PyTorch."
        )


def shape(name: str, actual: object, expected: tuple[int, ...], dims: str = "") -> None:
    """Comprueba tipo y forma; ``dims`` nombra los ejes, p. ej. ``"(B, T_q, T_k)"``."""
    tensor(name, actual)
    got = tuple(actual.shape)
    if got != tuple(expected):
        named = f" = {dims}" if dims else ""
        raise AssertionError(
            f"`{name}`: forma incorrecta. Se esperaba {tuple(expected)}{named} y se obtuvo {got}."
        )


def dtype(name: str, actual: Tensor, expected: torch.dtype) -> None:
    if actual.dtype != expected:
        raise AssertionError(
            f"`{name}`: tipo de dato incorrecto. Se esperaba {expected} y se obtuvo {actual.dtype}."
        )


def _numpy(t: Tensor) -> np.ndarray:
    return t.detach().to("cpu", copy=True).resolve_conj().numpy()


def finite(name: str, actual: Tensor) -> None:
    """Exige que no haya ``nan`` ni ``inf``; dice cuántos hay y dónde está el primero."""
    tensor(name, actual)
    if actual.dtype == torch.bool:
        return
    values = _numpy(actual)
    bad = ~np.isfinite(values)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AssertionError(
            f"`{name}`: {int(bad.sum())} valores no finitos (nan o inf); el primero en {list(first)}."
            " ¿Una fila completamente enmascarada o una división por cero?"
        )


def close(
    name: str,
    actual: object,
    expected: Tensor,
    atol: float = ATOL_F32,
    rtol: float = RTOL_F32,
    hints: dict[str, Tensor] | None = None,
) -> None:
    """Compara ``actual`` con ``expected``: tipo, forma, dtype, finitud y valores.

    Args:
        hints: errores típicos, como ``{"¿Falta dividir por √d_k?": tensor_sin_escala}``;
            si ``actual`` coincide con uno de ellos, su texto se añade al mensaje.
    """
    shape(name, actual, tuple(expected.shape))
    dtype(name, actual, expected.dtype)
    if expected.dtype == torch.bool:
        got, want = _numpy(actual), _numpy(expected)
        wrong = got != want
        if wrong.any():
            first = [int(i) for i in np.argwhere(wrong)[0]]
            raise AssertionError(
                f"`{name}`: {int(wrong.sum())} de {want.size} valores difieren; el primero en {first}"
                f" (se esperaba {bool(want[tuple(first)])})." + _hint(actual, hints)
            )
        return
    finite(name, actual)
    got, want = _numpy(actual).astype(np.float64), _numpy(expected).astype(np.float64)
    diff = np.abs(got - want)
    wrong = diff > atol + rtol * np.abs(want)
    if wrong.any():
        worst = [int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape)]
        raise AssertionError(
            f"`{name}`: {int(wrong.sum())} de {want.size} valores difieren"
            f" (máx. |Δ| = {diff.max():.3g} en {worst}; tolerancia atol={atol:g}, rtol={rtol:g})."
            + _hint(actual, hints)
        )


def _hint(actual: Tensor, hints: dict[str, Tensor] | None) -> str:
    for text, mutant in (hints or {}).items():
        if mutant.shape == actual.shape and torch.allclose(
            actual.detach().double(), mutant.detach().double(), atol=ATOL_F32, rtol=RTOL_F32
        ):
            return f" {text}"
    return ""


def rows_sum_to_one(name: str, weights: Tensor, atol: float = ATOL_F32) -> None:
    """Cada fila (último eje) de ``weights`` suma 1."""
    finite(name, weights)
    sums = _numpy(weights).astype(np.float64).sum(axis=-1)
    diff = np.abs(sums - 1.0)
    if (diff > atol).any():
        worst = [int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape)]
        raise AssertionError(
            f"`{name}`: las filas deben sumar 1; la fila {worst} suma {sums[tuple(worst)]:.6g}."
            " ¿Normalizas sobre el último eje?"
        )


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
