"""Núcleos que nacen de un cigoto: torch se importa una vez por proceso de calificación.

Arrancar un núcleo aislado e importar torch en él cuesta más CPU que calificar un
cuaderno del laboratorio 1. Con dos procesos de calificación en dos núcleos de CPU, ese
arranque compite con la calificación del otro proceso. Un :class:`Zygote` es un proceso
dentro de ``bwrap`` que importa torch, numpy, matplotlib e ipykernel una sola vez y, por
cada núcleo que se le pide, hace ``fork``: el núcleo nace con todo eso en memoria
(``course/grading/zygote_main.py`` cuenta cómo se aísla cada uno).

Lo que no cambia respecto de :meth:`course.grading.sandbox.Box.command`: cada núcleo ve
solo lo de su caja (sin la copia del paquete, la carpeta de sockets ni las salidas de
otra entrega), con sus espacios de nombres, sus límites y el usuario sin privilegios; se
usa para una sola entrega y muere con ella. Lo único compartido es la memoria del cigoto
antes de ninguna entrega, que cada ``fork`` copia.

Para ``jupyter_client`` el núcleo es un proceso pequeño (:data:`STUB`) que pide el núcleo
al cigoto y vive lo que él: si se le mata, el cigoto mata el espacio de procesos del
núcleo entero. Solo como root (hace falta cambiar de usuario), y solo si todo lo que ve
la caja está en ``/tmp``, en la carpeta de la calificación (``course.grading.scratch``,
donde apunte ``$TMPDIR``) o lo compartió el cigoto al nacer; si no, el núcleo se lanza
como siempre con su propio ``bwrap``. Cada núcleo ve esas dos carpetas tapadas por una
vacía: ni las copias del curso ni las demás entregas.
"""

import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import course
from course.grading import disk, sandbox, scratch, seccomp, zygote_main

SERVER = Path(zygote_main.__file__)
HIDDEN = Path(zygote_main.HIDDEN)  # lo que el núcleo no ve
HOST_TMP = Path("/tmp")  # lo ve el cigoto; a cada núcleo se lo tapa un tmpfs nuevo
SHORT = 70  # caracteres: la carpeta del socket del cigoto, si no, en /tmp

# El núcleo para jupyter_client: pide uno al cigoto, espera su código de salida y, si
# muere, el cigoto lo sabe porque se cierra la conexión.
STUB = """import socket, sys
connection = socket.socket(socket.AF_UNIX)
connection.connect(sys.argv[1])
request = sys.argv[2].encode() + b"\\n"
cgroup = [open(path, "wb", buffering=0) for path in sys.argv[3:]]
socket.send_fds(connection, [request[:1]], [file.fileno() for file in cgroup])
connection.sendall(request[1:])
answer = connection.makefile("rb").readline().strip()
sys.exit(int(answer) if answer else 1)
"""


