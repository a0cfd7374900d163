"""El núcleo no usa los llaveros del kernel de Linux: ``add_key``, ``request_key`` y
``keyctl`` le devuelven ``EPERM`` (un filtro seccomp).

Los espacios de nombres de la caja no separan los llaveros: el llavero de usuario
(``@u``) es uno por uid y vive hasta que se apaga la máquina, y el de sesión se hereda
del calificador. Como root, los núcleos de un mismo proceso de ``grade`` comparten uid:
una clave que dejaba una entrega la leía la siguiente (también la de otra calificación
con el mismo uid, días después), y cada núcleo «poseía» las claves de la sesión de quien
califica. Python, torch y el curso no usan llaveros.

El filtro (:func:`program`) también niega toda llamada de otra arquitectura (``int
0x80`` de 32 bits, x32), donde los números no son estos. Lo instala, antes de que corra
nada del cuaderno, :data:`STUB` con bwrap (:func:`command`) o el cigoto
(``zygote_main.drop_privileges``). En una arquitectura que no es x86-64 ni AArch64 no
hay filtro y los llaveros quedan como sin él.
"""

import platform
import struct
import sys

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
KEY_CALLS = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}  # add_key, request_key, keyctl
X32 = 0x40000000  # bit de las llamadas x32 en x86-64
LOAD, JEQ, JGE, RETURN = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, …|JGE|K, BPF_RET|K
ALLOW, DENY = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM


def _instruction(code: int, k: int, jump_true: int = 0, jump_false: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jump_true, jump_false, k)


def program() -> bytes | None:
    """El filtro en BPF clásico (``struct sock_filter[]``); ``None`` si no hay para esta
    arquitectura."""
    machine = platform.machine()
    if machine not in AUDIT_ARCH:
        return None
    calls = KEY_CALLS[machine]
    deny_from = lambda index: len(calls) - index  # noqa: E731 (saltos hasta el DENY final)
    rules = [
        _instruction(LOAD, 4),  # seccomp_data.arch
        _instruction(JEQ, AUDIT_ARCH[machine], 1, 0),
        _instruction(RETURN, DENY),
        _instruction(LOAD, 0),  # seccomp_data.nr
        _instruction(JGE, X32, len(calls) + 1, 0),
        *(_instruction(JEQ, call, deny_from(i), 0) for i, call in enumerate(calls)),
        _instruction(RETURN, ALLOW),
        _instruction(RETURN, DENY),
    ]
    return b"".join(rules)


# Instala el filtro (argv[1], en hexadecimal) y pasa a ser el núcleo (argv[2:]).
STUB = """import ctypes, os, sys
program = bytes.fromhex(sys.argv[1])
class Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(Program(len(program) // 8, program)), 0, 0):
    sys.exit("seccomp: " + os.strerror(ctypes.get_errno()))
os.execvp(sys.argv[2], sys.argv[2:])
"""


def command(kernel: list[str]) -> list[str]:
    """``kernel`` precedido de :data:`STUB`, que instala el filtro y le cede el proceso."""
    filter_ = program()
    if filter_ is None:
        return kernel
    return [sys.executable, "-I", "-S", "-c", STUB, filter_.hex(), *kernel]
