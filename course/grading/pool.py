"""Núcleos aislados arrancados por adelantado, cada uno para una sola entrega.

Arrancar el núcleo dentro de ``bwrap`` e importar torch en él cuesta ≈ 2,4 s por entrega.
:class:`WarmKernel` lanza el proceso en cuanto la caja de la entrega está lista y le pide
que importe lo que importa la celda de preparación del curso, sin esperar respuesta: el
núcleo arranca mientras el calificador prepara el curso temporal (``check``) o mientras
califica la entrega anterior (``grade``).

Lo que no cambia: un núcleo es de una entrega. Se entrega una sola vez
(:meth:`WarmKernel.take`) y se destruye al terminar esa entrega, también si se rechazó o
falló antes de usarlo (:meth:`WarmKernel.destroy`); nunca pasa a otro estudiante ni a otro
laboratorio. Lo que se importa por adelantado es código del curso, antes que ninguna celda
del estudiante, y sin dejar nombres en su espacio de nombres (``__import__``).
"""

import ast

from jupyter_client.session import Session
from jupyter_core.utils import run_sync
from traitlets.config import Config

from course.grading.sandbox import SandboxedKernelManager

# nbclient arranca así los núcleos de Python: sin historial en disco.
KERNEL_ARGUMENTS = ["--HistoryManager.hist_file=:memory:"]
ALWAYS = ("torch", "course.grading.agent")  # la sonda importa el agente antes que nada


def preload_code(setup_source: str) -> str:
    """Código que importa lo que importa la celda de preparación, sin enlazar ningún nombre.

    Todas las importaciones del principio, y de las de después solo las del propio curso
    (``course.…``: ``checks``, ``examples``, ``viz`` y matplotlib cuestan tanto como torch).
    Una importación ajena que va detrás de ``torch.manual_seed(0)`` tiene que seguir
    ocurriendo detrás (un módulo que genera números aleatorios al importarse cambiaría si
    no los de todo el cuaderno); los módulos del curso no generan ninguno al importarse
    (``tests/test_pool.py`` lo comprueba). Un módulo que no se puede importar no detiene
    nada: la celda de preparación fallará después igual que sin núcleo adelantado.
    """
    modules: dict[str, list[str]] = {name: [] for name in ALWAYS}
    try:
        body = ast.parse(setup_source).body
    except SyntaxError:
        body = []
    leading = True
    for node in body:
        leading = leading and isinstance(node, ast.Import | ast.ImportFrom)
        for name, names in _imported(node):
            if leading or name == "course" or name.startswith("course."):
                modules.setdefault(name, []).extend(names)
    lines = [
        f"    __import__({name!r}, fromlist={names!r})" if names else f"    __import__({name!r})"
        for name, names in modules.items()
    ]
    return "try:\n" + "\n".join(lines) + "\nexcept Exception:\n    pass\n"


def _imported(node: ast.stmt) -> list[tuple[str, list[str]]]:
    """``(módulo, nombres que trae con from)`` de una importación absoluta; si no, nada."""
    if isinstance(node, ast.Import):
        return [(alias.name, []) for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        return [(node.module, [alias.name for alias in node.names if alias.name != "*"])]
    return []


class WarmKernel:
    """Un núcleo aislado ya lanzado para una entrega concreta; se usa una vez y se destruye."""

    def __init__(self, config: Config, setup_source: str):
        self.km = SandboxedKernelManager(config=config, kernel_name="python3")
        self.error: Exception | None = None
        self._client = None
        self._taken = False
        try:
            run_sync(self.km.start_kernel)(extra_arguments=KERNEL_ARGUMENTS)
            # Otra sesión: el canal de órdenes se identifica con el id de sesión, y con el
            # mismo id el núcleo mandaría las respuestas de nbclient a este cliente.
            mine = self.km.session
            session = Session(key=mine.key, signature_scheme=mine.signature_scheme)
            self._client = self.km.client(session=session)
            self._client.start_channels(iopub=False, stdin=False, hb=False, control=False)
            code = preload_code(setup_source)
            self._client.execute(code, silent=True, store_history=False, allow_stdin=False)
        except Exception as error:  # noqa: BLE001 (se informa al usarlo, como sin adelanto)
            self.error = error

    def __deepcopy__(self, memo) -> "WarmKernel":
        """traitlets copia cada valor de configuración; una copia sería otro núcleo a medias."""
        return self

    def take(self) -> SandboxedKernelManager:
        """El gestor del núcleo, una sola vez; si no arrancó, la excepción de su arranque."""
        if self._taken:
            raise RuntimeError("un núcleo adelantado solo sirve para una entrega")
        self._taken = True
        if self.error is not None:
            raise self.error
        return self.km

    def destroy(self) -> None:
        """Mata el núcleo (y con ``bwrap`` todo lo que lanzó) y cierra sus canales.

        No lanza: si el apagado ordenado falla, se mata el proceso de ``bwrap``, para que
        la serie siga con la entrega siguiente sin este núcleo vivo.
        """
        self._taken = True
        if self._client is not None:
            self._client.stop_channels()
            self._client = None
        process = getattr(self.km.provisioner, "process", None)
        try:
            if self.km.has_kernel:
                run_sync(self.km.shutdown_kernel)(now=True)
            run_sync(self.km.cleanup_resources)()
        except Exception:  # noqa: BLE001
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
