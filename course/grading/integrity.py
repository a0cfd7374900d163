"""Informe estático de integridad de una entrega: lo que las pruebas no pueden ver.

Una prueba que se ejecuta en el mismo núcleo que el código del estudiante puede ser
burlada por ese código (``checks.close = lambda *a, **k: None``, ``F.softmax = softmax``).
Por eso, además de calificar, se leen las celdas que escribió el estudiante (con ``ast``,
sin ejecutarlas) y se anotan, en español, para que el profesor las revise:

- asignaciones (o ``setattr``/``delattr``/``__dict__``/``vars``) sobre atributos de
  ``torch``, ``numpy`` o ``course`` y de sus submódulos, con cualquier alias;
- nombres de esos módulos reasignados (``checks = ...``, ``import otro as F``): las
  pruebas ocultas usan los nombres de la celda de preparación;
- importaciones de ``course.reference`` (la solución de referencia);
- grade ids duplicados y celdas calificadas que faltan o son de otro laboratorio.

No cambia ninguna nota: solo informa.
"""

import ast

import nbformat

PROTECTED = ("torch", "numpy", "course")
REFERENCE = "course.reference"


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def student_cells(notebook: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """(número de celda desde 1, código) de las celdas de código que escribe el estudiante.

    Son las de solución y las que no son de nbgrader; las celdas bloqueadas y las de
    prueba se restauran al calificar y no cuentan.
    """
    cells = []
    for number, cell in enumerate(notebook.cells, start=1):
        meta = _meta(cell)
        if cell.get("cell_type") != "code" or meta.get("locked") or meta.get("grade"):
            continue
        cells.append((number, cell.get("source", "")))
    return cells


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


class _Scanner(ast.NodeVisitor):
    def __init__(self, aliases: dict[str, str], setup: set[str] | None = None) -> None:
        self.aliases = aliases  # nombre local -> módulo protegido ("F" -> "torch.nn.functional")
        self.setup = setup  # nombres de la celda de preparación (None: todos los alias)
        self.found: list[tuple[int, str]] = []

    def _module_of(self, node: ast.AST) -> str | None:
        root = _root(node)
        return self.aliases.get(root.id) if isinstance(root, ast.Name) else None

    def _bind(self, name: str, module: str, lineno: int = 0) -> None:
        if module.split(".")[0] in PROTECTED:
            self.aliases[name] = module
        elif name in self.aliases and self._setup(name):  # `import otro as checks`
            self.found.append((lineno, f"reasigna {name} (era {self.aliases.pop(name)})"))

    def _setup(self, name: str) -> bool:
        return name in self.aliases and (self.setup is None or name in self.setup)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == REFERENCE or alias.name.startswith(REFERENCE + "."):
                self.found.append((node.lineno, f"importa {alias.name}"))
            self._bind(
                alias.asname or alias.name.split(".")[0],
                alias.name if alias.asname else alias.name.split(".")[0],
                node.lineno,
            )

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            full = f"{module}.{alias.name}"
            if module.startswith(REFERENCE) or full.startswith(REFERENCE):
                self.found.append((node.lineno, f"importa {full}"))
            self._bind(alias.asname or alias.name, full, node.lineno)

    def _target(self, target: ast.AST, lineno: int) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self._target(element, lineno)
        elif isinstance(target, ast.Name) and self._setup(target.id):
            # `checks = ...`: las pruebas ocultas llamarían a lo que ponga el estudiante.
            self.found.append((lineno, f"reasigna {target.id} (era {self.aliases[target.id]})"))
        elif isinstance(target, ast.Attribute | ast.Subscript):
            module = self._module_of(target)
            if module:
                self.found.append((lineno, f"modifica {ast.unparse(target)} (módulo {module})"))

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target, node.lineno)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target, node.lineno)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._target(node.target, node.lineno)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._target(target, node.lineno)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name in ("setattr", "delattr", "__setattr__", "__delattr__") and node.args:
            module = self._module_of(node.args[0])
            if module:
                self.found.append((node.lineno, f"{name} sobre {ast.unparse(node.args[0])}"))
        elif name == "vars" and node.args and self._module_of(node.args[0]):
            self.found.append((node.lineno, f"usa vars({ast.unparse(node.args[0])})"))
        elif name in ("import_module", "__import__") and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and str(arg.value).startswith(REFERENCE):
                self.found.append((node.lineno, f"importa {arg.value}"))
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "__dict__" and self._module_of(node):
            self.found.append((node.lineno, f"usa {ast.unparse(node)}"))
        self.generic_visit(node)


def scan_code(
    code: str, aliases: dict[str, str] | None = None, setup: set[str] | None = None
) -> list[tuple[int, str]]:
    """(línea, hallazgo) de un fragmento de código; ``aliases`` se actualiza con sus imports.

    ``setup``: los nombres que define la celda de preparación; solo se señala reasignar
    esos (``checks = ...``). Sin él, cualquier alias de un módulo protegido.
    """
    aliases = {} if aliases is None else aliases
    lines = [line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return []
    scanner = _Scanner(aliases, setup)
    scanner.visit(tree)
    return sorted(set(scanner.found))


def setup_aliases(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """Los alias que definen las celdas bloqueadas (``F``, ``checks``, ``torch``...)."""
    aliases: dict[str, str] = {}
    for cell in notebook.cells:
        if cell.get("cell_type") == "code" and _meta(cell).get("locked"):
            scan_code(cell.get("source", ""), aliases)
    return aliases


def scan(
    notebook: nbformat.NotebookNode,
    expected_ids: set[str] | None = None,
    original: nbformat.NotebookNode | None = None,
) -> list[str]:
    """Hallazgos en español, uno por renglón; lista vacía si no hay nada que revisar.

    ``original`` (el cuaderno del laboratorio) aporta los alias de su celda de preparación,
    que se restaura al calificar aunque el estudiante la haya borrado.
    """
    findings = []
    aliases = setup_aliases(original) if original is not None else {}
    aliases.update(setup_aliases(notebook))
    setup = set(aliases)
    for number, code in student_cells(notebook):
        for line, what in scan_code(code, aliases, setup):
            findings.append(f"celda {number}, línea {line}: {what}")
    seen: set[str] = set()
    for cell in notebook.cells:
        grade_id = _meta(cell).get("grade_id")
        if grade_id and grade_id in seen:
            findings.append(f"grade id duplicado «{grade_id}»: se califica solo la primera celda")
        elif grade_id and expected_ids is not None and grade_id not in expected_ids:
            findings.append(f"grade id desconocido «{grade_id}»: se ejecuta como celda normal")
        seen.add(grade_id)
    exercises = {i for i in expected_ids or () if i.startswith("ej")}  # no pregunta_N ni md_NN
    if expected_ids is not None and seen.isdisjoint(exercises):
        findings.append(
            "ninguna celda calificada de este laboratorio: ¿cuaderno de otro laboratorio?"
        )
    return findings
