"""Informe estático de integridad de una entrega: lo que las pruebas no pueden ver.

Una prueba que se ejecuta en el mismo núcleo que el código del estudiante puede ser
burlada por ese código (``checks.close = lambda *a, **k: None``, ``F.softmax = softmax``).
Por eso, además de calificar, se leen las celdas que escribió el estudiante (con ``ast``,
sin ejecutarlas, después de convertir ``!orden`` y ``%mágica`` como hace IPython) y se
anotan, en español, para que el profesor las revise. Es una red de seguridad, no la
defensa (esa es el aislamiento del núcleo al calificar):

- asignaciones (o ``setattr``/``delattr``/``__dict__``/``vars``) sobre atributos de
  ``torch``, ``numpy``, ``math``, ``builtins`` o ``course`` y de sus submódulos, con
  cualquier alias (``import numpy as np``, ``from os import system``, ``f = os.system``);
- nombres de esos módulos reasignados (``checks = ...``, ``import otro as F``): las
  pruebas ocultas usan los nombres de la celda de preparación;
- importaciones de ``course.reference`` (la solución de referencia);
- el núcleo de IPython (``get_ipython()`` y lo que cuelga de él: ``events``,
  ``run_cell``, ``ast_transformers``...), las órdenes ``!`` y las mágicas que no son de
  solo mirar (``%%bash``, ``%%writefile``; el código de ``%time`` se lee como una celda);
- código dinámico (``exec``, ``eval``, ``compile``, ``runpy``), importaciones de nombre
  calculado (``__import__(x)``, ``importlib.import_module(x)``), ``sys.modules`` y
  ``importlib.reload``; ``getattr`` con un nombre calculado sobre un módulo;
- introspección (``__code__``, ``__closure__``, ``__globals__``, ``__builtins__``,
  marcos con ``f_back``/``f_globals``, ``inspect.currentframe``, ``sys._getframe``) y
  el registro de operadores de torch (``torch.library``, ``torch._C``, ``torch.ops``);
- procesos y señales, escritura y borrado de archivos, bases de datos SQLite y red.

Con el cuaderno del laboratorio como ``original`` no se señala lo que este ya hace en
las celdas que el estudiante edita: en una celda calificada, la misma clase de cosa
(escribir el archivo que pide el ejercicio); en las demás, el mismo hallazgo exacto.
Cada hallazgo sale una vez por celda y el informe tiene un máximo de renglones.

No cambia ninguna nota: solo informa.
"""

import ast

import nbformat
from IPython.core.inputtransformer2 import TransformerManager

from course import notebooks

PROTECTED = ("torch", "numpy", "math", "builtins", "course")
REFERENCE = "course.reference"
SHOWN = 40  # renglones del informe por sección, como mucho
WIDTH = 60  # caracteres de código citados en un hallazgo, como mucho

# Clases de hallazgo; también el texto entre paréntesis que las nombra en el informe.
PATCH = "parche"
SOLUTION = "solución de referencia"
IPYTHON = "núcleo de IPython"
DYNAMIC = "código dinámico"
COMPUTED = "importación calculada"
LOOKUP = "acceso calculado"
MODULES = "módulos cargados"
INTROSPECTION = "introspección"
TORCH_OPS = "registro de operadores de torch"
BUILTINS = "funciones integradas"
PROCESSES = "procesos"
WRITES = "escritura de archivos"
DELETES = "borrado o cambio de archivos"
DATABASE = "base de datos"
NETWORK = "red"
UNREAD = "sin leer"


def _each(names: str, kind: str, prefix: str = "") -> dict[str, str]:
    return {prefix + name: kind for name in names.split()}


# Nombres que no hace falta importar.
BUILTIN_NAMES = {
    name: f"builtins.{name}" for name in "exec eval compile open globals __import__ getattr".split()
}
BUILTIN_NAMES |= {"__builtins__": "builtins", "get_ipython": "IPython.get_ipython"}
SHOW = {qualname: name for name, qualname in BUILTIN_NAMES.items()}
GET_IPYTHON = ("IPython.get_ipython", "IPython.core.getipython.get_ipython")
SHELL = "get_ipython()"  # el alias de un nombre que guarda el núcleo (`ip = get_ipython()`)
IMPORTERS = ("builtins.__import__", "importlib.import_module")

