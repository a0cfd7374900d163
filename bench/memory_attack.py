"""El ataque de memoria, repetido: ``course grade --jobs 2`` en un cgroup de memoria limitada.

Una clase del laboratorio 1 con tres compañeros honrados (la solución) y mallory, cuyo
cuaderno añade una celda que lanza diez procesos de 600 MB (cada uno bajo el límite por
proceso; juntos, 6 GB, más que la memoria de su núcleo y que toda la calificación). Cada
ronda copia la clase, ejecuta ``python -m course grade --jobs 2 --memory GIB`` entera
dentro de un cgroup nuevo con ``--limite`` GiB sin swap y comprueba:

- los tres compañeros con la nota completa en su ``calificacion.json`` y en ``gradebook.db``;
- la fila de mallory con «error del calificador: sin memoria», sin nota (nunca un cero);
- nada vivo en el cgroup de la ronda al terminar, ningún cgroup de núcleo, carpeta de
  sockets ni cigoto nuevos, y el ``TMPDIR`` de la ronda vacío.

Imprime una línea por ronda (segundos, pico de memoria de la ronda, procesos que mató el
sistema dentro y fuera de los núcleos) y el resumen. Necesita root, bubblewrap y cgroups.

Uso: sudo python bench/memory_attack.py [--rondas 10] [--limite 6] [--memory 2]
"""

import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from course import labs
from course.argparse_es import ArgumentParser
from course.grading import cgroups, results, sandbox

LAB = labs.get("01_atencion")
HONEST = ("ana", "beto", "carla")
ATTACK = (
    "import subprocess, sys\n"
    "hijo = 'import time; x = b\"1\" * (600 * 2**20); time.sleep(30)'\n"
    "procesos = [subprocess.Popen([sys.executable, '-c', hijo]) for _ in range(10)]\n"
    "[p.wait() for p in procesos]\n"
)
# `python -m course grade ...` tal cual, con el curso en otra carpeta.
CLI = (
    "import functools, sys; from pathlib import Path; from course import cli;"
    " from course.commands import grade;"
    " grade.run = functools.partial(grade.run, root=Path(sys.argv[1]));"
    " sys.exit(cli.main(sys.argv[2:]))"
)


def build_class(root: Path) -> None:
    attacker = json.loads(LAB.source.read_text())
    attacker["cells"].append(
        {"cell_type": "code", "id": "ataque", "metadata": {}, "source": ATTACK,
         "outputs": [], "execution_count": None}
    )  # fmt: skip
    texts = dict.fromkeys(HONEST, LAB.source.read_text()) | {"mallory": json.dumps(attacker)}
    for student, text in texts.items():
        folder = root / "submitted" / student / LAB.id
        folder.mkdir(parents=True)
        (folder / f"{LAB.id}.ipynb").write_text(text)


def make_cgroups(name: str, gib: float) -> list[Path]:
    """Los cgroups de una ronda (memoria con ``gib`` GiB sin swap, procesos, CPU; v1 o v2):
    los de sus núcleos nacen dentro, aparte de los de otras calificaciones de la máquina."""
    hierarchy = cgroups.hierarchy()
    folders = sorted({folder / name for folder in hierarchy.folders.values()})
    for folder in folders:
        folder.mkdir()
    memory = hierarchy.folders["memory"] / name
    limit = str(int(gib * 2**30))
    if hierarchy.version == 1:
        (memory / "memory.limit_in_bytes").write_text(limit)
        (memory / "memory.memsw.limit_in_bytes").write_text(limit)
    else:
        (memory / "memory.max").write_text(limit)
        (memory / "memory.swap.max").write_text("0")
    return folders


def cgroup_facts(folder: Path) -> tuple[float, int]:
    """Pico de memoria (GiB) y procesos que mató el sistema por memoria en ``folder`` (sin
    contar los de los cgroups de los núcleos, que cuelgan de él)."""
    v1 = (folder / "memory.max_usage_in_bytes").exists()
    peak = (folder / ("memory.max_usage_in_bytes" if v1 else "memory.peak")).read_text()
    events = (folder / ("memory.oom_control" if v1 else "memory.events.local")).read_text()
    kills = [int(line.split()[1]) for line in events.splitlines() if line.startswith("oom_kill ")]
    return int(peak) / 2**30, (kills or [0])[0]


def leftovers(root: Path, folders: list[Path], since: float) -> list[str]:
    """Cgroups de núcleos dentro de los de la ronda, lo que quede en su TMPDIR y carpetas de
    sockets o cigotos de /tmp creadas desde ``since`` cuyo dueño ya no vive."""
    found = [str(p) for f in folders for p in f.iterdir() if p.is_dir()]
    found += [str(p) for p in (root / "tmp").iterdir()]
    for path in [*Path("/tmp").glob("nucleo-*"), *Path("/tmp").glob("cigoto-*")]:
        try:
            if path.stat().st_ctime >= since and orphan(path):
                found.append(str(path))
        except OSError:
            continue
    return found