class Zygote:
    """El cigoto de un proceso de calificación; :meth:`close` lo mata con sus núcleos."""

    def __init__(self, uid: int):
        self.uid = uid
        disk.shared_base()  # antes de nacer: así le llegan los discos de las entregas
        here = Path(tempfile.gettempdir())  # la carpeta de la calificación, si hay
        # Lo que el cigoto ve de fuera: /tmp y la carpeta de la calificación esté donde esté.
        own = here.name.startswith(scratch.PREFIX) and not here.is_relative_to(HOST_TMP)
        self.roots = {HOST_TMP, here} if own else {HOST_TMP}
        place = here if len(str(here)) < SHORT else HOST_TMP  # un socket admite 108 bytes
        # En /tmp, con el pid: si el proceso muere sin cerrarlo, lo borra scratch.sweep.
        prefix = "cigoto-" if place == here else f"{scratch.process_prefix()}cigoto-"
        self._folder = Path(tempfile.mkdtemp(prefix=prefix, dir=place))
        self.socket = self._folder / "s"
        shared = sandbox.shared_readable()
        self.shared = {
            outside: HIDDEN / "compartido" / str(number)
            for number, outside in enumerate(sorted(set(shared.values())))
            if not self._seen(outside)
        }
        # Puntos de montaje fuera de /tmp: el cigoto los crea al nacer; un núcleo no puede.
        self.points = {
            point
            for point in {Path(course.__file__).parent, *shared}
            if not point.is_relative_to(HOST_TMP)
        }
        listener = socket.socket(socket.AF_UNIX)
        # El cigoto lee la tubería; solo este proceso puede escribir en ella: si muere, aunque
        # sea antes de que bwrap atienda --die-with-parent, el cigoto lee EOF y sale.
        lifeline, self._lifeline = os.pipe()
        try:
            listener.bind(str(self.socket))
            listener.listen(64)
            self._process = subprocess.Popen(
                self._command(listener.fileno(), lifeline),
                pass_fds=[listener.fileno(), lifeline],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except BaseException:
            os.close(self._lifeline)
            shutil.rmtree(self._folder, ignore_errors=True)
            raise
        finally:
            listener.close()
            os.close(lifeline)

    def __deepcopy__(self, memo) -> "Zygote":
        """traitlets copia la caja de cada núcleo; el cigoto es uno por proceso."""
        return self

    def _seen(self, path: Path) -> bool:
        return any(path.is_relative_to(root) for root in self.roots)

    def _command(self, fd: int, lifeline: int) -> list[str]:
        """``bwrap`` del cigoto: el sistema, Python, ``/tmp`` de fuera, la carpeta de la
        calificación (de solo lectura) y lo compartido."""
        box = ["bwrap", *sandbox.system_mounts(), "--dev", "/dev", "--proc", "/proc"]
        box += ["--bind", str(HOST_TMP), str(HOST_TMP)]
        existing = {Path("/"), HOST_TMP}
        for root in sorted(self.roots - {HOST_TMP}):
            box += [*sandbox.parents(root, existing), "--ro-bind", str(root), str(root)]
            existing.add(root)
        for path in sandbox.python_folders():
            box += [*sandbox.parents(path, existing), "--ro-bind", str(path), str(path)]
        box += ["--dir", zygote_main.STAGE]
        box += ["--ro-bind", str(SERVER), str(HIDDEN / "servidor.py")]
        for outside, inside in self.shared.items():
            box += ["--ro-bind", str(outside), str(inside)]
        for point in sorted(self.points - existing):
            box += [*sandbox.parents(point, existing), "--dir", str(point)]
        box += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        box += ["--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv"]
        for name, value in sandbox.environment({}).items():
            box += ["--setenv", name, value]
        server = [sys.executable, "-I", str(HIDDEN / "servidor.py"), str(fd), str(lifeline)]
        return box + server

    def serves(self, box: sandbox.Box, kernel: list[str]) -> bool:
        """¿Puede nacer de aquí el núcleo de ``box``? Si no, se lanza con su ``bwrap``."""
        outsides = [box.package, box.runtime, *box.readable.values()]
        insides = [box.runtime, *box.readable]
        return (
            box.uid == self.uid
            and self._process.poll() is None
            and "ipykernel_launcher" in kernel
            and all(p in self.shared or self._seen(p) for p in outsides)
            and all(p in self.points or p.is_relative_to(HOST_TMP) for p in insides)
        )

    def command(self, box: sandbox.Box, kernel: list[str]) -> list[str]:
        """El proceso que ``jupyter_client`` lanza en lugar de ``bwrap``: :data:`STUB`."""
        mounts = [(Path(course.__file__).parent, box.package, False)]
        mounts += [(inside, outside, False) for inside, outside in box.readable.items()]
        # Python bajo /tmp (el entorno virtual de CI): el /tmp nuevo del núcleo lo taparía.
        mounts += [(p, p, False) for p in sandbox.python_folders() if p.is_relative_to(HOST_TMP)]
        mounts += [(box.runtime, box.runtime, True)]
        request = {
            "mounts": [(str(i), str(self.shared.get(o, o)), w) for i, o, w in mounts],
            "work": str(box.WORK),
            "limits": dataclasses.asdict(box.limits),
            "uid": box.uid,
            "seccomp": (seccomp.program() or b"").hex(),  # sin llaveros
            "scratch": str(box.disk.new_tmp()) if box.disk is not None else "",  # su /tmp
            "env": sandbox.environment(box.env),
            "arguments": kernel[kernel.index("ipykernel_launcher") + 1 :],
            "hide": [str(root) for root in sorted(self.roots - {HOST_TMP})],  # /tmp ya se tapa
        }
        # Los archivos cgroup.procs del cgroup de la entrega, si hay: el vigía entra en él.
        cgroup = [str(path) for path in box.group.procs] if box.group is not None else []
        command = [sys.executable, "-I", "-S", "-c", STUB, str(self.socket), json.dumps(request)]
        return command + cgroup

    def close(self) -> None:
        """Mata el cigoto; con ``bwrap`` muere todo su espacio de procesos (los núcleos)."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        os.close(self._lifeline)
        shutil.rmtree(self._folder, ignore_errors=True)
