"""``python -m course doctor``: revisa el entorno y dice, en español, qué arreglar.

Sale con 0 si todo está bien y con 1 si algo hay que arreglar. La GPU no es obligatoria:
sin CUDA solo se avisa (el laboratorio 7 entrena en la CPU, más despacio). El idioma que se
revisa es el que JupyterLab mostrará de verdad: el del entorno, completado por
``jupyter-es``, salvo que la configuración propia del usuario pida otro.
"""

import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from course import labs
from course.commands import jupyter_es
from course.jupyter import language_pack

INSTALL = "ejecuta «pip install -r requirements.txt» dentro del entorno virtual"
WARN = "aviso"  # ni bien ni mal: algo que falta y que solo necesitan algunas órdenes
CHROMIUM = (Path("/usr/lib/chromium/chromium"), "chromium", "chromium-browser")
HELP = "revisa el entorno y dice qué arreglar"


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
    found.append(_kernel())
    found.append(_data())
    found.append(_labs())
    found.append(_language_pack())
    found.append(_user_language())
    if (labs.REPO / "course" / "grading").is_dir():  # no está en el zip de estudiantes
        found.append(_sandbox())
        found.append(_cgroups())
        from course.grading import kernel_view  # el núcleo aislado ve este course

        found.append(kernel_view.doctor_check())
        found.append(_chromium())
        found.append(_release())
    return found


def kernel_python() -> str:
    """El Python con que JupyterLab lanzará el núcleo «python3» de los cuadernos.

    Si su ``argv`` dice solo «python», jupyter_client lo cambia por el Python del propio
    Jupyter: el del programa ``jupyter`` que se encuentra en el PATH.
    """
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        python = KernelSpecManager().get_kernel_spec("python3").argv[0]
    except NoSuchKernel:
        return sys.executable
    if re.fullmatch(r"python[\d.]*", python):
        jupyter = shutil.which("jupyter")
        first = Path(jupyter).read_text(errors="replace").split("\n", 1)[0] if jupyter else ""
        python = first[2:].strip() if first.startswith("#!") else sys.executable
    return python


