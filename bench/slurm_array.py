"""Calificar una clase directamente y como array de Slurm: segundos de pared de cada uno.

Uso (root, con un Slurm ya en marcha: ``SLURM_CONF`` apunta a su configuración; el modo de
arrancar uno de un nodo está en ``tests/test_slurm.py``)::

    python bench/slurm_array.py --entregas 30 --fragmentos 2

Clase: ``--entregas`` del laboratorio 1, la mitad la solución y la otra el cuaderno en
blanco. Mide ``grade --jobs <CPU>`` y, en otra copia, el array (``fragmento.sbatch`` con
1 CPU por tarea) más la unión (``afterany``), desde ``sbatch`` hasta que termina la unión.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import test_slurm as ts  # noqa: E402

from course import labs  # noqa: E402
from course.argparse_es import ArgumentParser  # noqa: E402

LAB = labs.get("01_atencion")


def make_class(root: Path, count: int) -> None:
    for number in range(count):
        folder = root / "submitted" / f"est{number:02d}" / LAB.id
        folder.mkdir(parents=True)
        notebook = LAB.source if number % 2 == 0 else LAB.release
        (folder / f"{LAB.id}.ipynb").write_text(notebook.read_text())


def direct(root: Path, env: dict) -> float:
    start = time.monotonic()
    subprocess.run([f"{env['VENV']}/bin/python", "-m", "course", "grade"], env=env, check=False,
                   capture_output=True)  # fmt: skip
    return time.monotonic() - start


def array(root: Path, env: dict, shards: int) -> float:
    start = time.monotonic()
    tasks = ts._sbatch(env, root, f"--array=1-{shards}", str(ts.SLURM / "fragmento.sbatch"))
    merge = ts._sbatch(env, root, f"--dependency=afterany:{tasks}", str(ts.SLURM / "unir.sbatch"))
    info = ts._wait(merge, env, timeout=3600)
    assert info["ExitCode"] == "0:0", info
    return time.monotonic() - start


def main() -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entregas", type=int, default=30, help="entregas del lab. 1 (30)")
    parser.add_argument("--fragmentos", type=int, default=2, help="tareas del array (2)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="banco-slurm-"))
    try:
        for name in ("directa", "array"):
            root = base / name
            make_class(root, args.entregas)
            env = ts._course_env(root, dict(os.environ))
            env["FRAGMENTOS"] = str(args.fragmentos)
            (root / "logs").mkdir()
            run = direct(root, env) if name == "directa" else array(root, env, args.fragmentos)
            print(f"{name}: {run:.1f} s", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{args.entregas} entregas, {os.cpu_count()} CPU, {args.fragmentos} tareas de 1 CPU")


if __name__ == "__main__":
    main()
