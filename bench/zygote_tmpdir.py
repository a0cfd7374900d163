"""``grade`` con ``$TMPDIR`` fuera de ``/tmp``: el cigoto de antes (solo ``/tmp``) y el de ahora.

Uso (root, con bubblewrap)::

    python bench/zygote_tmpdir.py --entregas 4 --rondas 2

Clase: ``--entregas`` del laboratorio 1 (la mitad la solución, la otra en blanco) en una
carpeta de ``/var/tmp``, calificada con ``grade --jobs 1`` y ``TMPDIR`` en otra de
``/var/tmp`` (como el disco local de un nodo de Slurm). «antes» deja que el cigoto vea solo
``/tmp``, como hasta el 28-11, y cada núcleo arranca con su propio ``bwrap``; «ahora», el
cigoto ve la carpeta de la calificación. Alterna los dos modos en cada ronda y cuenta, por
núcleo, si nació del cigoto.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from slurm_array import make_class  # la misma clase: mitad solución, mitad en blanco

from course.argparse_es import ArgumentParser

# Un proceso por medida: el modo, la clase y el archivo donde cada núcleo dice si nació
# del cigoto (los núcleos nacen en los procesos de trabajo de grade).
ONE = """import sys
from pathlib import Path
from course.commands import grade
from course.grading import pool, zygote
mode, root, seen = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
class Seen(pool.WarmKernel):
    def __init__(self, *args):
        super().__init__(*args)
        with open(seen, "a") as out:
            out.write(f"{zygote.STUB in self.km.provisioner.process.args}\\n")
pool.WarmKernel = Seen
if mode == "antes":
    zygote.scratch = type("Antes", (), {"PREFIX": "ninguna-carpeta-"})
sys.exit(grade.run(root=root, jobs=1, progress=False))
"""


def measure(mode: str, count: int, base: Path) -> tuple[float, str]:
    root = Path(tempfile.mkdtemp(prefix="clase-", dir=base))
    tmp = Path(tempfile.mkdtemp(prefix="tmpdir-", dir=base))
    seen = base / "cigoto.txt"
    seen.unlink(missing_ok=True)
    make_class(root, count)
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", ONE, mode, str(root), str(seen)],
        env={**os.environ, "TMPDIR": str(tmp)}, capture_output=True, text=True,
    )  # fmt: skip
    seconds = time.monotonic() - start
    assert done.returncode == 0, done.stdout + done.stderr
    born = seen.read_text().split() if seen.exists() else []
    shutil.rmtree(root)
    shutil.rmtree(tmp)
    return seconds, f"{born.count('True')} de {len(born)} núcleos del cigoto"


def main() -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entregas", type=int, default=4, help="entregas del lab. 1 (4)")
    parser.add_argument("--rondas", type=int, default=2, help="rondas de antes y ahora (2)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="banco-cigoto-", dir="/var/tmp"))
    try:
        for _ in range(args.rondas):
            for mode in ("antes", "ahora"):
                seconds, born = measure(mode, args.entregas, base)
                load = os.getloadavg()[0]
                print(f"{mode}: {seconds:.1f} s, {born} (carga {load:.1f})", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
