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


class Box:
    """Un objeto del cuaderno que no es un dato: se queda en el núcleo."""

    def __init__(self):
        self.items = [torch.ones(2), torch.zeros(3)]
        self.size = 2

    def __getitem__(self, index):
        return self.items[index]

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)


def test_every_operation_of_a_remote_is_answered_by_the_agent():
    channel, kernel = _channel(box=Box())
    box = channel.request(op="name", name="box")
    assert type(box) is Remote
    assert box.size == 2
    box.size = 5
    assert box.size == 5 and kernel.namespace["box"].size == 5
    assert torch.equal(box[1], torch.zeros(3))
    assert len(box) == 2 and bool(box) is True
    assert [t.shape for t in box] == [(2,), (3,)]
    assert box.type_name() == f"{Box.__module__}.Box"
    assert type(box).__name__ == "Remote"  # una clase del cuaderno no se imita aquí


def test_run_in_kernel_calls_a_course_function_with_the_remote_resolved_there():
    channel, _ = _channel(box=Box())
    box = channel.request(op="name", name="box")
    assert box.run_in_kernel("builtins:len", (box,), {}) == 2
    with pytest.raises(ModuleNotFoundError, match="no_existe"):
        box.run_in_kernel("no_existe:funcion", (), {})


def test_an_unknown_operation_comes_back_as_a_value_error():
    channel, _ = _channel()
    with pytest.raises(ValueError, match="operación desconocida: borrar"):
        channel.request(op="borrar")


def test_only_plain_data_travels_by_value():
    parameter = nn.Parameter(torch.ones(2))
    data = {
        "tuple": (1, 2.5, "a", None, torch.float32, torch.Size([2, 3])),
        "list": [parameter, {"inner": torch.arange(3)}],
        "ordered": __import__("collections").OrderedDict(a=1),
        "other_keys": {(1, 2): 3},
    }
    channel, _ = _channel(data=data)
    got = channel.request(op="name", name="data")
    assert got["tuple"] == (1, 2.5, "a", None, torch.float32, torch.Size([2, 3]))
    assert type(got["list"][0]) is torch.Tensor and not got["list"][0].requires_grad
    assert torch.equal(got["list"][1]["inner"], torch.arange(3))
    assert type(got["ordered"]) is dict and got["ordered"] == {"a": 1}
    assert type(got["other_keys"]) is Remote  # claves que no son str ni int: se queda allí


@pytest.mark.parametrize("leave", [SystemExit(3), KeyboardInterrupt()], ids=["exit", "ctrl-c"])
def test_a_student_function_that_tries_to_leave_is_a_student_error_here(leave):
    def escape():
        raise leave

    channel, _ = _channel(escape=escape)
    with pytest.raises(StudentError) as raised:
        channel.request(op="name", name="escape")()
    assert raised.value.ename == type(leave).__name__


@pytest.mark.parametrize("ename", ["SystemExit", "KeyboardInterrupt", "GeneratorExit"])
def test_a_kernel_that_claims_an_exception_outside_exception_cannot_stop_the_grader(ename):
    channel = Channel(lambda code: _reply({"error": [ename, "adiós"]}))
    with pytest.raises(StudentError) as raised:
        channel.request(op="name", name="x")
    assert (raised.value.ename, raised.value.evalue) == (ename, "adiós")


def test_a_long_error_message_is_cut_in_the_kernel():
    def verbose():
        raise ValueError("x" * 10_000)

    channel, _ = _channel(verbose=verbose)
    with pytest.raises(ValueError) as raised:
        channel.request(op="name", name="verbose")()
    assert len(str(raised.value)) == 2000


def test_a_request_travels_as_base64_so_a_name_cannot_inject_code():
    sent = []
    channel, kernel = _channel()

    def execute(code):
        sent.append(code)
        return kernel.execute(code)

    with pytest.raises(KeyError):
        Channel(execute).request(op="name", name="x'); import os; os.system('echo hola")
    head, payload = sent[0].rsplit("\n", 1)
    assert head == "import course.grading.agent as _agent"
    assert re.fullmatch(r"_agent\.serve\('[A-Za-z0-9+/=]+'\)", payload)


