"""El cigoto: un proceso que ya importó torch y del que nace, con ``fork``, cada núcleo.

Corre dentro de su propio ``bwrap`` (lo lanza :mod:`course.grading.zygote`) con la
biblioteca estándar y nada del paquete ``course``: se ejecuta como un archivo suelto. No
ejecuta nunca código de un estudiante. Por cada conexión a su socket crea tres procesos:

- un **vigía** (hijo del cigoto) que entra en espacios de nombres nuevos (montajes,
  procesos, red, IPC, nombre de máquina) y construye la vista del núcleo: un ``/tmp``
  vacío y limitado, ``/dev/shm`` (cerrado, como con bwrap) y terminales (``/dev/pts``)
  propios y, de solo lectura salvo la carpeta de sockets, solo lo que pide la petición;
  todo lo demás del cigoto queda tapado. Vive lo que vive la conexión: si quien conectó
  muere, mata el espacio de procesos entero;
- el **init** de ese espacio de procesos, que monta su ``/proc`` y recoge huérfanos;
- el **núcleo**, con su sesión, sus límites (``setrlimit``), sin capacidades, con
  ``no_new_privs`` y el usuario sin privilegios de la petición; después arranca ipykernel
  en ese mismo proceso, con torch ya en memoria.

Cada núcleo es una copia nueva del cigoto, que nadie ha tocado: lo que haga un núcleo no
llega ni al cigoto ni a sus hermanos.
"""

import ctypes
import json
import os
import resource
import select
import signal
import socket
import sys

PRELOAD = ("torch", "numpy", "matplotlib.pyplot", "ipykernel.kernelapp", "ipykernel.debugger")
HIDDEN = "/run/cigoto"  # lo del cigoto que el núcleo no ve (este archivo, las fuentes)
STAGE = "/run/etapa"  # montajes de paso mientras se construye la vista

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
OOM_KERNEL = 1000  # oom_score_adj del núcleo (course.grading.cgroups.OOM_KERNEL)
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 24, 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2

libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _mount(source, target, fstype, flags, data=None) -> None:
    encode = lambda value: None if value is None else value.encode()  # noqa: E731
    result = libc.mount(encode(source), encode(target), encode(fstype), flags, encode(data))
    _check(result, f"mount {target}")


def _bind(source: str, target: str, writable: bool = False) -> None:
    _mount(source, target, None, MS_BIND)
    flags = MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | (0 if writable else MS_RDONLY)
    _mount(None, target, None, flags)


def _point(path: str, like: str, mode: int) -> None:
    """Crea ``path`` (y sus carpetas) como punto de montaje del mismo tipo que ``like``.

    Solo dentro de un ``tmpfs`` nuevo de este núcleo: fuera, el cigoto y los hermanos la
    verían.
    """
    if os.path.lexists(path):
        return
    if not path.startswith(("/tmp/", STAGE + "/")):
        raise FileNotFoundError(f"falta el punto de montaje {path}")
    _point(os.path.dirname(path), "/", mode)
    if os.path.isdir(like):
        os.mkdir(path, mode)
        os.chmod(path, mode)
    else:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o444))


def build_view(request: dict) -> None:
    """Con un espacio de montajes propio, la vista del núcleo (ver el docstring del módulo).

    Primero se montan las fuentes en :data:`STAGE`; después tapa ``/tmp`` (y con él las
    carpetas del calificador) el ``/tmp`` de este arranque en el disco de la entrega
    (``course.grading.disk``, como root) o un ``tmpfs`` nuevo, y cada fuente pasa a su
    sitio. Solo se crean carpetas dentro de ese ``/tmp`` o de ``tmpfs`` nuevos: el cigoto
    y los hermanos no ven ninguna. Al final, un ``tmpfs`` vacío tapa lo del cigoto y cada
    carpeta de ``hide`` (la de la calificación, si ``$TMPDIR`` no está en ``/tmp``).
    """
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", STAGE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700")
    mounts = request["mounts"]
    for number, (_inside, outside, _writable) in enumerate(mounts):
        stage = f"{STAGE}/{number}"
        _point(stage, outside, 0o700)
        _mount(outside, stage, None, MS_BIND)
    tmpfs = MS_NOSUID | MS_NODEV
    scratch = request["scratch"]  # el /tmp de este arranque en el disco de la entrega, si hay
    if scratch:
        if not os.path.ismount(os.path.dirname(scratch)):  # sin él, escribiría en el disco
            raise OSError(f"el disco {os.path.dirname(scratch)} no llegó al cigoto")
        _bind(scratch, "/tmp", writable=True)
    else:
        _mount("tmpfs", "/tmp", "tmpfs", tmpfs, f"mode=1777,size={request['limits']['scratch']}")
    _mount("tmpfs", "/dev/shm", "tmpfs", tmpfs | MS_RDONLY, "mode=0755")  # como en bwrap
    _mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666")
    work = request["work"]
    os.mkdir(work, 0o777)
    os.chmod(work, 0o777)
    for number, (inside, _outside, writable) in enumerate(mounts):
        stage = f"{STAGE}/{number}"
        inner = 0o777 if inside.startswith(work + "/") else 0o755
        _point(inside, stage, inner)
        _bind(stage, inside, writable)
    _check(libc.umount2(STAGE.encode(), MNT_DETACH), "umount etapa")
    for hidden in (HIDDEN, *request["hide"]):  # la carpeta de la calificación, fuera de /tmp
        _mount("tmpfs", hidden, "tmpfs", MS_NOSUID | MS_NODEV | MS_RDONLY, "mode=0755")