def _kernel() -> tuple[bool, str, str]:
    """¿Importa el núcleo de los cuadernos este paquete ``course``? Se prueba fuera de la
    carpeta del curso, como un cuaderno de ``trabajo/``: sin instalarlo, no lo encuentra."""
    python = kernel_python()
    fix = "ejecuta «pip install -e .» en la carpeta del curso con el entorno activado"
    code = "import pathlib, course; print(pathlib.Path(course.__file__).resolve().parent)"
    with tempfile.TemporaryDirectory() as folder:
        try:
            done = subprocess.run(
                [python, "-c", code], cwd=folder, capture_output=True, text=True, timeout=120
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return False, f"el Python de los cuadernos ({python}) no arranca: {error}", fix
    found = done.stdout.strip()
    if done.returncode != 0:
        return False, f"los cuadernos no encuentran el paquete «course» (núcleo {python})", fix
    if Path(found) != Path(__file__).resolve().parents[1]:
        return False, f"los cuadernos usan otra copia del paquete «course»: {found}", fix
    return True, f"los cuadernos importan este paquete «course» (núcleo {python})", ""


def _labs() -> tuple[bool, str, str]:
    present = [lab.id for lab in labs.LABS.values() if lab.release.is_file()]
    if not present:
        return (
            False,
            f"no hay cuadernos de laboratorio en {labs.REPO / 'release'}",
            "descomprime de nuevo el paquete del curso entero (con su carpeta release/)",
        )
    return True, f"laboratorios: {', '.join(present)}", ""


def user_settings() -> Path:
    """El archivo con el idioma que eligió el usuario en JupyterLab (puede no existir)."""
    from jupyterlab.commands import get_user_settings_dir

    plugin = Path("@jupyterlab") / "translation-extension" / "plugin.jupyterlab-settings"
    return Path(get_user_settings_dir()) / plugin


def _user_language() -> tuple[bool, str, str]:
    import json5

    path = user_settings()
    try:
        locale = json5.loads(path.read_text()).get("locale")
    except FileNotFoundError:
        return True, "tu configuración de JupyterLab no cambia el idioma", ""
    except (OSError, ValueError, AttributeError) as error:
        return False, f"no se puede leer tu configuración de idioma {path}: {error}", "bórrala"
    if locale in (None, "es_ES"):
        return True, "tu configuración de JupyterLab no cambia el idioma", ""
    return (
        False,
        f"tu configuración de JupyterLab pide el idioma «{locale}» y manda sobre la del"
        f" entorno ({path})",
        "en JupyterLab elige Configuración › Idioma › Español, o borra ese archivo",
    )


def stale_releases(lab_list: list[labs.Lab] | None = None, root: Path = labs.REPO) -> list[str]:
    """Laboratorios cuyo ``release/`` no es el que sale hoy de ``source/``."""
    from course import grading

    stale = []
    with tempfile.TemporaryDirectory() as folder:  # un curso de paso para todos
        for lab in labs.available() if lab_list is None else lab_list:
            released = root / "release" / lab.id / f"{lab.id}.ipynb"
            rebuilt = grading.generate(lab, Path(folder))
            if not released.exists() or json.loads(rebuilt.read_text()) != json.loads(
                released.read_text()
            ):
                stale.append(lab.id)
    return stale


def _release() -> tuple[bool, str, str]:
    if not labs.available():
        return True, "sin source/: no hay release/ que comprobar", ""
    print("Comprobando que release/ sale de source/ (unos segundos por laboratorio)…")
    stale = stale_releases()
    if not stale:
        return True, "release/ corresponde a source/", ""
    return (
        False,
        f"release/ no corresponde a source/ en {', '.join(stale)} (¿se editó a mano o se"
        " trabajó dentro de release/?)",
        "guarda antes tu trabajo fuera de release/; después ejecuta"
        f" «python -m course build {stale[0]}» por cada laboratorio",
    )


def _sandbox() -> tuple[bool, str, str]:
    from course.grading import sandbox

    reason = sandbox.available()
    if reason:
        return (
            WARN,
            f"aislamiento de las entregas: {reason}",
            "sin él, «grade» se niega a calificar, «check» avisa y las pruebas que califican"
            " se saltan; instálalo con «sudo apt-get install bubblewrap» (Debian/Ubuntu)",
        )
    return True, "aislamiento de las entregas con bubblewrap", ""


def _cgroups() -> tuple[bool | str, str, str]:
    from course.grading import cgroups

    reason = cgroups.available()
    if reason:
        return (
            WARN,
            f"un cgroup por núcleo al calificar: {reason}",
            "«grade» califica igual, con los límites por proceso; para el cgroup, califica"
            " como root en una máquina con cgroups v1 o v2 (memory y pids delegados)",
        )
    version = cgroups.hierarchy().version
    return True, f"un cgroup por núcleo al calificar (cgroups v{version})", ""


def _chromium() -> tuple[bool | str, str, str]:
    """Chromium solo hace falta para la prueba del navegador (tests/test_browser.py)."""
    for candidate in CHROMIUM:
        where = candidate if isinstance(candidate, Path) else shutil.which(candidate)
        if where and os.access(where, os.X_OK):
            return True, f"Chromium para la prueba del navegador ({where})", ""
    return (
        WARN,
        "Chromium no está: la prueba del navegador se saltará",
        "instálalo con «sudo apt-get install chromium» (Debian/Ubuntu) si vas a ejecutarla",
    )


def _cuda() -> tuple[bool, str, str]:
    try:
        import torch
    except ImportError:
        return False, "PyTorch no se puede importar", INSTALL
    if torch.cuda.is_available():
        return True, f"GPU con CUDA: {torch.cuda.get_device_name(0)}", ""
    return True, "sin GPU con CUDA: se usará la CPU (el laboratorio 7 tardará más)", ""


def _data() -> tuple[bool, str, str]:
    from course.translation.data import sources

    try:
        where = sources.locate(allow_download=False)
    except Exception as error:  # noqa: BLE001 (DataError u otro: se explica igual)
        text = str(error).strip() or type(error).__name__
        return (
            False,
            "datos de Multi30k: no están. " + text.replace("\n", "\n      "),
            "indica su carpeta con MULTI30K_DIR o deja que el laboratorio 7 los descargue",
        )
    return True, f"datos de Multi30k verificados en {where}", ""


def _language_pack() -> tuple[bool, str, str]:
    messages = language_pack.folder()
    if messages is None:
        return False, "paquete de idioma español de JupyterLab: no está instalado", INSTALL
    missing = [
        what
        for ok, what in (
            (jupyter_es.is_spanish(), "el idioma del entorno"),
            (language_pack.is_complete(messages), "las traducciones del curso"),
            (jupyter_es.extension_installed(), "la extensión con las etiquetas de nbgrader"),
            (jupyter_es.formgrader_enabled(), "Formgrader en español"),
        )
        if not ok
    ]
    if missing:
        return (
            False,
            f"JupyterLab no estará del todo en español: falta {', '.join(missing)}",
            "ejecuta «python -m course jupyter-es»",
        )
    return True, "JupyterLab en español (idioma del entorno, traducciones y extensión)", ""


def add_arguments(parser) -> None:
    """``doctor`` no tiene argumentos."""


def main(args) -> int:
    return run()


def run() -> int:
    results = checks()
    for ok, what, fix in results:
        print(f"{'⚠' if ok == WARN else '✔' if ok else '✘'} {what}")
        if ok is not True:
            print(f"    → {fix}")
    problems = sum(ok is False for ok, _, _ in results)
    warnings = sum(ok == WARN for ok, _, _ in results)
    if problems:
        print(f"\nHay {problems} {'cosa' if problems == 1 else 'cosas'} que arreglar.")
        return 1
    print(
        "\nTodo en orden" + (f", con {warnings} aviso{'s' * (warnings > 1)}." if warnings else ".")
    )
    return 0
