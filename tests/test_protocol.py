"""El protocolo entre calificador y núcleo (``course.grading.remote`` y ``agent``), sin núcleo.

``Channel`` recibe una función que ejecuta código en el núcleo y devuelve el texto que
este publicó. Aquí esa función es un transporte falso: ejecuta ``agent.serve`` en este
proceso sobre un espacio de nombres que hace de cuaderno, o contesta lo que contestaría
un núcleo hostil. Así cada regla del protocolo se prueba en milisegundos.
"""

import base64
import io
import pickle
import re
import types

import pytest
import torch
from torch import nn

from course.grading import agent, remote
from course.grading.remote import Channel, Remote, StudentError, bind_names
from course.student import checks


class FakeKernel:
    """Un «núcleo» en este proceso: ``namespace`` es lo que definió el cuaderno."""

    def __init__(self, namespace: dict):
        self.namespace = namespace
        self.requests = 0

    def execute(self, code: str) -> str:
        self.requests += 1
        payload = re.search(r"serve\('([^']*)'\)", code).group(1)
        published = []
        shell = types.SimpleNamespace(user_ns=self.namespace)
        display = types.SimpleNamespace(display=lambda data, raw: published.append(data))
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(agent, "get_ipython", lambda: shell, raising=False)
            patch.setitem(__import__("sys").modules, "IPython.display", display)
            agent.serve(payload)
        return published[0][agent.MIME]


def _channel(**namespace) -> tuple[Channel, FakeKernel]:
    kernel = FakeKernel(namespace)
    return Channel(kernel.execute), kernel


def _reply(obj: object) -> str:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return base64.b64encode(buffer.getvalue()).decode()


def test_a_tensor_arrives_by_value_and_changing_it_here_does_not_touch_the_kernel():
    kept = torch.arange(4.0)
    channel, _ = _channel(x=kept)
    got = channel.request(op="name", name="x")
    got += 100
    assert type(got) is torch.Tensor
    assert torch.equal(kept, torch.arange(4.0))


def test_calling_a_student_function_sends_the_inputs_and_returns_the_result():
    channel, kernel = _channel(double=lambda t: t * 2)
    namespace = {}
    bind_names(namespace, {"double"}, channel)
    assert isinstance(namespace["double"], Remote)
    out = namespace["double"](torch.ones(2, 3))
    assert torch.equal(out, torch.full((2, 3), 2.0))
    assert kernel.requests == 2  # traer el nombre y llamarlo


def test_a_module_is_a_remote_seen_as_nn_module_and_its_parameters_come_as_plain_tensors():
    channel, _ = _channel(layer=nn.Linear(3, 2))
    layer = channel.request(op="name", name="layer")
    assert isinstance(layer, nn.Module)
    weight = layer.weight
    assert type(weight) is torch.Tensor and weight.shape == (2, 3)
    assert not weight.requires_grad


def test_a_tensor_subclass_never_arrives_as_a_tensor():
    class AlwaysEqual(torch.Tensor):
        def __eq__(self, other):
            return True

    channel, _ = _channel(fake=torch.zeros(2).as_subclass(AlwaysEqual))
    got = channel.request(op="name", name="fake")
    assert type(got) is Remote  # se queda en el núcleo: no es un dato
    with pytest.raises(AssertionError, match="tensor"):
        checks.close("salida", got, torch.zeros(2))


def test_a_name_the_kernel_lacks_is_left_undefined():
    channel, _ = _channel()
    namespace = {}
    bind_names(namespace, {"attention_scores", "len"}, channel)
    assert namespace == {}


def test_a_builtin_exception_is_raised_again_here_and_any_other_is_a_student_error():
    class Mine(Exception):
        pass

    def bad_value():
        raise ValueError("d_k debe ser positivo")

    def bad_custom():
        raise Mine("propio")

    def bad_stop():
        raise StopIteration

    channel, _ = _channel(bad_value=bad_value, bad_custom=bad_custom, bad_stop=bad_stop)
    with pytest.raises(ValueError, match="d_k debe ser positivo"):
        channel.request(op="name", name="bad_value")()
    with pytest.raises(StudentError, match="Mine: propio"):
        channel.request(op="name", name="bad_custom")()
    with pytest.raises(StudentError, match="StopIteration"):
        channel.request(op="name", name="bad_stop")()


@pytest.mark.parametrize(
    "answer",
    [
        "no es base64 ni un resultado",
        _reply({"ok": 1, "extra": 2}),
        _reply(["ok", 1]),
        _reply({}),
        base64.b64encode(pickle.dumps({"ok": print})).decode(),
    ],
    ids=["basura", "claves-de-mas", "lista", "vacio", "pickle-con-codigo"],
)
def test_a_lying_kernel_gets_an_unreadable_answer_error(answer):
    channel = Channel(lambda code: answer)
    with pytest.raises(StudentError) as raised:
        channel.request(op="name", name="x")
    assert raised.value.ename == "RespuestaIlegible"


def test_a_pickle_that_would_run_code_in_the_grader_is_never_executed():
    ran = []

    class Payload:
        def __reduce__(self):
            return (ran.append, ("ejecutado",))

    answer = base64.b64encode(pickle.dumps({"ok": Payload()})).decode()
    with pytest.raises(StudentError):
        Channel(lambda code: answer).request(op="name", name="x")
    assert ran == []


def test_an_oversized_answer_is_refused_without_reading_it(monkeypatch):
    monkeypatch.setattr(remote, "MAX_REPLY_BYTES", 30)
    channel = Channel(lambda code: _reply({"ok": torch.zeros(100)}))
    with pytest.raises(StudentError) as raised:
        channel.request(op="name", name="x")
    assert raised.value.ename == "RespuestaDemasiadoGrande"


def test_remote_objects_passed_back_are_resolved_in_the_kernel():
    channel, _ = _channel(
        make=lambda: nn.Linear(2, 2), count=lambda m: sum(1 for _ in m.parameters())
    )
    module = channel.request(op="name", name="make")()
    assert channel.request(op="name", name="count")(module) == 2
