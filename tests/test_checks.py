"""``course.student.checks``: cada comprobación acepta lo correcto y rechaza, en español, lo incorrecto."""

import functools
import math

import numpy as np
import pytest
import torch
from torch import nn

from course import mistakes
from course.reference.multihead import MultiHeadAttention
from course.student import checks


class FakeTensor(torch.Tensor):
    pass


class AlwaysEqual:
    shape = (2, 3)
    dtype = torch.float32

    def __eq__(self, other):
        return True


def test_close_accepts_values_within_tolerance():
    expected = torch.tensor([1.0, 2.0, 3.0])
    checks.close("x", expected + 1e-7, expected)


@pytest.mark.parametrize(
    "impostor, word",
    [
        (np.zeros((2, 3), dtype=np.float32), "numpy.ndarray"),
        ([[0.0] * 3] * 2, "list"),
        (torch.zeros(2, 3).as_subclass(FakeTensor), "FakeTensor"),
        (AlwaysEqual(), "AlwaysEqual"),
    ],
)
def test_close_rejects_anything_but_a_plain_tensor(impostor, word):
    with pytest.raises(AssertionError, match=f"se esperaba un torch.Tensor.*{word}"):
        checks.close("salida", impostor, torch.zeros(2, 3))


def test_shape_message_names_the_dimensions():
    with pytest.raises(
        AssertionError, match=r"Se esperaba \(2, 3, 4\) = \(B, T, D\) y se obtuvo \(2, 4, 3\)"
    ):
        checks.shape("salida", torch.zeros(2, 4, 3), (2, 3, 4), "(B, T, D)")


def test_close_rejects_wrong_dtype():
    with pytest.raises(AssertionError, match="tipo de dato incorrecto.*float32.*float64"):
        checks.close("x", torch.zeros(3, dtype=torch.float64), torch.zeros(3))


def test_close_rejects_nan_and_says_where():
    actual = torch.tensor([[0.0, 1.0], [float("nan"), 2.0]])
    with pytest.raises(AssertionError, match=r"1 valores no finitos.*\[1, 0\]"):
        checks.close("pesos", actual, torch.zeros(2, 2))


def test_close_reports_count_and_worst_difference_without_the_expected_tensor():
    expected = torch.tensor([[0.123456, 0.5], [0.25, 0.75]])
    actual = expected.clone()
    actual[1, 0] += 0.5
    with pytest.raises(AssertionError) as error:
        checks.close("pesos", actual, expected)
    message = str(error.value)
    assert "1 de 4 valores difieren" in message and "[1, 0]" in message and "0.5" in message
    assert "0.123" not in message


def test_close_adds_the_hint_of_the_mutant_it_matches():
    expected = torch.ones(3)
    with pytest.raises(AssertionError, match="¿Falta dividir entre √d_k\\?"):
        checks.close(
            "s",
            torch.full((3,), 2.0),
            expected,
            hints={"¿Falta dividir entre √d_k?": torch.full((3,), 2.0)},
        )


def test_close_names_a_hinted_mistake_also_when_the_shape_or_dtype_is_wrong():
    only_output = {"¿Solo la salida?": torch.zeros(3, 4)}
    with pytest.raises(AssertionError, match=r"forma incorrecta.*\. ¿Solo la salida\?$"):
        checks.close("s", torch.zeros(3, 4), torch.zeros(2, 3, 4), hints=only_output)
    mask = torch.ones(2, dtype=torch.bool)
    with pytest.raises(AssertionError, match=r"tipo de dato.*\. ¿Números\?$"):
        checks.close("m", torch.ones(2), mask, hints={"¿Números?": torch.ones(2)})
    with pytest.raises(AssertionError) as error:
        checks.close("m", torch.ones(2), mask, hints={"¿Otro dtype?": mask})
    assert "¿Otro dtype?" not in str(error.value)  # solo la relación: números en vez de bool
    assert str(error.value).endswith(checks.MASK_NUMBERS) and str(error.value).count("¿") == 1


@pytest.fixture
def fingerprints(monkeypatch):
    """Huellas de mentira en lugar de las de ``course/mistakes/fingerprints``."""
    loaded: dict[str, list[dict]] = {}
    monkeypatch.setattr(mistakes, "_loaded", loaded)

    def add(check: str, value: torch.Tensor, message: str) -> None:
        entry = {"check": check, "message": message, "atol": 1e-5, "rtol": 1e-4}
        entry |= mistakes._values(value)
        loaded.setdefault(check, []).append(entry)

    return add


