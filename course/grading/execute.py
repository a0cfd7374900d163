"""El paso de ejecución de nbgrader, repartido entre el núcleo aislado y el calificador.

- Las celdas del estudiante (respuestas, celdas propias, la de preparación) se ejecutan
  en su núcleo, dentro de ``course.grading.sandbox``.
- Las celdas de prueba, visibles y ocultas, se ejecutan aquí, en el proceso de
  calificación, con el código del libro de notas (nunca el de la entrega). Sus nombres
  libres que no define la celda de preparación se traen del núcleo
  (``course.grading.remote``): cada llamada a una función del estudiante es una petición
  al núcleo, y lo que vuelve son datos. La referencia, las pruebas ocultas y la decisión
  de pasa o no pasa nunca entran en el núcleo.

Nada de lo que hace el núcleo detiene la calificación del resto del cuaderno: si una
celda agota su tiempo (también un bucle que ignora ``KeyboardInterrupt``) o el núcleo
muere, se arranca otro núcleo, se repiten las celdas del estudiante que ya habían
terminado y se sigue; la celda culpable es la única que pierde. Hay además un tope de
tiempo para el cuaderno entero.
"""

import ast
import contextlib
import io
import time
import warnings
from pathlib import Path
from queue import Empty

import nbformat
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbgrader.preprocessors import Execute
from traitlets import Any, Bool, Integer, List, Unicode

from course import notebooks
from course.grading import diagnosis, kernel_view
from course.grading.agent import MIME
from course.grading.kernel_view import GradingFailure
from course.grading.limits import GraderClock, GraderTimeout, memory_cap, private_tempdir
from course.grading.outputs import MAX_IMAGE_BYTES, MAX_OUTPUT_BYTES, cap, sizes
from course.grading.remote import Channel, StudentError, bind_names, method
from course.grading.sandbox import GIB, SandboxedKernelManager
from course.student import hints
from course.text import number

CUT = "\n[… salida recortada: esta celda pasó de {} bytes de texto o {} de imágenes]\n"
PROBE_S = 120  # la sonda importa torch en el núcleo: no depende del tiempo de una celda
RECOVERY_S = 5  # espera tras una interrupción antes de dar el núcleo por perdido


class KernelLost(Exception):
    """El núcleo no respondió a tiempo o murió; ya se ha sustituido por otro."""


