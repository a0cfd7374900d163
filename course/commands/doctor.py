"""``python -m course doctor``: revisa el entorno y dice, en español, qué arreglar.

Sale con 0 si todo está bien y con 1 si algo hay que arreglar. La GPU no es obligatoria:
sin CUDA solo se avisa (el laboratorio 7 entrena en la CPU, más despacio).
"""

import importlib.metadata
import re
import shutil
import sys
from pathlib import Path

from course import labs
from course.commands import jupyter_es

INSTALL = "ejecuta «pip install -r requirements.txt» dentro del entorno virtual"


def pins(requirements: Path = labs.REPO / "requirements.txt") -> dict[str, str]:
    """Paquete -> versión fijada (``nombre==versión``) en requirements.txt."""
    found = {}
    for line in requirements.read_text().splitlines():
        match = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*==\s*([^\s;#]+)", line)
        if match:
            found[match[1]] = match[2]
    return found


def checks() -> list[tuple[bool, str, str]]:
    """(bien, qué se comprobó, qué hacer si no)."""
    found = []
    version = ".".join(map(str, sys.version_info[:3]))
    found.append(
        (sys.version_info >= (3, 11), f"Python {version}", "instala Python 3.11 o más nuevo")
    )
    for name, pinned in pins().items():
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found.append((False, f"{name} no está instalado (se pide {pinned})", INSTALL))
            continue
        same = installed.split("+")[0] == pinned
        found.append((same, f"{name} {installed} (se pide {pinned})", INSTALL))
    found.append(_cuda())
    for program in ("nbgrader", "alembic", "jupyter"):
        where = shutil.which(program)
        found.append(
            (
                where is not None,
                f"«{program}» en el PATH" + (f" ({where})" if where else ": no se encuentra"),
                "activa el entorno virtual (source .venv/bin/activate) antes de trabajar",
            )
        )
    found.append(_data())
    found.append(_language_pack())
    found.append(_sandbox())
    return found


def _sandbox() -> tuple[bool, str, str]:
    from course.grading import sandbox

    reason = sandbox.available()
    if reason:
        return (
            False,
            f"aislamiento de las entregas: {reason}",
            "sin él, «grade» se niega a calificar y «check» avisa; instala bubblewrap",
        )
    return True, "aislamiento de las entregas con bubblewrap", ""


def _cuda() -> tuple[bool, str, str]:
    try:
        import torch
    except ImportError:
        return False, "PyTorch no se puede importar", INSTALL
    if torch.cuda.is_available():
        return True, f"GPU con CUDA: {torch.cuda.get_device_name(0)}", ""
    return True, "sin GPU con CUDA: se usará la CPU (el laboratorio 7 tardará más)", ""


def _data() -> tuple[bool, str, str]:
    from course.data import sources

    try:
        where = sources.locate(allow_download=False)
    except Exception as error:  # noqa: BLE001 (DataError u otro: se explica igual)
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        return (
            False,
            f"datos de Multi30k: no están ({first})",
            "indica su carpeta con MULTI30K_DIR o deja que el laboratorio 7 los descargue",
        )
    return True, f"datos de Multi30k verificados en {where}", ""


def _language_pack() -> tuple[bool, str, str]:
    try:
        importlib.metadata.version("jupyterlab-language-pack-es-ES")
    except importlib.metadata.PackageNotFoundError:
        return False, "paquete de idioma español de JupyterLab: no está instalado", INSTALL
    if not jupyter_es.is_spanish():
        return (
            False,
            "JupyterLab no arranca en español en este entorno",
            "ejecuta «python -m course jupyter-es»",
        )
    return True, "JupyterLab en español (paquete de idioma y overrides.json)", ""


def run() -> int:
    results = checks()
    for ok, what, fix in results:
        print(f"{'✔' if ok else '✘'} {what}")
        if not ok:
            print(f"    → {fix}")
    problems = sum(not ok for ok, _, _ in results)
    if problems:
        print(f"\nHay {problems} cosas que arreglar.")
        return 1
    print("\nTodo en orden.")
    return 0