class _Program(ctypes.Structure):  # struct sock_fprog
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def install_filter(program: bytes) -> None:
    """El filtro seccomp de ``course.grading.seccomp`` (sin llaveros), si lo hay."""
    if program:
        fprog = ctypes.byref(_Program(len(program) // 8, program))
        _check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, fprog, 0, 0), "seccomp")


def drop_privileges(request: dict) -> None:
    """Límites, sin capacidades, sin llaveros (seccomp) y el usuario sin privilegios de la
    petición (sin vuelta)."""
    limits = request["limits"]
    for limit, value in (
        (resource.RLIMIT_AS, limits["memory"]),
        (resource.RLIMIT_NPROC, limits["processes"]),
        (resource.RLIMIT_FSIZE, limits["file_size"]),
        (resource.RLIMIT_CORE, 0),
    ):
        resource.setrlimit(limit, (value, value))
    _check(libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "ambient")
    last = int(open("/proc/sys/kernel/cap_last_cap").read())
    for capability in range(last + 1):
        _check(libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0), "capbset")
    uid = request["uid"]
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    install_filter(bytes.fromhex(request["seccomp"]))
    status = open("/proc/self/status").read()
    if any(line.split()[1].strip("0") for line in status.splitlines() if line[:3] == "Cap"):
        raise PermissionError("el núcleo conserva capacidades")


def run_kernel(request: dict) -> None:
    """Este proceso pasa a ser el núcleo: sesión, límites, entorno e ipykernel."""
    os.setsid()
    _check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
    drop_privileges(request)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["work"])
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()
    sys.path[0] = request["work"]
    sys.argv = ["ipykernel_launcher", *request["arguments"]]
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


def init(request: dict) -> None:
    """El proceso 1 del espacio de procesos de la entrega: ``/proc``, el núcleo, huérfanos."""
    _check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    with open("/proc/self/oom_score_adj", "w") as adjust:  # lo primero que mata el sistema
        adjust.write(str(OOM_KERNEL))
    kernel = os.fork()
    if kernel == 0:
        try:
            run_kernel(request)
        finally:
            os._exit(1)
    while True:
        pid, status = os.wait()
        if pid == kernel:
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def watch(connection: socket.socket) -> None:
    """El vigía de una entrega: espacios nuevos, vista, init; vive lo que la conexión."""
    first, cgroup, _, _ = socket.recv_fds(connection, 1, 8)
    request = json.loads(first + connection.makefile("rb").readline())
    for fd in cgroup:  # los cgroup.procs de la entrega, abiertos por quien conectó
        os.write(fd, b"0")  # «0»: este proceso; sus hijos nacen dentro
        os.close(fd)
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUTS
    _check(libc.unshare(flags), "unshare")
    build_view(request)
    child = os.fork()
    if child == 0:
        try:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.closerange(3, os.sysconf("SC_OPEN_MAX"))
            init(request)
        finally:
            os._exit(1)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    while True:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            connection.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
            return
        ready, _, _ = select.select([connection, wake_read], [], [])
        if wake_read in ready:
            os.read(wake_read, 512)
        if connection in ready and not connection.recv(1):
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            return


def serve(listener: socket.socket, lifeline: int) -> None:
    """Acepta conexiones hasta que se cierra ``lifeline`` (murió el proceso de calificación);
    cada una, un vigía propio (el cigoto no cambia)."""
    while True:
        ready, _, _ = select.select([listener, lifeline], [], [])
        if lifeline in ready:  # EOF: nadie más pedirá núcleos; bwrap se lleva a los vivos
            os._exit(0)
        connection, _ = listener.accept()
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if os.fork() == 0:
            code = 1
            try:
                listener.close()
                watch(connection)
                code = 0
            finally:
                os._exit(code)
        connection.close()


def main() -> None:
    listener = socket.socket(fileno=int(sys.argv[1]))
    lifeline = int(sys.argv[2])
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 (el núcleo lo importará, o fallará, como sin cigoto)
            pass
    if len(os.listdir("/proc/self/task")) != 1:
        raise SystemExit("el cigoto tiene más de un hilo: fork no sería seguro")
    serve(listener, lifeline)


if __name__ == "__main__":
    main()