class TrustedExecute(Execute):
    """``Execute`` de nbgrader en el que el estudiante no decide ningún resultado."""

    test_cells = List(Unicode(), help="grade ids de las celdas de prueba").tag(config=True)
    setup_source = Unicode("", help="celda de preparación (del curso)").tag(config=True)
    notebook_timeout = Integer(900, help="segundos para el cuaderno entero").tag(config=True)
    test_path = Unicode("", help="carpeta de trabajo de las pruebas").tag(config=True)
    sandboxed = Bool(True, help="núcleo dentro de bubblewrap").tag(config=True)
    scratch = Unicode("", help="carpeta de tempfile de las pruebas; se borra").tag(config=True)
    grader_memory = Integer(
        4 * GIB, help="bytes de memoria virtual que el calificador puede sumar al calificar"
    ).tag(config=True)
    report = Any(None, help="diccionario donde se anota un fallo del calificador").tag(config=True)
    warm = Any(None, help="núcleo adelantado (course.grading.pool)").tag(config=True)
    # Tras la respuesta del núcleo, espera a sus últimas salidas; con la máquina cargada y
    # salidas grandes, los 4 s de nbclient se quedan cortos y la celda se perdería.
    iopub_timeout = Integer(20).tag(config=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.kernel_manager_class = SandboxedKernelManager if self.sandboxed else AsyncKernelManager
        self.timeout_func = self._cell_timeout  # el gancho público de nbclient

    def preprocess(self, nb, resources=None, km=None):
        """Califica ``nb`` con los límites del calificador (memoria, tiempo, temporales)."""
        self._deadline = time.monotonic() + self.notebook_timeout
        self._output_bytes: dict[int, tuple[int, int]] = {}  # (texto, imágenes)
        self._lost = False
        self._probed = False
        self._output_cut: set[int] = set()
        self._replay: list[str] = []
        self._namespace: dict = {METHOD: method}  # lo usan las llamadas reescritas
        self._clock = GraderClock()
        scratch = contextlib.nullcontext()
        if self.scratch:
            scratch = private_tempdir(Path(self.scratch))
        with scratch, memory_cap(self.grader_memory):
            exec(compile(self.setup_source, "<preparación>", "exec"), self._namespace)
            try:
                if self.warm is not None:  # es de esta entrega; quien lo adelantó lo destruye
                    km = self.warm.take()
                return super().preprocess(nb, resources, km)
            except DeadKernelError:  # al cerrar un núcleo ya muerto
                return self.nb, self.resources
            except GradingFailure:
                raise
            except Exception as error:  # el núcleo no arrancó: antes de cualquier celda
                if self._probed:
                    raise
                started = f"el núcleo aislado no arrancó ({type(error).__name__}: {error})"
                raise self._failure(kernel_view.explained(started)) from error
            finally:
                if self.warm is not None and getattr(self, "kc", None):  # nbclient no lo cierra
                    self.kc.stop_channels()

    def _failure(self, message: str) -> GradingFailure:
        """Anota el fallo del calificador para ``runner`` y lo devuelve para lanzarlo."""
        if isinstance(self.report, dict):
            self.report["failure"] = message
        return GradingFailure(message)

    def _probe(self) -> None:
        """Antes de la primera celda: ¿importa el núcleo el mismo ``course`` que el calificador?

        Si no, ninguna prueba podría leer sus respuestas y la entrega sacaría 0 por un fallo
        del calificador; se detiene la calificación y la entrega queda sin nota.
        """
        self._probed = True
        try:
            left = max(1, self._deadline - time.monotonic())
            answer = run_sync(self._execute)(kernel_view.PROBE, min(PROBE_S, left), True)
        except KernelLost:
            answer = ""
        problem = kernel_view.problem(answer)
        if problem:
            raise self._failure(kernel_view.explained(problem))

    def preprocess_cell(self, cell, resources, index):
        diagnosis.forget(cell)  # el de una entrega no cuenta
        if cell.cell_type != "code" or not cell.source.strip():
            return cell, resources
        cell.outputs = []
        if not self._probed:
            self._probe()
        if time.monotonic() > self._deadline:
            cell.outputs = [_error("SinTiempo", self._no_time())]
        elif self._lost:
            cell.outputs = [_error("NucleoPerdido", LOST)]
        elif notebooks.grade_id(cell) in self.test_cells:
            self._run_test(cell)
        else:
            self._run_student(cell, resources, index)
        _cap_outputs(cell, cut=index in self._output_cut)
        return cell, self.resources

    def output(self, outs, msg, display_id, cell_index):
        """Cada salida del núcleo, mientras quepa en los topes de la celda (ya en memoria).

        Así 800 MB de ``print`` no llegan a ocupar la memoria del calificador; lo que se
        pasa del doble del tope se descarta y ``_cap_outputs`` deja la nota al final de la
        celda. Texto e imágenes tienen topes distintos: una figura no es una inundación.
        """
        content = msg.get("content", {})
        data = content.get("data", {}) if isinstance(content.get("data"), dict) else {}
        text, images = sizes({"text": content.get("text", ""), "data": data})
        used = self._output_bytes.get(cell_index, (0, 0))
        used = (used[0] + text, used[1] + images)
        self._output_bytes[cell_index] = used
        over = used[0] > 2 * MAX_OUTPUT_BYTES or used[1] > 2 * MAX_IMAGE_BYTES
        if over and msg["msg_type"] != "error":
            self._output_cut.add(cell_index)
            return None
        return super().output(outs, msg, display_id, cell_index)

    def _no_time(self) -> str:
        return f"se agotaron los {self.notebook_timeout} s del cuaderno; esta celda no se ejecutó"

    # --- celdas del estudiante, en su núcleo --------------------------------------------

    def _run_student(self, cell, resources, index) -> None:
        try:
            super().preprocess_cell(cell, resources, index)
            if not _interrupted(cell):  # lo que agotó su tiempo no se repite
                self._replay.append(cell.source)
        except (CellTimeoutError, DeadKernelError) as error:
            dead = isinstance(error, DeadKernelError)
            self._restart()
            reason = (
                "el núcleo de Python se cerró en esta celda (¿os._exit, memoria agotada?)"
                if dead
                else f"la celda no terminó en {self.timeout} s ni respondió a la interrupción"
            )
            cell.outputs.append(
                _error("NucleoCerrado" if dead else "TiempoAgotado", reason + _RESTARTED)
            )

    def _restart(self) -> None:
        """Otro núcleo; si ni siquiera arranca, las celdas siguientes no se ejecutan."""
        try:
            run_sync(self._async_restart)()
        except Exception:  # noqa: BLE001 (sin núcleo, la calificación sigue sin él)
            self._lost = True

    async def _async_restart(self) -> None:
        """Un núcleo nuevo con las celdas del estudiante que ya habían terminado.

        Si una de ellas no termina esta vez, se quita de la lista y se empieza de nuevo.
        """
        while True:
            await ensure_async(self.km.restart_kernel(now=True))
            await ensure_async(self.kc.wait_for_ready(timeout=self.startup_timeout))
            for index, source in enumerate(self._replay):
                left = self._deadline - time.monotonic()
                if left <= 0:
                    return
                try:
                    await self._execute(source, min(self.timeout, left), recover=False)
                except KernelLost:
                    del self._replay[index]
                    break
            else:
                return

    def _cell_timeout(self, cell) -> int:
        """El tiempo de una celda del estudiante, sin pasar del tope del cuaderno."""
        return max(1, min(self.timeout, int(self._deadline - time.monotonic())))

    # --- celdas de prueba, aquí -----------------------------------------------------------

    def _run_test(self, cell) -> None:
        channel = Channel(self._ask_kernel)
        try:
            tree = ast.parse(cell.source)
            bind_names(self._namespace, _free_names(tree), channel)
            code = compile(_method_calls(tree), f"<{_grade_id(cell)}>", "exec")
        except SyntaxError as error:
            cell.outputs = [_error("SyntaxError", str(error))]
            return
        except Exception as error:  # noqa: BLE001 (cualquier respuesta del núcleo al traer un nombre)
            # StudentError, KernelLost o la excepción integrada que el núcleo dice haber
            # lanzado (``{"error": ["AssertionError", ""]}``): falla esta celda, no el cuaderno.
            cell.outputs = [_error(*_describe(error))]
            diagnosis.record(cell, error)
            return
        stdout = io.StringIO()
        with (
            contextlib.redirect_stdout(stdout),
            warnings.catch_warnings(),
            _working_directory(self.test_path),
        ):
            warnings.simplefilter("ignore")
            try:
                with self._clock.limit(self.timeout):
                    exec(code, self._namespace)
                error = None
            except GraderTimeout:
                error = ("TiempoAgotado", GRADER_TIME.format(self.timeout))
            except MemoryError:
                error = ("MemoriaAgotada", GRADER_MEMORY.format(self.grader_memory / GIB))
            except Exception as raised:  # noqa: BLE001 (el fallo de la prueba es su resultado)
                error = _describe(raised)
                diagnosis.record(cell, raised)  # lo que puede decir si es oculta
        if stdout.getvalue():
            cell.outputs.append(
                nbformat.v4.new_output("stream", name="stdout", text=stdout.getvalue())
            )
        if error is not None:
            cell.outputs.append(_error(*error))
            cell.metadata.setdefault(diagnosis.KEY, [])

    def _ask_kernel(self, code: str) -> str:
        if self._lost:
            raise StudentError("NucleoPerdido", LOST)
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise StudentError("SinTiempo", self._no_time())
        try:
            with self._clock.paused():  # la espera al núcleo tiene su propio tope
                return run_sync(self._execute)(code, min(self.timeout, left), True)
        except KernelLost as lost:
            raise StudentError("TiempoAgotado", str(lost)) from None

    async def _execute(
        self, code: str, timeout: float, answer: bool = False, recover: bool = True
    ) -> str:
        """Ejecuta ``code`` en el núcleo; devuelve el texto publicado con ``MIME``.

        Una petición que espera respuesta (``answer``) va en silencio: sin eco de la celda
        ni contador de ejecución, un mensaje menos por ida y vuelta.
        """
        msg_id = await ensure_async(
            self.kc.execute(
                code, silent=answer, store_history=False, allow_stdin=False, stop_on_error=False
            )
        )
        deadline = time.monotonic() + timeout
        found = ""
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not await ensure_async(self.km.is_alive()):
                if recover:
                    await self._interrupt_or_replace(msg_id)
                raise KernelLost(f"el código del estudiante no terminó en {timeout:.0f} s")
            try:
                msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=min(left, 1)))
            except Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "display_data" and answer and MIME in content.get("data", {}):
                found = content["data"][MIME]
            elif kind == "status" and content["execution_state"] == "idle":
                return found

    async def _interrupt_or_replace(self, msg_id: str) -> None:
        """Interrumpe el núcleo; si no vuelve a estar libre pronto, lo sustituye."""
        if await ensure_async(self.km.is_alive()):
            await ensure_async(self.km.interrupt_kernel())
            deadline = time.monotonic() + RECOVERY_S
            while time.monotonic() < deadline:
                try:
                    msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=1))
                except Empty:
                    continue
                if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status":
                    if msg["content"]["execution_state"] == "idle":
                        return
        try:
            await self._async_restart()
        except Exception:  # noqa: BLE001
            self._lost = True


