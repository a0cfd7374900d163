"""Memoria y cortes en ``course grade --jobs 2`` (docs/reliability.md, «Memoria»).

- Un cuaderno que lanza muchos procesos medianos (cada uno bajo el límite por proceso,
  juntos por encima de la memoria de su núcleo) con toda la calificación en un cgroup de
  memoria limitada: su fila dice «sin memoria» y los tres compañeros tienen la nota
  completa en ``gradebook.db``.
- Se mata solo el proceso principal a mitad: no queda ningún proceso de trabajo, núcleo,
  cgroup ni carpeta temporal, y la orden siguiente reanuda sin repetir lo ya calificado.
"""

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from test_regrade import cli_grade, scores, totals

from course import labs
from course.grading import cgroups, results, sandbox, scratch

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(sandbox.available()) or bool(cgroups.available()),
        reason="hace falta bubblewrap, root y cgroups (v1 o v2)",
    ),
]

LAB = labs.get("01_atencion")
HONEST = ("ana", "beto", "carla")
# Diez procesos de 600 MB (bajo el límite por proceso de 2 GiB): 6 GB juntos.
ATTACK = (
    "import subprocess, sys\n"
    "hijo = 'import time; x = b\"1\" * (600 * 2**20); time.sleep(30)'\n"
    "procesos = [subprocess.Popen([sys.executable, '-c', hijo]) for _ in range(10)]\n"
    "[p.wait() for p in procesos]\n"
)


def _with_attack() -> str:
    notebook = json.loads(LAB.source.read_text())
    notebook["cells"].append(
        {"cell_type": "code", "id": "ataque", "metadata": {}, "source": ATTACK,
         "outputs": [], "execution_count": None}
    )  # fmt: skip
    return json.dumps(notebook)


def _class(root: Path, attacker: bool) -> Path:
    for student in HONEST + (("mallory",) if attacker else ()):
        folder = root / "submitted" / student / LAB.id
        folder.mkdir(parents=True)
        text = _with_attack() if student == "mallory" else LAB.source.read_text()
        (folder / f"{LAB.id}.ipynb").write_text(text)
    (root / "tmp").mkdir()
    return root


def _environment(root: Path) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(root / "tmp"), "JUPYTER_RUNTIME_DIR": str(root / "tmp")}


@contextlib.contextmanager
def own_cgroups(gib: float | None = None):
    """Cgroups propios (memoria, procesos, CPU) para toda la calificación, con ``gib`` GiB
    sin swap si se da: da ``(prefijo de la orden, carpetas)``. Los cgroups de sus núcleos
    nacen dentro, aparte de los de otras calificaciones de la máquina."""
    hierarchy = cgroups.hierarchy()
    name = f"course-prueba-{os.getpid()}-{time.monotonic_ns()}"
    folders = sorted({folder / name for folder in hierarchy.folders.values()})
    for folder in folders:
        folder.mkdir()
    memory = hierarchy.folders["memory"] / name
    if gib is not None and hierarchy.version == 1:
        (memory / "memory.limit_in_bytes").write_text(str(int(gib * 2**30)))
        (memory / "memory.memsw.limit_in_bytes").write_text(str(int(gib * 2**30)))
    elif gib is not None:
        (memory / "memory.max").write_text(str(int(gib * 2**30)))
        (memory / "memory.swap.max").write_text("0")
    join = 'for f; do [ "$f" = -- ] && break; echo $$ > "$f/cgroup.procs"; shift; done; shift'
    prefix = ["/bin/sh", "-c", join + '; exec "$@"', "sh", *map(str, folders), "--"]
    try:
        yield prefix, folders
    finally:  # también lo que dejó una prueba que falló
        nested = [child for folder in folders for child in folder.iterdir() if child.is_dir()]
        cgroups._remove(nested + folders)


def _leftovers(root: Path, folders: list[Path], since: float) -> list:
    """Lo que la calificación dejó: procesos o cgroups de núcleos en sus cgroups, lo que
    quede en su ``TMPDIR`` y carpetas de sockets o cigotos de ``/tmp`` creadas desde
    ``since`` cuyo dueño ya no vive (de otra calificación viva de la máquina, no cuentan)."""
    found = [p for f in folders for p in f.iterdir() if p.is_dir()]
    found += [f / "cgroup.procs" for f in folders if _processes([f])]
    found += list((root / "tmp").iterdir())
    zygotes = Path("/tmp").glob(f"{scratch.PREFIX}*-cigoto-*")
    for path in [*Path("/tmp").glob("nucleo-*"), *zygotes]:
        with contextlib.suppress(OSError):
            if path.stat().st_ctime >= since and _orphan(path):
                found.append(path)
    return found