@pytest.mark.parametrize(
    ("mro", "name"),
    [
        ([[1, 2]], "?"),
        ([], "?"),
        ([["os", "system"]], "os.system"),
        ([["torch.no_existe", "Clase"]], "torch.no_existe.Clase"),
        ([["torch", "relu"]], "torch.relu"),  # existe, pero no es una clase
    ],
    ids=["numeros", "vacio", "fuera-de-torch", "no-existe", "no-es-clase"],
)
def test_a_lying_type_answer_leaves_a_plain_remote(mro, name):
    channel = Channel(lambda code: _reply({"ok": mro}))
    remote_object = Remote(channel, 1)
    assert type(remote_object) is Remote
    assert remote_object.type_name() == name


def test_bool_is_true_only_for_a_true_answer():
    for answer, expected in [(True, True), (1, False), ("sí", False), (None, False)]:
        assert bool(Remote(Channel(lambda code, a=answer: _reply({"ok": a})), 1)) is expected


def test_several_names_come_in_one_request_and_only_the_names_asked_are_bound():
    channel, kernel = _channel(a=torch.ones(1), b=lambda: 1, secret=2)
    namespace = {}
    bind_names(namespace, {"a", "b", "missing", "len"}, channel)
    assert kernel.requests == 1
    assert set(namespace) == {"a", "b"} and type(namespace["b"]) is Remote
    liar = Channel(lambda code: _reply({"ok": {"a": 1, "extra": 2}}))
    namespace = {}
    bind_names(namespace, {"a"}, liar)
    assert namespace == {"a": 1}
    with pytest.raises(StudentError, match="RespuestaIlegible"):
        bind_names({}, {"a"}, Channel(lambda code: _reply({"ok": [1]})))


def test_a_method_call_on_a_remote_is_one_request_and_a_local_one_is_plain_getattr():
    channel, kernel = _channel(layer=nn.Linear(3, 2, bias=False))
    layer = channel.request(op="name", name="layer")
    before = kernel.requests
    out = remote.method(layer, "forward")(torch.ones(1, 3))
    assert kernel.requests == before + 1
    assert torch.equal(out, kernel.namespace["layer"](torch.ones(1, 3)).detach())
    with pytest.raises(AttributeError):
        remote.method(layer, "no_existe")()
    local = torch.arange(3.0)
    assert remote.method(local, "sum") == local.sum  # el mismo método ligado, sin petición


def test_a_handle_brings_its_class_so_isinstance_asks_nothing():
    channel, kernel = _channel(layer=nn.Linear(3, 2))
    layer = channel.request(op="name", name="layer")
    before = kernel.requests
    assert isinstance(layer, nn.Module) and layer.type_name() == "torch.nn.modules.linear.Linear"
    assert kernel.requests == before


@pytest.mark.parametrize("mro", [[[1, 2]], "torch.nn.Module", [["torch.nn", "Module", "x"]]])
def test_a_malformed_class_with_a_handle_is_asked_for_again(mro):
    answers = [_reply({"ok": {"__handle__": 7, "__type__": mro}}), _reply({"ok": []})]
    channel = Channel(lambda code: answers.pop(0))
    got = channel.request(op="name", name="x")
    assert type(got) is Remote and answers  # la jerarquía mal formada no se usa
    assert got.__class__ is Remote and not answers  # se pidió aparte


def test_a_test_cell_is_rewritten_so_each_method_call_on_a_remote_is_one_request():
    import ast

    from course.grading import execute

    channel, kernel = _channel(layer=nn.Linear(3, 2))
    source = (
        "order = []\n"
        "out = layer.forward(torch.ones(1, 3))\n"
        "total = torch.zeros(2).add(out.sum(dim=0))\n"
        "class Local:\n"
        "    def f(self, x):\n"
        "        order.append('f')\n"
        "        return x\n"
        "Local().f(order.append('args'))\n"
    )
    namespace = {execute.METHOD: remote.method, "torch": torch}
    bind_names(namespace, {"layer"}, channel)
    before = kernel.requests
    exec(compile(execute._method_calls(ast.parse(source)), "<prueba>", "exec"), namespace)
    assert kernel.requests == before + 1
    assert namespace["out"].shape == (1, 2) and namespace["total"].shape == (2,)
    assert namespace["order"] == ["args", "f"]  # lo local, en el orden de Python