GRADER_TIME = "la prueba pasó de {} s en el calificador (sin contar las esperas al núcleo)"
GRADER_MEMORY = "la prueba pasó del tope de memoria del calificador ({:g} GiB más)"
LOST = "no se pudo arrancar otro núcleo después de un fallo; esta celda no se ejecutó"
_RESTARTED = "; se ha arrancado otro núcleo y se han repetido las celdas anteriores."


def _interrupted(cell) -> bool:
    return any(
        output.output_type == "error" and output.ename in ("CellTimeoutError", "KeyboardInterrupt")
        for output in cell.outputs
    )


def _cut_note() -> nbformat.NotebookNode:
    return nbformat.v4.new_output(
        "stream", name="stdout", text=CUT.format(number(MAX_OUTPUT_BYTES), number(MAX_IMAGE_BYTES))
    )


def _grade_id(cell) -> str:
    return notebooks.grade_id(cell) or "celda"


def _free_names(tree: ast.AST) -> set[str]:
    """Nombres que la celda lee y nunca asigna: los que pueden venir del núcleo."""
    loaded, stored = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else stored).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            stored.add(node.name)
        elif isinstance(node, ast.alias):
            stored.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            stored.add(node.arg)
    return loaded - stored


METHOD = "__course_method__"


class _MethodCalls(ast.NodeTransformer):
    """``x.f(...)`` → ``__course_method__(x, "f")(...)`` (``course.grading.remote.method``).

    Con ``x`` del núcleo, leer ``f`` y llamarlo es una sola petición en lugar de dos; con
    cualquier otro ``x`` es el mismo ``getattr``. Solo cambia cuándo se lee ``f`` de un
    objeto del núcleo: tras evaluar los argumentos, no antes.
    """

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute):
            helper = ast.Name(METHOD, ast.Load())
            target = [node.func.value, ast.Constant(node.func.attr)]
            node.func = ast.copy_location(ast.Call(helper, target, []), node.func)
        return node


