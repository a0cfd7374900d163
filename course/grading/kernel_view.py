"""¿Ve el núcleo aislado el mismo paquete ``course`` que el calificador?

El núcleo encuentra ``course`` por la instalación editable del entorno virtual (la caja
borra el entorno). Si esa instalación apunta a otra copia del curso, o la copia se movió,
el núcleo no puede importar ``course.grading.agent`` y cada respuesta del protocolo es
ilegible: una solución honesta sacaría 0, igual que un cuaderno en blanco. Eso es un fallo
del calificador, nunca del estudiante:

- :func:`problem` compara lo que contesta la sonda :data:`PROBE` (ejecutada en el núcleo
  antes que ninguna celda del estudiante) con lo que ve el calificador;
- :func:`check` arranca un núcleo aislado solo para eso (``doctor`` y el inicio de
  ``grade``), antes de calificar ninguna entrega;
- :class:`GradingFailure` es el error que deja la entrega «sin calificar».
"""

import asyncio
import hashlib
import json
import tempfile
import time
from pathlib import Path
from queue import Empty

import course
from course import labs
from course.grading import sandbox
from course.grading.agent import MIME
from course.labs import CourseError

# Sin depender de ``course``: tiene que contestar también cuando no se puede importar.
PROBE = """\
def _sonda_curso():
    import hashlib, json, os
    from IPython.display import display
    try:
        import course, course.grading.agent
        folder = os.path.dirname(os.path.abspath(course.__file__))
        hashes = {}
        for name in ("__init__.py", os.path.join("grading", "agent.py")):
            with open(os.path.join(folder, name), "rb") as f:
                hashes[name] = hashlib.sha256(f.read()).hexdigest()
        reply = {"ok": {"folder": folder, "hashes": hashes}}
    except BaseException as e:
        reply = {"error": [type(e).__name__, str(e)[:500]]}
    display({"application/x-course-result": json.dumps(reply)}, raw=True)
_sonda_curso()
del _sonda_curso
"""
FILES = ("__init__.py", "grading/agent.py")
NOT_GRADED = "Es un fallo del entorno del calificador, no de la entrega: no se ha puesto nota."


def advice() -> str:
    """Qué hacer cuando el núcleo no ve el paquete del calificador."""
    return (
        "con el entorno virtual activado, ejecuta «pip install -e .» en la carpeta del curso"
        f" ({Path(course.__file__).parent.absolute().parent}), comprueba con «python -m course"
        " doctor» y vuelve a calificar"
    )


def explained(found: str) -> str:
    """El problema de :func:`problem` con lo que significa para la nota y qué hacer."""
    return f"{found}. {NOT_GRADED} Arreglo: {advice()}."


class GradingFailure(CourseError):
    """El calificador no pudo calificar (núcleo, paquete, protocolo): la entrega queda sin nota."""


def expected() -> dict:
    """Carpeta y huellas del paquete que usa el calificador (la caja lo monta en esa ruta)."""
    folder = Path(course.__file__).parent.absolute()
    hashes = {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in FILES}
    return {"folder": str(folder), "hashes": hashes}


def problem(answer: str) -> str:
    """``""`` si la sonda dice que el núcleo ve el mismo paquete; si no, qué falla."""
    mine = expected()
    try:
        reply = json.loads(answer)
    except ValueError:
        return "el núcleo aislado no contestó a la sonda del calificador"
    if not isinstance(reply, dict) or not ({"ok"} == set(reply) or {"error"} == set(reply)):
        return "el núcleo aislado contestó algo inesperado a la sonda del calificador"
    if "error" in reply:
        ename, evalue = (list(reply["error"]) + ["", ""])[:2]
        return f"el núcleo aislado no puede importar el paquete del curso ({ename}: {evalue})"
    seen = reply["ok"] if isinstance(reply["ok"], dict) else {}
    hashes = seen.get("hashes") if isinstance(seen.get("hashes"), dict) else {}
    found = {name.replace("\\", "/"): value for name, value in hashes.items()}
    if seen.get("folder") != mine["folder"] or found != mine["hashes"]:
        return (
            f"el núcleo aislado importa otra copia del curso ({seen.get('folder')!s:.200}) que"
            f" el calificador ({mine['folder']})"
        )
    return ""


def check(timeout: float = 120) -> str:
    """Arranca un núcleo aislado, le pasa la sonda y dice si ve el paquete del calificador.

    ``""`` si todo está bien (o no hay laboratorios); si no, el problema en español.
    """
    lab = next(iter(labs.LABS.values()))
    with (
        tempfile.TemporaryDirectory(prefix="course-sonda-") as tmp,
        tempfile.TemporaryDirectory(prefix="nucleo-", dir=sandbox.socket_parent()) as runtime,
    ):
        box = sandbox.grading_box(lab, Path(tmp), Path(runtime))
        try:
            answer = asyncio.run(_ask(box, Path(runtime), timeout))
        except Exception as error:  # noqa: BLE001 (cualquier fallo al arrancar el núcleo)
            return f"el núcleo aislado no arranca ({type(error).__name__}: {error})"
    return problem(answer)


async def _ask(box, runtime: Path, timeout: float) -> str:
    """Ejecuta :data:`PROBE` en un núcleo nuevo dentro de ``box``; devuelve su respuesta."""
    manager = sandbox.SandboxedKernelManager(
        box=box, transport="ipc", ip=str(runtime / "zmq"),
        connection_file=str(runtime / "conexion.json"),
    )  # fmt: skip
    await manager.start_kernel(extra_arguments=["--HistoryManager.hist_file=:memory:"])
    client = manager.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=timeout)
        msg_id = client.execute(PROBE, store_history=False)
        deadline = time.monotonic() + timeout
        found = ""
        while time.monotonic() < deadline:
            try:
                msg = await client.get_iopub_msg(timeout=1)
            except Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            content = msg["content"]
            if msg["msg_type"] == "display_data" and MIME in content.get("data", {}):
                found = content["data"][MIME]
            elif msg["msg_type"] == "status" and content["execution_state"] == "idle":
                return found
        return found
    finally:
        client.stop_channels()
        await manager.shutdown_kernel(now=True)


_VERIFIED: list[bool] = []  # ya comprobado en este proceso (varios ``grade`` seguidos)


def require() -> None:
    """Al empezar ``grade``: si el núcleo aislado no ve este ``course``, no se califica a nadie.

    Un resultado bueno vale para el resto del proceso (el entorno virtual no cambia mientras
    tanto); además, cada entrega repite la sonda en su propio núcleo (``execute``).
    """
    if _VERIFIED:
        return
    found = check()
    if found:
        raise CourseError(f"No califico ninguna entrega: {explained(found)}")
    _VERIFIED.append(True)


def doctor_check() -> tuple[bool, str, str]:
    """La fila de ``doctor``: (bien, qué se comprobó, qué hacer)."""
    from course.grading import sandbox

    if sandbox.available():
        return True, "núcleo aislado: sin bubblewrap no se puede comprobar", ""
    found = check()
    if found:
        return False, found, advice()
    return True, "el núcleo aislado importa el mismo paquete «course» que el calificador", ""
