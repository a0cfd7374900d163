"""Los ganchos de nbclient y jupyter_client de los que depende el calificador, sin núcleo.

``TrustedExecute``, ``SandboxedKernelManager`` y los pasos de ``course.grading.door``
solo sobrescriben métodos públicos y rellenan rasgos públicos. Estas pruebas fallan si una versión nueva de nbgrader, nbclient
o jupyter_client deja de llamarlos como hoy (o si alguien vuelve a sobrescribir un método
privado): sin ellas, una actualización dejaría sin tope de tiempo las celdas del estudiante
o reutilizaría un archivo de conexión que el núcleo pudo cambiar, en silencio.
"""

import ast
import asyncio
import inspect
import subprocess
import textwrap
import time
import types
from queue import Empty

import nbformat
import pytest
from jupyter_client.provisioning import LocalProvisioner
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError

from course.grading.door import RestoreCells, SealedAutograde
from course.grading.execute import TrustedExecute
from course.grading.sandbox import SandboxedKernelManager


@pytest.mark.parametrize(
    "cls", [TrustedExecute, SandboxedKernelManager, RestoreCells, SealedAutograde]
)
def test_no_private_method_or_attribute_of_the_libraries_is_used(cls):
    bases = cls.__mro__[1:]
    methods = [
        name
        for name, value in vars(cls).items()
        if inspect.isfunction(value) and name.startswith("_") and not name.startswith("__")
    ]
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    used = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr.startswith("_")
    }
    private = {name for name in [*methods, *used] if not name.startswith("__")}
    assert {name for name in private if any(hasattr(base, name) for base in bases)} == set()


class SilentKernel:
    """Un cliente de núcleo que nunca contesta: cuenta cuántas veces se le pregunta."""

    def __init__(self):
        self.waits = 0
        self.shell_channel = types.SimpleNamespace(get_msg=self._get_msg)

    def _get_msg(self, timeout):
        self.waits += 1
        raise Empty

    def is_alive(self):
        return True


def _wait(client: NotebookClient) -> int:
    """Espera la respuesta de una celda que nunca llega; devuelve cuántos intervalos esperó."""
    kernel = SilentKernel()
    client.kc = kernel
    cell = nbformat.v4.new_code_cell("while True: pass")
    with pytest.raises(CellTimeoutError):
        asyncio.run(client.async_wait_for_reply("id", cell))
    return kernel.waits


def test_nbclient_asks_timeout_func_for_each_cell():
    notebook = nbformat.v4.new_notebook()
    asked = []

    def three_seconds(cell):
        asked.append(cell.source)
        return 3

    client = NotebookClient(
        notebook, timeout=1000, timeout_func=three_seconds, shell_timeout_interval=1
    )
    assert 3 <= _wait(client) <= 5  # intervalos de 1 s: los 3 s de la función, no 1000
    assert asked == ["while True: pass"]


def test_a_student_cell_never_gets_more_than_the_notebook_has_left():
    execute = TrustedExecute(
        timeout=1000, sandboxed=False, shell_timeout_interval=1, interrupt_on_timeout=False
    )
    execute._deadline = time.monotonic() + 3.5  # lo que fija ``preprocess``
    assert 3 <= _wait(execute) <= 5
    execute._deadline = time.monotonic() + 10_000
    assert execute.timeout_func(nbformat.v4.new_code_cell("")) == 1000


def _manager(tmp_path) -> SandboxedKernelManager:
    box = types.SimpleNamespace(
        uid=None, zygote=None, disk=None, command=lambda kernel: ["caja", *kernel]
    )
    return SandboxedKernelManager(
        box=box,
        transport="ipc",
        ip=str(tmp_path / "zmq"),
        connection_file=str(tmp_path / "conexion.json"),
    )


def test_each_start_writes_a_new_connection_file_and_never_follows_a_link(tmp_path):
    manager = _manager(tmp_path)
    command, _ = asyncio.run(manager.pre_start_kernel())
    first = manager.connection_file
    assert command[0] == "caja" and first in command  # el núcleo, dentro de la caja
    assert manager.kernel_spec.interrupt_mode == "message"
    secret = tmp_path / "gradebook.db"
    secret.write_text("notas")
    (tmp_path / first).unlink()
    (tmp_path / first).symlink_to(secret)  # lo que dejaría un núcleo hostil
    asyncio.run(manager.pre_start_kernel())  # el reinicio vuelve a pasar por aquí
    second = manager.connection_file
    assert second != first and tmp_path.joinpath(second).is_file()
    assert not tmp_path.joinpath(first).is_symlink() and secret.read_text() == "notas"
    assert {p.name for p in tmp_path.iterdir()} == {"gradebook.db", second.split("/")[-1]}


def test_the_kernel_output_goes_nowhere(tmp_path, monkeypatch):
    launched = []

    async def launch_kernel(self, cmd, **kwargs):
        launched.append(kwargs)
        raise RuntimeError("sin núcleo en esta prueba")

    monkeypatch.setattr(LocalProvisioner, "launch_kernel", launch_kernel)
    with pytest.raises(RuntimeError, match="sin núcleo"):
        asyncio.run(_manager(tmp_path).start_kernel())
    assert [(k["stdout"], k["stderr"]) for k in launched] == [(subprocess.DEVNULL,) * 2]