def test_close_names_the_mistake_whose_fingerprint_matches(fingerprints):
    fingerprints("s", torch.tensor([2.0, 2.0, float("nan")]), "¿Error A?")
    fingerprints("s", torch.tensor([3.0, 3.0, 3.0]), "¿Error B?")
    expected = torch.ones(3)
    with pytest.raises(AssertionError, match=r"valores difieren.*\. ¿Error B\?$"):
        checks.close("s", torch.tensor([3.0, 3.0, 3.0 + 1e-6]), expected)
    with pytest.raises(AssertionError, match=r"no finitos.*\. ¿Error A\?$"):
        checks.close("s", torch.tensor([2.0, 2.0, float("nan")]), expected)


@pytest.mark.parametrize(
    "check, actual",
    [
        ("otra", torch.tensor([3.0, 3.0, 3.0])),  # la huella es de otra comprobación
        ("s", torch.tensor([3.0, 3.0, 3.1])),  # otro valor
        ("s", torch.tensor([3.0, 3.0, 3.0]).double()),  # otro dtype
    ],
)
def test_close_names_nothing_without_a_matching_fingerprint(fingerprints, check, actual):
    fingerprints("s", torch.tensor([3.0, 3.0, 3.0]), "¿Error B?")
    with pytest.raises(AssertionError) as error:  # ni proporcional ni traspuesto: sin relación
        checks.close(check, actual, torch.tensor([1.0, 2.0, 4.0], dtype=actual.dtype))
    assert "¿" not in str(error.value)


@pytest.mark.parametrize(
    "actual, expected, message",
    [
        (torch.tensor([[True, False]]), torch.tensor([[False, True]]), checks.INVERTED),
        (torch.tensor([[1, 0], [1, 1]]).bool(), torch.tensor([[1, 1], [0, 1]]).bool(), checks.TRANSPOSED),
        (torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([[1.0, 3.0], [2.0, 4.0]]), checks.TRANSPOSED),
        (torch.tensor([1.0, -2.0, 0.5]) * 3**0.5, torch.tensor([1.0, -2.0, 0.5]), checks.SQRT_SIZE),
        (torch.tensor([1.0, -2.0, 0.5]) / 3**0.5, torch.tensor([1.0, -2.0, 0.5]), checks.SQRT_SIZE),
        # La causa (√D) solo si el factor es la raíz del último eje: aquí mide 3, no 8 ni 2.
        (torch.tensor([1.0, -2.0, 0.5]) / 8**0.5, torch.tensor([1.0, -2.0, 0.5]), checks.SQRT_FACTOR),
        (torch.tensor([1.0, -2.0, 0.5]) * 2**0.5, torch.tensor([1.0, -2.0, 0.5]), checks.SQRT_FACTOR),
        (torch.tensor([3.0, 6.0]) * 224 / 460, torch.tensor([3.0, 6.0]), checks.COUNT_FACTOR),
        (torch.tensor([5.0, 10.0]), torch.tensor([1.0, 2.0]), checks.COUNT_FACTOR),
        (torch.tensor(2.0**5.5), torch.tensor(math.exp(5.5)), checks.OTHER_BASE),
        (torch.tensor(10.0**5.5), torch.tensor(math.exp(5.5)), checks.OTHER_BASE),
        (torch.tensor([0.5, 1.5]) / math.log(2.0), torch.tensor([0.5, 1.5]), checks.LOG_BASE),
        (torch.stack([torch.ones(2, 3), torch.zeros(2, 3)]), torch.ones(2, 2, 3), checks.SOME_SENTENCES),
        (torch.tensor([0.5, 1.5]) * math.log(10.0), torch.tensor([0.5, 1.5]), checks.LOG_BASE),
    ],
)  # fmt: skip
def test_close_names_a_relation_to_the_expected_value_without_values(actual, expected, message):
    with pytest.raises(AssertionError) as error:
        checks.close("relación", actual, expected)
    assert str(error.value).endswith(message)
    assert message in checks.RELATIONS and not any(c.isdigit() for c in message)


@pytest.mark.parametrize(
    "actual, expected, message",
    [
        # Sin valores (checks.shape) solo se sabe que los tamaños están en otro orden.
        (torch.zeros(2, 4, 3), (2, 3, 4), checks.SIZES_ORDER),
        (torch.zeros(2, 3), (2, 1, 3), checks.UNIT_AXIS),
        (torch.zeros(2, 3, 1), (2, 1, 3), checks.SIZES_ORDER),  # el eje 1 en otro sitio
        # Con valores, «ejes en otro orden» solo si lo son: los esperados, traspuestos.
        (
            torch.arange(24.0).reshape(2, 3, 4).transpose(1, 2),
            torch.arange(24.0).reshape(2, 3, 4),
            checks.AXES_ORDER,
        ),
        (
            torch.arange(24.0).reshape(2, 4, 3),
            torch.arange(24.0).reshape(2, 3, 4),
            checks.SIZES_ORDER,
        ),
        (torch.zeros(2, 5), (2, 1, 3), None),
        (torch.zeros(()), (3,), checks.REDUCED),
        (torch.zeros(2, 4), (2, 3, 4), checks.REDUCED),
        (torch.zeros(2, 3), torch.zeros(2, 1, 3), checks.UNIT_AXIS),  # también en close
    ],
)
def test_shape_names_axes_in_another_order_or_a_unit_axis(actual, expected, message):
    with pytest.raises(AssertionError) as error:
        if isinstance(expected, tuple):
            checks.shape("forma", actual, expected)
        else:
            checks.close("forma", actual, expected)
    if message is None:
        assert "¿" not in str(error.value)
    else:
        assert str(error.value).endswith(message)


