"""Memoria por estudiante activo en el aula (``python -m course aula``), como root.

Monta un aula de verdad con ``tests/hub_class.py`` (cuentas del sistema que se borran al
terminar) y N estudiantes; cada uno entra, arranca su servidor y un núcleo, y ejecuta las
primeras celdas de código del laboratorio 1 (importa torch y el paquete del curso). Después
suma, por usuario, la memoria de sus procesos:

- RSS: lo que dice ``ps``; cuenta entera cada biblioteca compartida (torch) en cada proceso;
- PSS: cada página compartida se reparte entre quienes la comparten: es lo que cuesta de
  verdad cada estudiante, porque los entornos comparten archivos (enlaces duros) y el
  núcleo del sistema comparte sus páginas;
- USS: lo que solo es de ese usuario.

Y cuánto baja ``MemAvailable`` de la máquina entre antes y después.

Uso: python bench/aula_capacity.py [--estudiantes N]
"""

import json
import sys
import time
from pathlib import Path

import psutil

from course.argparse_es import ArgumentParser

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
MiB = 1024 * 1024
ROOT = Path("/var/tmp/course-aula-bench")  # otra que la de las pruebas: pueden ir a la vez


def first_cells(count: int = 3) -> list[str]:
    """Las primeras celdas de código del laboratorio 1 (la de importar, el ejemplo)."""
    notebook = json.loads((REPO / "release" / "01_atencion" / "01_atencion.ipynb").read_text())
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    return ["".join(cell["source"]) for cell in code[:count]]


def memory_of(user: str) -> dict[str, float]:
    totals = {"rss": 0.0, "pss": 0.0, "uss": 0.0, "procesos": 0}
    for process in psutil.process_iter(["username"]):
        if process.info["username"] != user:
            continue
        try:
            info = process.memory_full_info()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        totals["rss"] += info.rss / MiB
        totals["pss"] += info.pss / MiB
        totals["uss"] += info.uss / MiB
        totals["procesos"] += 1
    return totals


def available_mib() -> float:
    return psutil.virtual_memory().available / MiB


def main() -> int:
    parser = ArgumentParser(
        prog="python bench/aula_capacity.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--estudiantes", type=int, default=4, help="estudiantes activos (4)")
    args = parser.parse_args()
    from hub_class import hub_class

    cells = first_cells()
    with hub_class(count=args.estudiantes, memory_mb=3072, root=ROOT) as hub:
        before = available_mib()
        timings = []
        for user in hub.students:
            start = time.perf_counter()
            opener = hub.spawn(user)
            token = hub.token(user, opener)
            kernel = hub.kernel(user, token)
            for cell in cells:
                output = hub.execute(user, token, kernel, cell)
                if "Error" in output:
                    raise SystemExit(f"{user}: {output[-500:]}")
            timings.append(time.perf_counter() - start)
        time.sleep(5)
        rows = {user: memory_of(user) for user in hub.students}
        used = before - available_mib()
    print(f"{'usuario':<14} {'procesos':>8} {'RSS MiB':>9} {'PSS MiB':>9} {'USS MiB':>9}")
    for user, row in rows.items():
        print(
            f"{user:<14} {row['procesos']:>8} {row['rss']:>9.0f} {row['pss']:>9.0f} {row['uss']:>9.0f}"
        )
    count = len(rows)
    for key in ("rss", "pss", "uss"):
        print(f"media {key.upper()}: {sum(r[key] for r in rows.values()) / count:.0f} MiB")
    print(f"MemAvailable bajó {used:.0f} MiB para {count}: {used / count:.0f} MiB por estudiante")
    print(
        f"entrar + servidor + núcleo + {len(cells)} celdas: {min(timings):.1f}–{max(timings):.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