# Módulos y funciones que se señalan al importarlos, leerlos o llamarlos (con lo que
# cuelga de ellos): nombre completo -> clase de hallazgo.
WATCHED = {
    **dict.fromkeys(GET_IPYTHON, IPYTHON),
    **_each("builtins.exec builtins.eval builtins.compile runpy", DYNAMIC),
    **dict.fromkeys(IMPORTERS, COMPUTED),
    **_each("modules meta_path path_hooks path_importer_cache", MODULES, "sys."),
    **_each("reload invalidate_caches util machinery abc _bootstrap", MODULES, "importlib."),
    **_each("builtins.globals sys._getframe sys.settrace sys.setprofile", INTROSPECTION),
    **_each("currentframe stack trace getouterframes", INTROSPECTION, "inspect."),
    **_each("get_objects get_referrers get_referents", INTROSPECTION, "gc."),
    **_each("library _C ops.load_library ops.import_module overrides", TORCH_OPS, "torch."),
    **_each("utils._python_dispatch utils.cpp_extension", TORCH_OPS, "torch."),
    **_each("subprocess signal ctypes multiprocessing pty", PROCESSES),
    **_each("create_subprocess_exec create_subprocess_shell", PROCESSES, "asyncio."),
    **_each("concurrent.futures.ProcessPoolExecutor", PROCESSES),
    **_each("system popen fork forkpty kill killpg _exit abort", PROCESSES, "os."),
    **_each("posix_spawn posix_spawnp execl execle execlp execlpe", PROCESSES, "os."),
    **_each("execv execve execvp execvpe spawnl spawnle spawnlp", PROCESSES, "os."),
    **_each("spawnlpe spawnv spawnve spawnvp spawnvpe", PROCESSES, "os."),
    **_each("open truncate link symlink mkfifo", WRITES, "os."),
    **_each("remove unlink rename renames replace chmod chown rmdir removedirs", DELETES, "os."),
    **_each("copy copy2 copyfile copytree copymode copystat make_archive", WRITES, "shutil."),
    **_each("move rmtree chown unpack_archive", DELETES, "shutil."),
    **_each("sqlite3 sqlalchemy dbm shelve", DATABASE),
    **_each("socket urllib requests http.client httpx ftplib smtplib", NETWORK),
}
# Atributos que solo sirven para mirar (o cambiar) por dentro funciones, marcos y módulos.
INTROSPECTIVE = set(
    "__code__ __closure__ __globals__ __builtins__ __defaults__ __kwdefaults__ __subclasses__ "
    "f_back f_globals f_locals f_builtins tb_frame gi_frame cr_frame ag_frame".split()
)
# Métodos (de pathlib.Path, sobre todo) que escriben o cambian archivos.
WRITE_METHODS = _each("write_text write_bytes touch symlink_to hardlink_to", WRITES)
WRITE_METHODS |= _each("unlink rmdir chmod", DELETES)
VERBS = {WRITES: "escribe un archivo", DELETES: "borra o cambia un archivo"}
# Mágicas de IPython: las que solo miran y las que ejecutan su argumento como Python.
HARMLESS_MAGICS = {"matplotlib", "pinfo", "pinfo2", "pdoc", "pdef", "who", "whos", "xmode"}
CODE_MAGICS = {"time", "timeit", "prun", "capture"}