def orphan(path: Path) -> bool:
    """¿Murió quien usaba esta carpeta? Un cigoto vivo atiende su socket; la carpeta de
    sockets de un núcleo es del usuario de su proceso de trabajo (``sandbox.kernel_uid``)."""
    if path.name.startswith("cigoto-"):
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(str(path / "s"))
                return False
            except OSError:
                return True
    owner = path.stat().st_uid - sandbox.SANDBOX_UID
    live = (int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit())
    return not any(pid % 100_000 == owner for pid in live)


def gradebook_points(root: Path) -> dict[str, float]:
    from nbgrader.api import Gradebook

    points: dict[str, float] = {}
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{root / 'gradebook.db'}") as book:
        warnings.simplefilter("ignore")
        for assignment in book.assignments:
            for submission in assignment.submissions:
                points[submission.student.id] = submission.score
    return points


def one_round(template: Path, number: int, limit: float, memory: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-memoria-") as tmp:
        root = Path(tmp) / "curso"
        shutil.copytree(template, root)
        (root / "tmp").mkdir()
        env = {**os.environ, "TMPDIR": str(root / "tmp"), "JUPYTER_RUNTIME_DIR": str(root / "tmp")}
        folders = make_cgroups(f"bench-memoria-{os.getpid()}-{number}", limit)
        memory_folder = next(
            f
            for f in folders
            if (f / "memory.limit_in_bytes").exists() or (f / "memory.max").exists()
        )
        since = time.time() - 1
        join = 'for f; do [ "$f" = -- ] && break; echo $$ > "$f/cgroup.procs"; shift; done; shift'
        inside = ["/bin/sh", "-c", join + '; exec "$@"', "sh", *map(str, folders), "--"]
        command = [sys.executable, "-c", CLI, str(root), "grade", "--jobs", "2"]
        command += ["--memory", f"{memory:g}", "--timeout", "60"]
        start = time.perf_counter()
        done = subprocess.run(inside + command, capture_output=True, text=True, env=env)
        seconds = time.perf_counter() - start
        alive = [pid for f in folders for pid in (f / "cgroup.procs").read_text().split()]
        peak, outer_kills = cgroup_facts(memory_folder)
        left = leftovers(root, folders, since)
        cgroups._remove(folders)
        autograded = root / "autograded"
        if not results.path_for(autograded, "mallory", LAB.id).exists():  # grade no calificó
            lines = (done.stdout + done.stderr).strip().splitlines() or ["?"]
            return {"ok": False, "seconds": seconds, "failed": lines[-1], "left": left}
        mallory = results.read(autograded, "mallory", LAB.id).error
        points = gradebook_points(root) if (root / "gradebook.db").exists() else {}
        full = []
        for student in HONEST:
            result = results.read(autograded, student, LAB.id)
            whole = not result.error and result.auto_points == result.auto_max > 0
            full.append(whole and points.get(student) == result.auto_max)
    return {
        "seconds": seconds,
        "peak": peak,
        "outer_kills": outer_kills,
        "honest_full": all(full),
        "attacker": mallory,
        "attacker_scored": "mallory" in points,
        "alive": alive,
        "left": left,
        "exit": done.returncode,
        "ok": all(full) and "sin memoria" in mallory and not alive and not left
        and "mallory" not in points,
    }  # fmt: skip


def main() -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rondas", type=int, default=10, help="repeticiones (10)")
    parser.add_argument("--limite", type=float, default=6.0, help="GiB de toda la ronda (6)")
    parser.add_argument("--memory", type=float, default=2.0, help="GiB de cada núcleo (2)")
    args = parser.parse_args()
    if cgroups.available():
        parser.error(f"hacen falta cgroups: {cgroups.available()}")
    print(f"Máquina: {platform.node()}, {os.cpu_count()} CPU, Linux {platform.release()}")
    print(f"cgroups v{cgroups.hierarchy().version}; ronda en {args.limite:g} GiB sin swap,")
    print(f"--jobs 2 --memory {args.memory:g}; 3 compañeros + mallory (10 × 600 MB)\n")
    with tempfile.TemporaryDirectory(prefix="bench-clase-") as template:
        build_class(Path(template))
        rounds = []
        for number in range(1, args.rondas + 1):
            found = one_round(Path(template), number, args.limite, args.memory)
            rounds.append(found)
            if "failed" in found:
                print(f"ronda {number:2d}: MAL, grade no calificó: {found['failed']}", flush=True)
                continue
            print(
                f"ronda {number:2d}: {'bien' if found['ok'] else 'MAL '} {found['seconds']:5.0f} s"
                f"  pico {found['peak']:.2f} GiB  muertos fuera de los núcleos"
                f" {found['outer_kills']}  compañeros completos {found['honest_full']}"
                f"  mallory: {found['attacker'][:60]}"
                + (f"  vivos {found['alive']}" if found["alive"] else "")
                + (f"  restos {found['left']}" if found["left"] else ""),
                flush=True,
            )
    good = sum(r["ok"] for r in rounds)
    seconds = sorted(r["seconds"] for r in rounds)
    rounds = [r for r in rounds if "peak" in r] or [{"peak": 0.0}]
    print(
        f"\n{good}/{len(rounds)} rondas bien; {seconds[len(seconds) // 2]:.0f} s de mediana;"
        f" pico máximo {max(r['peak'] for r in rounds):.2f} GiB"
    )


if __name__ == "__main__":
    main()
