"""El núcleo del estudiante, encerrado con bubblewrap.

Cada entrega se ejecuta en un núcleo de Jupyter lanzado dentro de ``bwrap``:

- el núcleo ve solo lo que se le monta, de solo lectura: el sistema (``/usr``, ``/etc``…),
  Python y su entorno virtual, una copia del paquete ``course`` sin los módulos de
  referencia del laboratorio calificado ni de los siguientes, y los datos; ``/tmp`` es un
  ``tmpfs`` privado y limitado donde está su carpeta de trabajo;
- nada más de la máquina existe para él: ni el repositorio del curso (``source/``,
  ``submitted/``, ``autograded/``, ``gradebook.db``), ni otras copias del curso, ni la
  caché de calificación, ``$HOME`` o el ``/tmp`` de fuera;
- sin red (espacio de red propio); el núcleo habla con el calificador por sockets IPC de
  ZMQ en una carpeta privada;
- límites de memoria (``RLIMIT_AS``), procesos, tamaño de archivo y, desde el
  calificador, tiempo; como ``root``, el núcleo corre además con un usuario sin
  privilegios y con todos sus procesos en un cgroup (memoria sin swap, procesos y CPU
  para todos juntos: ``course.grading.cgroups``);
- al terminar se mata ``bwrap`` y con él todo el espacio de procesos de la entrega,
  también los procesos que se separaron con ``start_new_session``.
"""

import ast
import functools
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Any

import course
from course import labs, notebooks
from course.grading import seccomp

GIB = 2**30
# Lo único de la raíz de la máquina que ve el núcleo (además de Python, si vive fuera).
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys")
INHERITED = (
    "PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "VIRTUAL_ENV", "NBGRADER_EXECUTION",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONDONTWRITEBYTECODE",
)  # fmt: skip


@dataclass(frozen=True)
class Limits:
    memory: int = 4 * GIB  # bytes de memoria virtual por proceso (RLIMIT_AS)
    processes: int = 256  # hilos y procesos del usuario del núcleo (RLIMIT_NPROC)
    file_size: int = 1 * GIB  # bytes por archivo escrito (RLIMIT_FSIZE)
    scratch: int = 1 * GIB  # bytes del tmpfs del núcleo (su /tmp y, con root, sus sockets)