def _method_calls(tree: ast.Module) -> ast.Module:
    return ast.fix_missing_locations(_MethodCalls().visit(tree))


def _describe(error: BaseException) -> tuple[str, str]:
    if isinstance(error, StudentError):
        return error.ename, error.evalue
    return type(error).__name__, str(error).strip("'") if isinstance(error, KeyError) else str(
        error
    )


def _error(ename: str, evalue: str) -> nbformat.NotebookNode:
    """Salida de error; un error conocido de PyTorch lleva además su pista en español."""
    lines = [f"{ename}: {evalue}" if evalue else ename]
    hint = hints.hint(ename, evalue)
    if hint:
        lines.append(hint)
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=lines)


@contextlib.contextmanager
def _working_directory(path: str):
    if not path:
        yield
        return
    with contextlib.chdir(path):
        yield


def _cap_outputs(cell, cut: bool = False) -> None:
    """Las salidas de la celda dentro de los topes (:func:`course.grading.outputs.cap`),
    con una nota al final si se cortó algo (también si ``cut``: ya se descartó algo al
    llegar, en :meth:`TrustedExecute.output`)."""
    cell.outputs, capped = cap(cell.outputs, MAX_OUTPUT_BYTES, MAX_IMAGE_BYTES)
    if cut or capped:
        cell.outputs.append(_cut_note())