def student_cells(notebook: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """(número de celda desde 1, código) de las celdas de código que escribe el estudiante.

    Son las de solución y las que no son de nbgrader; las celdas bloqueadas y las de
    prueba se restauran al calificar y no cuentan.
    """
    cells = []
    for number, cell in enumerate(notebook.cells, start=1):
        if (
            cell.get("cell_type") != "code"
            or notebooks.is_locked(cell)
            or notebooks.is_graded(cell)
        ):
            continue
        cells.append((number, cell.get("source", "")))
    return cells


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _protected(module: str) -> bool:
    return module.split(".")[0] in PROTECTED


def _watched(qualname: str | None) -> str | None:
    """La clase de hallazgo de ``qualname`` o de un módulo que lo contiene."""
    parts = (qualname or "").split(".")
    for end in range(len(parts), 0, -1):
        kind = WATCHED.get(".".join(parts[:end]))
        if kind:
            return kind
    return None


def _text(node: ast.AST | str) -> str:
    """Código citado en un hallazgo, en una línea y recortado a ``WIDTH`` caracteres."""
    text = " ".join((node if isinstance(node, str) else ast.unparse(node)).split())
    return text if len(text) <= WIDTH else text[: WIDTH - 1] + "…"


def _string(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _magic_code(line: str) -> str:
    """El código de ``%timeit -n 3 f()``: sin las opciones del principio."""
    words = line.split()
    while words and words[0].startswith("-"):
        option = words.pop(0)
        if len(option) == 2 and words and words[0].isdigit():  # -n 3, -r 5
            words.pop(0)
    return " ".join(words)


class _Scanner(ast.NodeVisitor):
    def __init__(self, aliases: dict[str, str], setup: set[str] | None = None) -> None:
        self.aliases = aliases  # nombre local -> nombre completo ("F" -> "torch.nn.functional")
        self.setup = setup  # nombres de la celda de preparación (None: todos los alias)
        self.found: list[tuple[int, str, str]] = []  # (línea, clase, hallazgo)

    def _add(self, lineno: int, kind: str, what: str) -> None:
        self.found.append((lineno, kind, what))

    def _name(self, name: str) -> str | None:
        return self.aliases.get(name) or BUILTIN_NAMES.get(name)

    def _qualname(self, node: ast.AST) -> str | None:
        """El nombre completo al que se refiere ``node`` (``sp.run`` -> ``subprocess.run``)."""
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.Attribute):
            base = self._qualname(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call) and node.args:
            func, first = self._qualname(node.func), _string(node.args[0])
            if func == "importlib.import_module" and first:
                return first
            if func == "builtins.__import__" and first:
                return first.split(".")[0]
            name = _string(node.args[1]) if len(node.args) > 1 else None
            if func == "builtins.getattr" and name:
                base = self._qualname(node.args[0])
                return f"{base}.{name}" if base else None
        return None

    def _module_of(self, node: ast.AST) -> str | None:
        root = _root(node)
        module = self._name(root.id) if isinstance(root, ast.Name) else None
        return module if module and _protected(module) else None

    def _setup(self, name: str) -> bool:
        return _protected(self.aliases.get(name, "")) and (self.setup is None or name in self.setup)

    def _is_ipython(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id) == SHELL
        return isinstance(node, ast.Call) and self._qualname(node.func) in GET_IPYTHON

    def _reference(self, node: ast.AST, qualname: str, kind: str) -> None:
        shown, written = SHOW.get(qualname, qualname), _text(node)
        how = "" if written == shown else f" como {written}"
        self._add(node.lineno, kind, f"usa {shown}{how} ({kind})")

    def _import(self, name: str, lineno: int) -> None:
        if name == REFERENCE or name.startswith(REFERENCE + "."):
            self._add(lineno, SOLUTION, f"importa {name}")
        elif name.split(".")[0] == "builtins":
            self._add(lineno, BUILTINS, f"importa {name} ({BUILTINS})")
        elif name not in IMPORTERS and (kind := _watched(name)):
            self._add(lineno, kind, f"importa {name} ({kind})")

    def _bind(self, name: str, module: str, lineno: int) -> None:
        if self._setup(name) and not _protected(module):  # `import otro as checks`
            self._add(lineno, PATCH, f"reasigna {name} (era {self.aliases[name]})")
        self.aliases[name] = module

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._import(alias.name, node.lineno)
            self._bind(
                alias.asname or alias.name.split(".")[0],
                alias.name if alias.asname else alias.name.split(".")[0],
                node.lineno,
            )

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            full = f"{module}.{alias.name}"
            self._import(full, node.lineno)
            self._bind(alias.asname or alias.name, full, node.lineno)

    def _target(self, target: ast.AST, lineno: int) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self._target(element, lineno)
        elif isinstance(target, ast.Name) and self._setup(target.id):
            # `checks = ...`: las pruebas ocultas llamarían a lo que ponga el estudiante.
            self._add(lineno, PATCH, f"reasigna {target.id} (era {self.aliases[target.id]})")
        elif isinstance(target, ast.Attribute | ast.Subscript):
            module = self._module_of(target)
            if module:
                self._add(lineno, PATCH, f"modifica {_text(target)} (módulo {module})")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target, node.lineno)
        self.generic_visit(node)
        # `r = os.system`, `ip = get_ipython()`: otro nombre para lo mismo
        qualname = SHELL if self._is_ipython(node.value) else self._qualname(node.value)
        for target in node.targets:
            if isinstance(target, ast.Name) and not self._setup(target.id):
                if qualname:
                    self.aliases[target.id] = qualname
                else:
                    self.aliases.pop(target.id, None)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target, node.lineno)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._target(node.target, node.lineno)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._target(target, node.lineno)
        self.generic_visit(node)  # del sys.modules[...]

    def _ipython_call(self, node: ast.Call) -> bool:
        """``!orden`` y ``%mágica``, que IPython convierte en ``get_ipython().system(...)``
        y ``get_ipython().run_line_magic(...)``; False si la llamada no es de esas."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and self._is_ipython(func.value)):
            return False
        args = [_string(arg) for arg in node.args]
        if func.attr in ("system", "getoutput") and args and args[0] is not None:
            self._add(node.lineno, PROCESSES, f"ejecuta la orden del sistema !{_text(args[0])}")
        elif func.attr in ("run_line_magic", "run_cell_magic") and args and args[0] is not None:
            cell = func.attr == "run_cell_magic"
            if args[0] in CODE_MAGICS:  # %time f(): f() se ejecuta en el núcleo
                for offset, code in enumerate(args[1:]):
                    if code is not None:
                        # la línea de la mágica; el cuerpo de %%time, desde la siguiente
                        self._magic(code if offset else _magic_code(code), node.lineno + offset)
            elif args[0] not in HARMLESS_MAGICS:
                self._add(
                    node.lineno, IPYTHON, f"usa la orden mágica {'%%' if cell else '%'}{args[0]}"
                )
        else:
            return False
        return True

    def _magic(self, code: str, lineno: int) -> None:
        for line, kind, what in _scan(code, self.aliases, self.setup):
            self._add(lineno + line - 1, kind, what)

    def visit_Call(self, node: ast.Call) -> None:
        if self._ipython_call(node):
            return
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        target = self._qualname(func)
        if name in ("setattr", "delattr", "__setattr__", "__delattr__") and node.args:
            if self._module_of(node.args[0]):
                self._add(node.lineno, PATCH, f"{name} sobre {_text(node.args[0])}")
        elif name == "vars" and node.args:
            if self._module_of(node.args[0]) or self._qualname(node.args[0]):
                self._add(node.lineno, PATCH, f"usa vars({_text(node.args[0])})")
        if target in IMPORTERS and node.args and _string(node.args[0]):
            self._import(_string(node.args[0]), node.lineno)  # como un import escrito
            for arg in [*node.args[1:], *node.keywords]:
                self.visit(arg)
            return
        if target == "builtins.getattr" and len(node.args) > 1:
            module = self._qualname(node.args[0])
            if module and not isinstance(node.args[1], ast.Constant):
                self._add(
                    node.lineno,
                    LOOKUP,
                    f"getattr sobre {_text(node.args[0])} con un nombre calculado "
                    f"({_text(node.args[1])})",
                )
            elif kind := _watched(self._qualname(node)):  # getattr(os, "system")
                self._reference(node, self._qualname(node), kind)
        if _watched(target) is None:
            self._writes(node, target)
        self.generic_visit(node)

    def _writes(self, node: ast.Call, target: str | None) -> None:
        """``open(..., "w")``, ``Path.open("a")``, ``p.write_text(...)``, ``p.unlink()``."""
        func = node.func
        method = isinstance(func, ast.Attribute) and not (target or "").startswith("builtins.")
        if target == "builtins.open" or (method and func.attr == "open"):
            position = 0 if method and target is None else 1  # Path(...).open(mode), open(f, mode)
            modes = [k.value for k in node.keywords if k.arg == "mode"]
            mode = [*modes, *node.args[position : position + 1], ast.Constant("r")][0]
            call = f"{_text(func)}(…, {_text(mode)})"
            if not isinstance(mode, ast.Constant):
                self._add(
                    node.lineno, WRITES, f"abre un archivo con un modo calculado: {call} ({WRITES})"
                )
            elif isinstance(mode.value, str) and set(mode.value) & set("wax+"):
                self._add(node.lineno, WRITES, f"abre un archivo para escribir: {call} ({WRITES})")
        elif method and func.attr in WRITE_METHODS:
            kind = WRITE_METHODS[func.attr]
            self._add(node.lineno, kind, f"{VERBS[kind]} con {_text(func)} ({kind})")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "__dict__" and (self._module_of(node) or self._qualname(node.value)):
            self._add(node.lineno, PATCH, f"usa {_text(node)}")
        if self._is_ipython(node.value):  # get_ipython().events, .run_cell...
            self._add(node.lineno, IPYTHON, f"usa get_ipython().{node.attr} ({IPYTHON})")
            return
        if node.attr in INTROSPECTIVE:
            self._add(node.lineno, INTROSPECTION, f"usa {_text(node)} ({INTROSPECTION})")
        qualname = self._qualname(node)
        kind = _watched(qualname)
        if kind:
            self._reference(node, qualname, kind)
        else:
            self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            return
        if node.id == "__builtins__":
            self._add(node.lineno, INTROSPECTION, f"usa __builtins__ ({INTROSPECTION})")
        qualname = self._qualname(node)
        kind = _watched(qualname)
        if kind:
            self._reference(node, qualname, kind)


def _scan(code: str, aliases: dict[str, str], setup: set[str] | None) -> list[tuple[int, str, str]]:
    """(línea, clase, hallazgo) de un fragmento de código, ordenados y sin repetir."""
    scanner = _Scanner(aliases, setup)
    try:
        scanner.visit(ast.parse(TransformerManager().transform_cell(code)))
    except SyntaxError:  # tampoco se ejecutaría
        return []
    except (RecursionError, MemoryError):  # `a + a + ... + a` miles de veces: se ejecuta igual
        scanner.found.append((1, UNREAD, "no se pudo leer entera: código demasiado anidado"))
    return sorted(set(scanner.found))


def scan_code(
    code: str, aliases: dict[str, str] | None = None, setup: set[str] | None = None
) -> list[tuple[int, str]]:
    """(línea, hallazgo) de un fragmento de código; ``aliases`` se actualiza con sus imports.

    ``setup``: los nombres que define la celda de preparación; solo se señala reasignar
    esos (``checks = ...``). Sin él, cualquier alias de un módulo protegido.
    """
    aliases = {} if aliases is None else aliases
    return sorted({(line, what) for line, _, what in _scan(code, aliases, setup)})


def setup_aliases(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """Los nombres que importan las celdas bloqueadas (``F``, ``checks``, ``os``...)."""
    aliases: dict[str, str] = {}
    for cell in notebook.cells:
        if cell.get("cell_type") == "code" and notebooks.is_locked(cell):
            _scan(cell.get("source", ""), aliases, None)
    return aliases


def _key(grade_id: str, kind: str, what: str) -> tuple[str, str]:
    """Cómo se compara un hallazgo con lo que hace el laboratorio: en una celda calificada,
    por su clase (el ejercicio puede pedir escribir un archivo); en las demás, exacto."""
    return (grade_id, kind) if grade_id else ("", what)


def _allowed(original: nbformat.NotebookNode) -> set[tuple[str, str]]:
    """Los hallazgos del propio laboratorio en las celdas que el estudiante puede editar."""
    aliases = setup_aliases(original)
    setup = set(aliases)
    allowed = set()
    for number, code in student_cells(original):
        grade_id = notebooks.grade_id(original.cells[number - 1]) or ""
        allowed |= {_key(grade_id, kind, what) for _, kind, what in _scan(code, aliases, setup)}
    return allowed


def _capped(lines: list[str], more: str) -> list[str]:
    if len(lines) <= SHOWN:
        return lines
    return [*lines[:SHOWN], f"… y {len(lines) - SHOWN} {more}, que no se muestran"]


def scan(
    notebook: nbformat.NotebookNode,
    expected_ids: set[str] | None = None,
    original: nbformat.NotebookNode | None = None,
) -> list[str]:
    """Hallazgos en español, uno por renglón; lista vacía si no hay nada que revisar.

    ``original`` (el cuaderno del laboratorio) aporta los alias de su celda de preparación,
    que se restaura al calificar aunque el estudiante la haya borrado, y lo que el propio
    laboratorio hace en las celdas editables, que no se señala.
    """
    findings = []
    aliases = setup_aliases(original) if original is not None else {}
    aliases.update(setup_aliases(notebook))
    setup = set(aliases)
    allowed = _allowed(original) if original is not None else set()
    for number, code in student_cells(notebook):
        grade_id = notebooks.grade_id(notebook.cells[number - 1]) or ""
        lines: dict[str, list[int]] = {}  # hallazgo -> líneas de la celda donde aparece
        for line, kind, what in _scan(code, aliases, setup):
            if _key(grade_id, kind, what) not in allowed:
                lines.setdefault(what, []).append(line)
        for what, where in sorted(lines.items(), key=lambda item: item[1][0]):
            extra = len(where) - 1
            more = f" (y en {extra} línea{'s' if extra > 1 else ''} más)" if extra else ""
            findings.append(f"celda {number}, línea {where[0]}: {what}{more}")
    findings = _capped(findings, "hallazgos más en el código")
    seen: set[str] = set()
    ids = []
    for cell in notebook.cells:
        grade_id = notebooks.grade_id(cell)
        if grade_id and grade_id in seen:
            ids.append(f"grade id duplicado «{grade_id}»: se califica solo la primera celda")
        elif grade_id and expected_ids is not None and grade_id not in expected_ids:
            ids.append(f"grade id desconocido «{grade_id}»: se ejecuta como celda normal")
        seen.add(grade_id)
    findings += _capped(list(dict.fromkeys(ids)), "avisos más de grade ids")
    exercises = {i for i in expected_ids or () if notebooks.is_exercise(i)}
    if expected_ids is not None and seen.isdisjoint(exercises):
        findings.append(
            "ninguna celda calificada de este laboratorio: ¿cuaderno de otro laboratorio?"
        )
    return findings