@functools.cache
def available() -> str:
    """``""`` si bubblewrap funciona aquí; si no, el motivo en español."""
    if shutil.which("bwrap") is None:
        return "no está instalado bubblewrap (bwrap); instálalo con «apt-get install bubblewrap»"
    try:
        probe = subprocess.run(
            ["bwrap", "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
            capture_output=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap no arranca ({error})"
    if probe.returncode != 0:
        reason = probe.stderr.decode(errors="replace").strip().splitlines()
        return f"bubblewrap no puede crear el aislamiento ({(reason or ['?'])[-1]})"
    return ""


RISK = (
    "sin aislamiento, el código de cada cuaderno se ejecuta con tus permisos: puede leer las"
    " soluciones y las pruebas ocultas, cambiar notas de otros estudiantes, usar la red y"
    " dejar procesos vivos"
)


def course_copy(lab: labs.Lab, target: Path) -> Path:
    """Copia de ``course`` con lo que el núcleo que califica ``lab`` puede ver
    (:func:`course.labs.in_kernel`): sin las respuestas de ``lab`` ni de los siguientes,
    sin los catálogos de errores típicos y, del calificador, solo el agente.

    Las funciones del paquete que resuelven un ejercicio de ``lab`` o de uno siguiente
    (las que se llaman como él y :data:`course.labs.ANSWERS`) llegan sin su código
    (:func:`without_answers`).
    """
    package = Path(course.__file__).parent
    fingerprints = sorted((package / "mistakes" / "fingerprints").glob("*.json"))
    for path in sorted(package.rglob("*.py")) + fingerprints:
        inside = path.relative_to(package).as_posix()
        if not labs.in_kernel(inside, lab.id):
            continue
        destination = target / inside
        destination.parent.mkdir(parents=True, exist_ok=True)
        if inside == "grading/__init__.py":
            destination.write_text('"""Solo el agente del núcleo."""\n')
        elif path.suffix == ".py":
            text = without_answers(path.read_text(encoding="utf-8"), inside, lab.id)
            destination.write_text(text, encoding="utf-8")
        else:
            shutil.copyfile(path, destination)
    return target


STUB = (
    "def {name}(*args, **kwargs):\n"
    '    """Al calificar, esta función no está: resuelve un ejercicio del curso."""\n'
    "    raise NotImplementedError(\n"
    '        "course: {name} no está disponible al calificar (es un ejercicio); usa tu función"\n'
    "    )\n"
)


@functools.cache
def exercise_names(lab_ids: tuple[str, ...]) -> frozenset[str]:
    """Funciones y clases que definen las celdas de solución de esos laboratorios.

    Del cuaderno fuente o, en el paquete del estudiante, del publicado (que conserva
    la línea ``def`` de cada ejercicio).
    """
    names = set()
    for lab_id in lab_ids:
        lab = labs.LABS[lab_id]
        path = lab.source if lab.source.exists() else lab.release
        if not path.exists():
            continue
        for cell in notebooks.read(path).cells:
            if cell.cell_type != "code" or not notebooks.is_solution(cell):
                continue
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:
                continue
            names |= {
                node.name
                for node in tree.body
                if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
            }
    return frozenset(names)


@functools.lru_cache(maxsize=1024)
def without_answers(source: str, inside: str, lab_id: str) -> str:
    """``source``, el módulo ``course/<inside>``, sin el código de lo que resuelve un
    ejercicio de ``lab_id`` o de un laboratorio siguiente (lo que se llama como un ejercicio
    y :data:`course.labs.ANSWERS`). Lo usan la copia del núcleo y el zip de estudiantes;
    se guarda, porque cada entrega del mismo laboratorio pide lo mismo."""
    names = exercise_names(tuple(labs.from_here(lab_id))) | set(labs.ANSWERS.get(inside, ()))
    return _without_answers(source, names)


def _without_answers(source: str, names: set[str]) -> str:
    """``source`` con cada función o clase de nivel superior de ``names`` cambiada por
    :data:`STUB`, que lanza ``NotImplementedError``: su código no llega al núcleo."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    for node in reversed(tree.body):
        if isinstance(node, kinds) and node.name in names:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            lines[start : node.end_lineno] = [STUB.format(name=node.name)]
    return "".join(lines)


@dataclass
class Box:
    """Lo que necesita un núcleo aislado: carpetas, límites y lo que se oculta."""

    lab: labs.Lab
    runtime: Path  # carpeta privada con el archivo de conexión y los sockets IPC
    package: Path  # copia de ``course`` que verá el núcleo (``course_copy``)
    limits: Limits = field(default_factory=Limits)
    readable: dict[Path, Path] = field(default_factory=dict)  # dentro -> fuera, solo lectura
    uid: int | None = None  # con root, el usuario sin privilegios del núcleo
    env: dict[str, str] = field(default_factory=dict)  # variables extra del núcleo
    zygote: object | None = None  # el cigoto del que nace el núcleo (course.grading.zygote), si hay
    group: object | None = None  # su cgroup (course.grading.cgroups.Group), si hay
    disk: object | None = None  # con root, su tmpfs con tope (course.grading.disk.Disk)

    WORK = Path("/tmp/trabajo")  # carpeta de trabajo del núcleo, dentro del tmpfs

    def command(self, kernel: list[str]) -> list[str]:
        """``kernel`` envuelto en prlimit + bwrap (+ setpriv si somos root)."""
        limits = self.limits
        nproc = limits.processes if self.uid is not None else _user_tasks() + limits.processes
        prefix = [
            "prlimit",
            f"--as={limits.memory}",
            f"--nproc={nproc}",
            f"--fsize={limits.file_size}",
            "--core=0",
        ]
        box = ["bwrap", *system_mounts(), "--dev", "/dev", "--proc", "/proc"]
        if self.disk is None:
            box += ["--perms", "1777", "--size", str(limits.scratch), "--tmpfs", "/tmp"]
        else:  # el /tmp nuevo de este arranque, en el disco de la entrega
            box += ["--bind", str(self.disk.new_tmp()), "/tmp"]
        box += ["--perms", "0777", "--dir", str(self.WORK)]
        mounts = [(path, path) for path in python_folders()]
        mounts += [(Path(course.__file__).parent, self.package), *self.readable.items()]
        mounts += [(self.runtime, self.runtime)]
        existing = {Path("/"), Path("/tmp"), self.WORK}  # carpetas que ya hay dentro
        for inside, outside in mounts:
            box += parents(inside, existing)
            box += ["--bind" if inside == self.runtime else "--ro-bind", str(outside), str(inside)]
        box += ["--chdir", str(self.WORK)]
        box += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        box += ["--unshare-cgroup-try", "--die-with-parent", "--new-session"]
        if self.uid is None:
            box += ["--unshare-user"]
        box += ["--clearenv"]
        for name, value in environment(self.env).items():
            box += ["--setenv", name, value]
        if self.uid is not None:
            box += ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups"]
            box += ["--inh-caps=-all", "--bounding-set=-all", "--"]
        command = prefix + box + seccomp.command(kernel)  # sin llaveros (course.grading.seccomp)
        return self.group.wrap(command) if self.group is not None else command


def environment(extra: dict[str, str]) -> dict[str, str]:
    """Solo lo que el núcleo necesita del entorno, más ``extra``: nada de secretos del
    calificador."""
    # Un hilo por núcleo: con varias entregas a la vez, más hilos solo se estorban.
    threads = {
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    kept = {name: os.environ[name] for name in INHERITED if name in os.environ}
    return threads | kept | {"HOME": str(Box.WORK), "MPLBACKEND": "agg"} | extra


def python_folders() -> list[Path]:
    """Python y su entorno virtual, si no están ya en el sistema (pyenv, un venv en /tmp…)."""
    found = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent}
    outside = {p.resolve() for p in found if not _in_system(p.resolve())}
    return sorted(p for p in outside if not any(p != q and p.is_relative_to(q) for q in outside))


def system_mounts() -> list[str]:
    """Las carpetas de :data:`SYSTEM` que hay aquí, de solo lectura; los enlaces, como enlaces."""
    args = []
    for name in SYSTEM:
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            args += ["--ro-bind", name, name]
    return args


def _in_system(path: Path) -> bool:
    return any(path.is_relative_to(Path(name).resolve()) for name in SYSTEM)


def parents(path: Path, existing: set[Path]) -> list[str]:
    """Crea, con permisos de paso, las carpetas intermedias de ``path`` que no hay dentro.

    bwrap las crearía con permisos 0700 de root, y el núcleo no podría atravesarlas.
    ``existing`` (las que ya hay) se amplía con las creadas.
    """
    args = []
    for parent in reversed(path.parents):
        if parent in existing or _in_system(parent):
            continue
        existing.add(parent)
        args += ["--perms", "0777" if parent.is_relative_to(Box.WORK) else "0755"]
        args += ["--dir", str(parent)]
    return args


def _user_tasks() -> int:
    """Hilos y procesos de este usuario ahora (RLIMIT_NPROC los cuenta todos)."""
    uid = os.getuid()
    count = 0
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and entry.stat().st_uid == uid:
                count += len(os.listdir(entry / "task"))
        except OSError:
            continue
    return count


SANDBOX_UID = 200_000  # como root, el núcleo corre con un uid sin privilegios desde aquí


def kernel_uid() -> int | None:
    """Con root, el usuario sin privilegios de los núcleos de este proceso; si no, ``None``."""
    return SANDBOX_UID + os.getpid() % 100_000 if os.geteuid() == 0 else None


def grading_box(lab: labs.Lab, tmp: Path, runtime: Path, limits: Limits | None = None) -> Box:
    """La caja de un núcleo que califica ``lab``: su copia del paquete, los tokenizadores
    y los datos de la caché, y el usuario sin privilegios si somos root."""
    uid = kernel_uid()
    if uid is not None:
        os.chown(runtime, uid, uid)
    box = Box(
        lab=lab,
        runtime=runtime,
        package=course_copy(lab, tmp / "course"),
        limits=limits or Limits(),
        uid=uid,
    )
    box.readable.update(shared_readable())
    data = _multi30k()
    if data is not None:
        box.env["MULTI30K_DIR"] = str(data)
    return box


def shared_readable() -> dict[Path, Path]:
    """Lo que ve de solo lectura todo núcleo, sea cual sea la entrega: dentro -> fuera.

    Los tokenizadores de la caché (reentrenar el BPE costaría segundos en cada entrega) y
    los datos de Multi30k, en su misma ruta.
    """
    readable = {
        Box.WORK / ".cache" / "transformer-es" / "tokenizers" / path.name: path
        for path in _tokenizers()
    }
    data = _multi30k()
    if data is not None:
        readable[data] = data
    return readable


def socket_parent() -> str | None:
    """Una carpeta de ruta corta para los sockets IPC (un socket admite 108 bytes de ruta)."""
    return "/tmp" if os.access("/tmp", os.W_OK) else None


def _tokenizers() -> list[Path]:
    """Los tokenizadores ya entrenados de la caché: el núcleo los lee y no los reentrena."""
    folder = labs.cache_root() / "tokenizers"
    return sorted(p for p in folder.glob("*.json") if p.is_file() and not p.is_symlink())


def _multi30k() -> Path | None:
    """La carpeta de Multi30k ya verificada que verá el núcleo, si la hay (sin descargar)."""
    from course.translation.data import sources

    try:
        return sources.locate(allow_download=False).resolve()
    except sources.DataError:
        return None


class SandboxedKernelManager(AsyncKernelManager):
    """Gestor de núcleos que lanza el núcleo dentro de :class:`Box` y con sockets IPC.

    Solo usa métodos públicos de jupyter_client: ``start_kernel`` (sus argumentos llegan a
    ``Popen`` y se repiten en cada reinicio), ``write_connection_file`` (el proveedor local
    lo llama en cada arranque) y ``format_kernel_cmd``. ``tests/test_extension_points.py``
    falla si una versión nueva deja de llamarlos así.
    """

    box = Any(None, help="el Box de esta entrega").tag(config=True)

    async def start_kernel(self, **kw) -> None:
        """Lo que el núcleo escriba por su cuenta no llega a la terminal del instructor."""
        kw.setdefault("stdout", subprocess.DEVNULL)
        kw.setdefault("stderr", subprocess.DEVNULL)
        await super().start_kernel(**kw)

    def write_connection_file(self, **kwargs) -> None:
        """Cada arranque, un archivo de conexión nuevo con un nombre que nadie conoce.

        El núcleo anterior pudo cambiar el suyo o dejar en su lugar un enlace simbólico a
        un archivo del calificador (``chown`` lo seguiría y jupyter_client lo reutilizaría
        al reiniciar); ``cleanup_connection_file`` quita el enlace, no lo que señala.
        """
        self.cleanup_connection_file()
        if self.box.disk is not None:  # lo del núcleo anterior fuera (course.grading.disk)
            self.box.disk.reset()
        if self.connection_file:  # sin nombre, jupyter_client elige uno al azar
            name = f"conexion-{uuid.uuid4().hex}.json"
            self.connection_file = str(Path(self.connection_file).with_name(name))
        super().write_connection_file(**kwargs)

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        kernel = super().format_kernel_cmd(extra_arguments)
        # Una señal a bwrap lo mataría: la interrupción viaja como mensaje de control.
        self.kernel_spec.interrupt_mode = "message"
        if self.box.uid is not None:
            os.chown(self.connection_file, self.box.uid, self.box.uid, follow_symlinks=False)
        if self.box.zygote is not None and self.box.zygote.serves(self.box, kernel):
            return self.box.zygote.command(self.box, kernel)
        return self.box.command(kernel)
