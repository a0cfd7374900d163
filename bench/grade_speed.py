"""Segundos para calificar el laboratorio 1: ``python -m course check`` frente a nbgrader a secas.

Cada medida lanza un proceso nuevo, como haría un usuario. nbgrader a secas es el
camino del instructor: ``nbgrader generate_assignment`` y luego ``nbgrader autograde``
en un curso temporal. ``check`` se mide en frío (sin caché) y en caliente.

Uso: python bench/grade_speed.py [--repeat N]
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from course.argparse_es import ArgumentParser

REPO = Path(__file__).resolve().parents[1]
LAB = "01_atencion"
NOTEBOOK = REPO / "release" / LAB / f"{LAB}.ipynb"


def _timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def check_seconds(env: dict[str, str]) -> float:
    return _timed([sys.executable, "-m", "course", "check", str(NOTEBOOK)], REPO, env)


def nbgrader_seconds(env: dict[str, str]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(REPO / "source" / LAB, root / "source" / LAB)
        shutil.copy(REPO / "nbgrader_config.py", root)
        submitted = root / "submitted" / "estudiante" / LAB
        submitted.mkdir(parents=True)
        shutil.copy(NOTEBOOK, submitted)
        env = {**env, "PYTHONDONTWRITEBYTECODE": "1"}
        common = [
            f"--CourseDirectory.root={root}",
            f"--CourseDirectory.db_url=sqlite:///{root}/gb.db",
        ]
        generate = _timed(["nbgrader", "generate_assignment", LAB, *common], root, env)
        autograde = _timed(["nbgrader", "autograde", LAB, *common], root, env)
        return generate + autograde


def main() -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeat", type=int, default=3, metavar="N", help="repeticiones de cada medida"
    )
    args = parser.parse_args()
    rows = {"check (frío, sin caché)": [], "check (en caliente)": [], "nbgrader a secas": []}
    loads = [os.getloadavg()[0]]
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as cache:
            cold = {**os.environ, "XDG_CACHE_HOME": cache}
            rows["check (frío, sin caché)"].append(check_seconds(cold))
            rows["check (en caliente)"].append(check_seconds(cold))
        rows["nbgrader a secas"].append(nbgrader_seconds(dict(os.environ)))
        loads.append(os.getloadavg()[0])
    print(
        f"Laboratorio {LAB}, {args.repeat} repeticiones, {os.cpu_count()} núcleos,"
        f" carga media {min(loads):.1f}–{max(loads):.1f}"
    )
    for name, values in rows.items():
        print(
            f"  {name:<26} mediana {statistics.median(values):5.1f} s  (mín. {min(values):.1f}, máx. {max(values):.1f})"
        )
    # Cada repetición mide las dos órdenes seguidas: su cociente sufre menos la carga ajena.
    ratios = [
        warm / plain
        for warm, plain in zip(rows["check (en caliente)"], rows["nbgrader a secas"], strict=True)
    ]
    print(f"  check en caliente / nbgrader a secas: mediana {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
