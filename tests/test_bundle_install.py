"""El zip del estudiante se instala y funciona como dice su README, en un entorno nuevo.

Cómo se instala sin red (y en menos de 3 minutos): ``python -m venv --without-pip`` crea
un entorno de verdad (su ``bin/python``, su ``site-packages`` vacío) y un ``.pth`` le
añade, como directorio de sitio, una carpeta con enlaces a los paquetes ya instalados en
el entorno de las pruebas, **menos el curso**; los programas de ``bin`` (``jupyter``,
``nbgrader``, ``alembic``…) se copian con su primera línea apuntando al Python nuevo, como
los escribe pip. Después se ejecuta la orden del README tal cual, ``pip install -r
requirements.txt``, con ``--no-index``: las dependencias fijadas ya están (pip no
descarga nada) y ``-e .`` instala el paquete del zip con su ``pyproject.toml``. Es lo más
fiel sin red: ``--system-site-packages`` no valdría (el paquete del curso del entorno de
las pruebas se vería en lugar del del zip) y construir ruedas de todo tarda minutos.

El paquete de idioma se copia en vez de enlazarse: ``jupyter-es`` escribe en él.
"""

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import nbformat
import pytest

from course import labs
from course.commands import bundle

pytestmark = pytest.mark.slow

SITE = Path(sysconfig.get_paths()["purelib"])
BIN = Path(sys.executable).parent
OURS = ("course-", "__editable__", "course.egg-link", "__pycache__")  # el curso instalado aquí
COPIED = ("jupyterlab_language_pack_es_ES",)


def _data_dir() -> Path:
    from course.translation.data import sources

    try:
        return sources.locate(allow_download=False)
    except Exception as error:  # noqa: BLE001 (sin datos no hay entrenamiento que probar)
        pytest.skip(f"sin los datos de Multi30k: {str(error).splitlines()[0]}")


def _fresh_env(folder: Path) -> Path:
    """Un entorno nuevo que ve las dependencias instaladas aquí, pero no el curso."""
    env = folder / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    deps = folder / "deps"
    deps.mkdir()
    for entry in SITE.iterdir():
        if entry.name.startswith(OURS) or entry.name.endswith(".egg-link"):
            continue
        if entry.name.startswith(COPIED):
            subprocess.run(["cp", "-r", str(entry), str(deps / entry.name)], check=True)
        else:
            (deps / entry.name).symlink_to(entry)
    site = env / SITE.relative_to(sys.prefix)
    (site / "zz_dependencias.pth").write_text(f"import site; site.addsitedir({str(deps)!r})\n")
    for script in BIN.iterdir():
        target = env / "bin" / script.name
        if target.exists() or not script.is_file():
            continue
        head = script.read_bytes()[:200]
        if head.startswith(b"#!") and str(BIN).encode() in head.split(b"\n")[0]:
            lines = script.read_text(encoding="utf-8").split("\n", 1)
            target.write_text(f"#!{env / 'bin' / 'python'}\n{lines[1]}", encoding="utf-8")
            target.chmod(0o755)
    return env