def test_rows_summing_to_one_over_the_other_axis_are_named():
    weights = torch.tensor([[0.2, 0.5], [0.8, 0.5]])  # cada columna suma 1
    with pytest.raises(AssertionError) as error:
        checks.rows_sum_to_one("pesos", weights)
    assert str(error.value).endswith(checks.OTHER_AXIS)
    with pytest.raises(AssertionError) as error:
        checks.rows_sum_to_one("pesos", torch.full((2, 2), 0.3))
    assert "¿" not in str(error.value)


def test_a_wrong_number_alone_is_not_called_proportional():
    with pytest.raises(AssertionError) as error:
        checks.close("pérdida", torch.tensor(2.5), torch.tensor(3.0))
    assert "¿" not in str(error.value)


def test_a_fingerprint_wins_over_a_relation(fingerprints):
    fingerprints("s", torch.tensor([2.0, 4.0]), "¿Error C?")
    with pytest.raises(AssertionError) as error:
        checks.close("s", torch.tensor([2.0, 4.0]), torch.tensor([1.0, 2.0]))
    assert str(error.value).endswith("¿Error C?") and checks.COUNT_FACTOR not in str(error.value)


def test_every_check_names_the_mistake_and_two_mistakes_with_one_output_are_both_named(
    fingerprints,
):
    pair = torch.zeros(3, 4)
    fingerprints("salida", pair, "¿Devuelves la pareja?")
    fingerprints("salida", pair, "¿El orden?")
    with pytest.raises(
        AssertionError, match=r"forma incorrecta.*¿Devuelves la pareja\? ¿El orden\?"
    ):
        checks.shape("salida", pair, (2, 3, 4))
    fingerprints("pesos", torch.ones(2, 2), "¿Máscara tras el softmax?")
    with pytest.raises(AssertionError, match=r"deben sumar 1.*¿Máscara tras el softmax\?"):
        checks.rows_sum_to_one("pesos", torch.ones(2, 2))


def test_generic_messages_do_not_guess_the_mistake(fingerprints):
    with pytest.raises(AssertionError) as error:
        checks.finite("x", torch.tensor([1.0, float("nan")]))
    assert str(error.value) == "`x`: 1 valores no finitos (nan o inf); el primero en [1]."
    with pytest.raises(AssertionError) as error:
        checks.rows_sum_to_one("pesos", torch.ones(1, 2))
    assert "¿" not in str(error.value)


def test_close_compares_boolean_masks_exactly():
    mask = torch.tensor([True, False])
    checks.close("máscara", mask.clone(), mask)
    with pytest.raises(AssertionError, match=r"1 de 2 valores difieren; el primero en \[1\]"):
        checks.close("máscara", torch.tensor([True, True]), mask)


def test_rows_sum_to_one():
    checks.rows_sum_to_one("pesos", torch.softmax(torch.randn(2, 3, 4), dim=-1))
    with pytest.raises(AssertionError, match="deben sumar 1"):
        checks.rows_sum_to_one("pesos", torch.ones(2, 3))


def test_load_reference_names_missing_and_extra_parameters():
    reference = nn.Linear(4, 2)
    student = nn.Sequential(nn.Linear(4, 2))
    with pytest.raises(
        AssertionError, match=r"faltan \['bias', 'weight'\]; sobran \['0.bias', '0.weight'\]"
    ):
        checks.load_reference("capa", student, reference)


def test_load_reference_reports_a_wrong_shape_and_loads_when_right():
    reference = nn.Linear(4, 2)
    with pytest.raises(
        AssertionError, match=r"`weight` tiene forma \(3, 4\); se esperaba \(2, 4\)"
    ):
        checks.load_reference("capa", nn.Linear(4, 3), reference)
    student = nn.Linear(4, 2)
    checks.load_reference("capa", student, reference)
    assert torch.equal(student.weight, reference.weight)


def test_copy_mha_weights_makes_our_module_match_pytorch():
    torch_mha = nn.MultiheadAttention(4, 2, batch_first=True).eval()
    ours = MultiHeadAttention(4, 2).eval()
    checks.copy_mha_weights(torch_mha, ours)
    x = torch.randn(2, 3, 4)
    expected, _ = torch_mha(x, x, x)
    actual, _ = ours(x, x, x)
    checks.close("salida", actual, expected)