def _orphan(path: Path) -> bool:
    """¿Murió quien usaba esta carpeta? Un cigoto vivo atiende su socket; la carpeta de
    sockets de un núcleo es del usuario de su proceso de trabajo (``sandbox.kernel_uid``)."""
    if "-cigoto-" in path.name:
        probe = socket.socket(socket.AF_UNIX)
        try:
            probe.connect(str(path / "s"))
            return False
        except OSError:
            return True
        finally:
            probe.close()
    owner = path.stat().st_uid - sandbox.SANDBOX_UID
    live = (int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit())
    return not any(pid % 100_000 == owner for pid in live)


def _full_marks(root: Path) -> dict[str, bool]:
    """¿Tiene cada compañero honrado la nota completa, en su JSON y en gradebook.db?"""
    points = totals(scores(root))
    found = {}
    for student in HONEST:
        result = results.read(root / "autograded", student, LAB.id)
        complete = not result.error and result.auto_points == result.auto_max > 0
        found[student] = complete and points.get(student) == result.auto_max
    return found


def test_many_processes_run_out_of_memory_alone(tmp_path):
    root = _class(tmp_path / "clase", attacker=True)
    since = time.time() - 1
    with own_cgroups(6) as (inside, folders):
        done = subprocess.run(
            inside + cli_grade(root, "--jobs", "2", "--memory", "2", "--timeout", "60"),
            capture_output=True, text=True, timeout=900, env=_environment(root),
        )  # fmt: skip
        left = _leftovers(root, folders, since)
    mallory = results.read(root / "autograded", "mallory", LAB.id)
    assert "sin memoria" in mallory.error, done.stdout + done.stderr
    assert "error del calificador: sin memoria" in done.stdout
    assert all(_full_marks(root).values()), done.stdout
    assert "mallory" not in totals(scores(root))  # sin nota: nunca un cero
    assert not left


def test_killing_the_main_process_leaves_nothing_and_resumes(tmp_path):
    """Muerto el principal, sus procesos de trabajo terminan solos (ningún proceso queda en
    sus cgroups); lo que no alcanzó a borrar lo borra la orden siguiente, que reanuda."""
    root = _class(tmp_path / "clase", attacker=False)
    since = time.time() - 1
    with own_cgroups() as (inside, folders):
        with open(root / "grade.log", "w") as log:
            main = subprocess.Popen(
                inside + cli_grade(root, "--jobs", "2"), stdout=log, stderr=subprocess.STDOUT,
                env=_environment(root),
            )  # fmt: skip
        try:
            deadline = time.monotonic() + 300
            while not list((root / "autograded").glob(f"*/*/{results.RESULT_NAME}")):
                assert main.poll() is None, (root / "grade.log").read_text()
                assert time.monotonic() < deadline, "grade no terminó ninguna entrega en 300 s"
                time.sleep(0.02)
            main.kill()  # solo el proceso principal: sus procesos de trabajo, solos
            main.wait()
            deadline = time.monotonic() + 60
            while _processes(folders) and time.monotonic() < deadline:
                time.sleep(0.2)
            alive = _processes(folders)
        finally:
            for pid in _processes(folders):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        assert not alive, "quedaron procesos vivos tras morir el proceso principal"
        graded = {p: p.read_bytes() for p in (root / "autograded").glob("*/*/*")}
        finished = len({p.parent for p in graded})
        assert 1 <= finished < len(HONEST)

        again = subprocess.run(
            inside + cli_grade(root, "--jobs", "2"), capture_output=True, text=True,
            timeout=600, env=_environment(root),
        )  # fmt: skip
        left = _leftovers(root, folders, since)
    assert again.returncode == 0, again.stdout + again.stderr
    for path, data in graded.items():  # nada de lo calificado se repite
        assert path.read_bytes() == data, f"{path} cambió al reanudar"
    assert f"Reanudo: {finished} de 3" in again.stdout
    assert all(_full_marks(root).values()), again.stdout
    assert not left


def _processes(folders: list[Path]) -> list[int]:
    """Los procesos de ``folders`` y de los cgroups que cuelgan de ellos."""
    return [
        int(pid)
        for folder in folders
        for procs in folder.rglob("cgroup.procs")
        for pid in procs.read_text().split()
    ]