def _answered(work: Path, lab: labs.Lab) -> None:
    """Rellena las celdas de solución de la copia de trabajo con las del cuaderno fuente."""
    answers = {
        cell.metadata["nbgrader"]["grade_id"]: cell.source
        for cell in nbformat.read(lab.source, 4).cells
        if cell.metadata.get("nbgrader", {}).get("solution")
    }
    notebook = nbformat.read(work, 4)
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution") and grade_id in answers:
            cell.source = answers[grade_id]
    nbformat.write(notebook, work)


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    """(carpeta del zip descomprimido, función que ejecuta ``python -m course …`` ahí)."""
    folder = tmp_path_factory.mktemp("zip")
    data_dir = _data_dir()
    archive = folder / "curso.zip"
    assert bundle.run("07_multi30k", str(archive)) == 0
    with zipfile.ZipFile(archive) as opened:
        opened.extractall(folder)
    root, env = folder / "transformer-es", _fresh_env(folder)
    variables = {
        "PATH": f"{env / 'bin'}{os.pathsep}{os.defpath}",
        "VIRTUAL_ENV": str(env),
        "HOME": str(folder / "home"),
        "XDG_CACHE_HOME": str(folder / "cache"),
        "MULTI30K_DIR": str(data_dir),
        "OMP_NUM_THREADS": "1",
        "LANG": "C.UTF-8",
    }

    def run(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [str(env / "bin" / "python"), *args], cwd=root, env=variables,
            capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        done.output = done.stdout + done.stderr
        return done

    return root, run


def test_the_zip_installs_and_works_as_its_readme_says(student):
    root, run = student
    # Sin «pip install -r requirements.txt» (su línea «-e .»), los cuadernos no encuentran
    # el paquete: doctor no puede decir que todo está en orden.
    before = run("-m", "course", "doctor")
    assert before.returncode == 1, before.output
    assert "✘ los cuadernos no encuentran el paquete «course»" in before.output
    assert "pip install -e ." in before.output

    installed = run("-m", "pip", "install", "--no-index", "--no-build-isolation", "-r",
                    "requirements.txt")  # fmt: skip
    assert installed.returncode == 0, installed.output
    assert "Successfully installed course" in installed.output
    assert run("-m", "course", "jupyter-es").returncode == 0

    doctor = run("-m", "course", "doctor")
    assert doctor.returncode == 0, doctor.output
    assert "✘" not in doctor.output and "Todo en orden" in doctor.output
    assert "los cuadernos importan este paquete «course»" in doctor.output
    assert "laboratorios: 01_atencion" in doctor.output and "07_multi30k" in doctor.output
    assert f"datos de Multi30k verificados en {_data_dir()}" in doctor.output

    started = run("-m", "course", "empezar", "01_atencion")
    assert started.returncode == 0, started.output
    work = root / "trabajo" / "01_atencion" / "01_atencion.ipynb"
    _answered(work, labs.get("01_atencion"))
    check = run("-m", "course", "check", str(work))
    assert check.returncode == 0, check.output
    assert "✘" not in check.output and "Traceback" not in check.output
    total = [line for line in check.output.splitlines() if "superadas:" in line]
    assert total, check.output
    passed, points = total[0].split(": ")[1].split(" puntos")[0].split(" / ")
    assert passed == points and float(points) > 0, total


def test_train_in_the_zip_uses_the_students_own_functions(student):
    root, run = student
    # El zip no trae la referencia del laboratorio 7; sin cuaderno, train dice qué hacer.
    assert not (root / "course" / "reference" / "translation.py").exists()
    missing = run("-m", "course", "train", "--smoke")
    assert missing.returncode == 2, missing.output
    assert "empezar 07_multi30k" in missing.output and "Traceback" not in missing.output

    assert run("-m", "course", "empezar", "07_multi30k").returncode == 0
    _answered(root / "trabajo" / "07_multi30k" / "07_multi30k.ipynb", labs.get("07_multi30k"))
    done = run("-m", "course", "train", "--smoke", "--epocas", "1", "--out", "runs/humo")
    assert done.returncode == 0, done.output
    assert "Receta «smoke-cpu»: 1 época como" in done.output
    assert "BLEU (sacreBLEU, con mayúsculas, detokenizado):" in done.output
    metrics = json.loads((root / "runs" / "humo" / "metrics.json").read_text(encoding="utf-8"))
    assert len(metrics["history"]) == 1


def test_the_zip_ships_what_its_pyproject_lists_and_no_answers(student):
    root, _ = student
    shipped = {p.parent.relative_to(root).as_posix() for p in root.glob("course/**/__init__.py")}
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    listed = set(json.loads(text.split("\npackages = ")[1].split("\n")[0]))
    assert listed == {name.replace("/", ".") for name in shipped}
    assert not (root / "course" / "grading").exists() and not (root / "source").exists()
    batching = (root / "course" / "translation" / "data" / "batching.py").read_text(
        encoding="utf-8"
    )
    assert "pad_sequence" not in batching.split("def collate")[1].split("\ndef ")[0]