# --- Vigilancia de parches (course.student.guard) --------------------------------------------------


@pytest.mark.parametrize(
    ("owner", "name", "label"),
    [
        (torch.nn.functional, "softmax", "torch.nn.functional.softmax"),
        (torch, "allclose", "torch.allclose"),
        (torch.Tensor, "masked_fill", "torch.Tensor.masked_fill"),
        (nn.Linear, "forward", "torch.nn.Linear.forward"),
        (np, "abs", "numpy.abs"),
    ],
)
def test_a_patched_function_makes_every_check_fail_naming_it(monkeypatch, owner, name, label):
    ones = torch.ones(2)
    monkeypatch.setattr(owner, name, lambda *a, **k: None)
    for check in (lambda: checks.close("x", ones, ones), lambda: checks.shape("x", ones, (2,))):
        with pytest.raises(AssertionError, match=rf"modificado {label} \(ahora .*<lambda>\)"):
            check()
    monkeypatch.undo()
    checks.close("x", ones, ones)  # deshecho el parche, todo vuelve a pasar


def test_vars_of_checks_does_not_change_what_the_tests_call(monkeypatch):
    monkeypatch.setitem(vars(checks), "close", lambda *a, **k: None)
    with pytest.raises(AssertionError, match=r"course\.student\.checks\.close \(ahora"):
        checks.close("x", torch.ones(2), torch.zeros(2))
    from course.student.checks import close

    with pytest.raises(AssertionError, match="course.student.checks.close"):
        close("x", torch.ones(2), torch.ones(2))


def test_a_deleted_attribute_and_a_patched_reference_are_named(monkeypatch):
    from course.reference import attention

    checks.finite("x", torch.ones(2))  # la referencia se apunta la primera vez que se ve
    monkeypatch.delattr(torch, "tril")
    monkeypatch.setattr(attention, "causal_mask", lambda size: None)
    with pytest.raises(AssertionError, match=r"torch\.tril \(borrado\).*attention\.causal_mask"):
        checks.finite("x", torch.ones(2))


def test_new_names_and_locked_modules():
    torch.nombre_nuevo_del_estudiante = 1  # un nombre nuevo no es un parche
    try:
        checks.close("x", torch.ones(2), torch.ones(2))
    finally:
        del torch.nombre_nuevo_del_estudiante
    with pytest.raises(AttributeError, match="no se puede modificar"):
        checks.close = None


def test_torch_wrapping_its_own_function_is_not_a_patch(monkeypatch):
    from torch._compile import _disable_dynamo

    original = torch.manual_seed
    monkeypatch.setattr(torch, "manual_seed", _disable_dynamo(original))  # como torch._dynamo
    checks.close("x", torch.ones(2), torch.ones(2))
    monkeypatch.setattr(torch, "manual_seed", functools.wraps(original)(lambda seed: None))
    with pytest.raises(AssertionError, match=r"torch\.manual_seed \(ahora"):
        checks.close("x", torch.ones(2), torch.ones(2))
    monkeypatch.undo()  # y volver al original tampoco es un parche
    checks.close("x", torch.ones(2), torch.ones(2))


def test_undoing_a_second_torch_wrapper_is_not_a_patch(monkeypatch):
    """Tras importar ``torch._dynamo`` (lo hace el primer ``optimizer.step()``), deshacer
    una envoltura de torch devuelve la de ``torch._dynamo``, que no es un parche."""
    from torch._compile import _disable_dynamo

    from course.student import guard

    changes = guard._watcher([])  # apunta el torch.manual_seed de ahora como original
    dynamo = _disable_dynamo(torch.manual_seed)
    monkeypatch.setattr(torch, "manual_seed", dynamo)  # como import torch._dynamo
    assert changes() == []
    monkeypatch.setattr(torch, "manual_seed", _disable_dynamo(dynamo))
    assert changes() == []
    monkeypatch.setattr(torch, "manual_seed", dynamo)  # lo que hace monkeypatch.undo()
    assert changes() == []
    monkeypatch.setattr(torch, "manual_seed", functools.wraps(dynamo)(lambda seed: None))
    assert [name for name, _ in changes()] == ["torch.manual_seed"]


def test_a_meta_tensor_gets_the_device_message_even_with_hints():
    expected = torch.zeros(2, 3)
    meta = torch.empty(2, 3, device="meta")
    with pytest.raises(AssertionError, match="dispositivo «meta»"):
        checks.close("x", meta, expected, hints={"¿Un error típico?": torch.ones(2, 3)})
    with pytest.raises(AssertionError, match="dispositivo «meta»"):
        checks.close("puntuaciones[0]", torch.empty(4, device="meta"), torch.zeros(4))
