"""El aula de verdad (``tests/hub_class.py``) y estudiantes hostiles con cuentas reales.

Un profesor y dos estudiantes (``ana…`` y ``beto…``) creados por la prueba y borrados al
terminar. Los ataques los hace la cuenta de ana (``runuser``), como haría desde una
terminal o un cuaderno de su servidor: mismo usuario, mismos permisos.
"""

import hashlib
import json
import shlex
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest
from hub_class import LAB, RESTARTED, hub_class, skip_without_aula

from course import labs
from course.aula import disks, envs

pytestmark = pytest.mark.slow

skip_without_aula()


@pytest.fixture(scope="module")
def hub():
    with hub_class() as made:
        yield made


@pytest.fixture(scope="module")
def submitted(hub):
    """beto descarga y entrega el laboratorio; da su carpeta de ``inbound/`` (la ve root)."""
    beto = hub.students[1]
    done = hub.run_as(beto, f"nbgrader fetch_assignment {LAB} && nbgrader submit {LAB}")
    assert done.returncode == 0, done.stdout + done.stderr
    inbound = hub.aula.exchange / "transformer-es" / "inbound"
    (folder,) = [path for path in inbound.iterdir() if path.name.startswith(f"{beto}+{LAB}+")]
    return folder


def digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_students_log_in_to_their_own_server_with_limits(hub):
    """Cada estudiante entra con su contraseña y su servidor corre en el entorno de los
    estudiantes, en su grupo de memoria y con tope de procesos."""
    ana = hub.students[0]
    hub.spawn(ana)
    server = subprocess.run(
        ["pgrep", "-u", ana, "-f", "jupyterhub-singleuser"], capture_output=True, text=True
    ).stdout.split()[0]
    command = Path(f"/proc/{server}/cmdline").read_bytes().split(b"\0")
    assert command[1].decode() == str(hub.aula.student_env / "bin" / "jupyterhub-singleuser")
    assert f"aula/{ana}" in Path(f"/proc/{server}/cgroup").read_text()
    limits = Path(f"/proc/{server}/limits").read_text()
    assert [line.split()[2] for line in limits.splitlines() if "Max processes" in line] == ["512"]


def test_a_kernel_that_fills_memory_dies_alone(hub):
    """En un núcleo de su servidor, ana llena la memoria (1 GiB por usuario en el aula de
    pruebas): muere ese núcleo y se reinicia; el servidor de beto y el hub ni lo notan."""
    ana, beto = hub.students
    beto_client = hub.spawn(beto)
    opener = hub.spawn(ana)
    token = hub.token(ana, opener)
    kernel = hub.kernel(ana, token)
    assert hub.execute(ana, token, kernel, "print(6 * 7)") == "42\n"
    assert RESTARTED in hub.execute(ana, token, kernel, HOG)
    with beto_client.open(f"{hub.url}/user/{beto}/lab", timeout=30) as page:
        assert page.status == 200
    time.sleep(5)
    assert hub.execute(ana, token, kernel, "print(6 * 7)") == "42\n"


def test_restart_keeps_users_and_sessions(hub):
    """Parar y arrancar no pierde nada: la sesión de antes sigue valiendo (mismo secreto de
    las cookies y misma base de datos)."""
    from course.aula import service

    beto = hub.students[1]
    client = hub.session(beto)
    service.stop(hub.aula)
    service.start(hub.aula)
    with client.open(f"{hub.url}/hub/home", timeout=30) as page:
        assert page.url.endswith("/hub/home"), page.url


ATTACKS = {
    "listar inbound": "ls {inbound}",
    "listar feedback": "ls {feedback}",
    "leer": "cat {folder}/{lab}.ipynb",
    "listar la carpeta": "ls {folder}",
    "vaciar": ": > {folder}/{lab}.ipynb || (rm -f {folder}/{lab}.ipynb && : > {folder}/{lab}.ipynb)",
    "reemplazar": "echo '{{}}' > ~/x.ipynb && mv -f ~/x.ipynb {folder}/{lab}.ipynb",
    "borrar archivos": "rm -f {folder}/{lab}.ipynb",
    "borrar la carpeta": "rm -rf {folder}",
    "renombrar la carpeta": "mv {folder} {inbound}/otra",
    "renombrar el curso": "mv {exchange}/transformer-es {exchange}/otro",
}


@pytest.mark.parametrize("attack", ATTACKS)
def test_classmate_cannot_touch_a_submission(hub, submitted, attack):
    """ana sabe el nombre de la carpeta de beto (lo peor que puede pasar) y aun así no la
    lista, ni la lee, ni la vacía, ni la cambia, ni la borra, ni la renombra."""
    before = digest(submitted)
    exchange = hub.aula.exchange
    paths = {
        "folder": submitted, "exchange": exchange,
        "inbound": exchange / "transformer-es" / "inbound",
        "feedback": exchange / "transformer-es" / "feedback",
    }  # fmt: skip
    command = ATTACKS[attack].format(lab=LAB, **{k: shlex.quote(str(v)) for k, v in paths.items()})
    tried = hub.run_as(hub.students[0], command)
    assert tried.returncode != 0, f"ana pudo «{attack}»: {tried.stdout[:300]}"
    assert (exchange / "transformer-es").is_dir()
    assert digest(submitted) == before


def test_forged_folder_does_not_hide_the_real_submission(hub, submitted):
    """ana crea en ``inbound/`` una carpeta con el nombre de beto y una hora posterior:
    el profesor recoge la de beto."""
    ana, beto = hub.students
    inbound = hub.aula.exchange / "transformer-es" / "inbound"
    forged = inbound / f"{beto}+{LAB}+2099-01-01 00:00:00.000000 UTC+falsificada00"
    made = hub.run_as(
        ana,
        f"mkdir '{forged}' && echo '{{\"cells\": []}}' > '{forged}/{LAB}.ipynb'"
        f" && echo '2099-01-01 00:00:00.000000 UTC' > '{forged}/timestamp.txt'",
    )
    assert made.returncode == 0, made.stderr
    nbgrader = hub.aula.instructor_env / "bin" / "nbgrader"
    collected = hub.run_as(
        hub.instructor, f"cd {hub.course} && {nbgrader} collect {LAB}", env="profesor"
    )
    assert collected.returncode == 0, collected.stdout + collected.stderr
    notebook = Path(hub.course) / "submitted" / beto / LAB / f"{LAB}.ipynb"
    assert notebook.read_bytes() == (submitted / f"{LAB}.ipynb").read_bytes()


SCAN = textwrap.dedent(
    """
    import json, os, re, stat, sys
    secrets = re.compile("|".join(re.escape(s) for s in json.load(sys.stdin)))
    seen, hits = set(), []
    for root in sys.argv[1:]:
        for folder, _, names in os.walk(root):
            for name in names:
                path = os.path.join(folder, name)
                try:
                    info = os.lstat(path)
                    if not stat.S_ISREG(info.st_mode) or info.st_size > 2_000_000:
                        continue
                    if (info.st_dev, info.st_ino) in seen:
                        continue
                    seen.add((info.st_dev, info.st_ino))
                    with open(path, "rb") as handle:
                        text = handle.read().decode("utf-8", "ignore")
                except OSError:
                    continue
                found = secrets.search(text)
                if found:
                    hits.append([path, found.group()])
    print(json.dumps(hits))
    """
)


def secret_lines(notebook: Path) -> list[str]:
    """Líneas (de 16 caracteres o más) de los bloques de solución y de pruebas ocultas."""
    lines, inside = [], False
    for cell in json.loads(notebook.read_text())["cells"]:
        for line in "".join(cell["source"]).splitlines():
            text = line.strip()
            if text.startswith(("### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS")):
                inside = True
            elif text.startswith("### END"):
                inside = False
            elif inside and len(text) >= 16:
                lines.append(text)
    return lines


def shared(lines: list[str], folder: Path) -> set[str]:
    """Las ``lines`` que también están en ``folder``: en los paquetes de terceros
    (``if mask is not None:`` está en matplotlib) o en el paquete que el estudiante tiene
    a propósito (``from course import mistakes``, los mensajes de ``checks``). Que ese
    paquete no trae la referencia lo comprueban el ``import`` de abajo y ``test_aula.py``."""
    patterns = "".join(f"{line}\n" for line in lines)
    found = subprocess.run(
        ["grep", "-rhoF", "-f", "/dev/stdin", str(folder)],
        input=patterns, capture_output=True, text=True,
    )  # fmt: skip
    return set(found.stdout.splitlines())


def test_student_reads_no_answer_and_no_classmate_work(hub, submitted):
    """Todo lo que la cuenta de ana puede leer (carpetas personales, el aula con sus
    entornos y el intercambio, y /srv; el repositorio desde el que se preparó lo
    cuida quien lo instala: ``aula preparar`` avisa si es legible) no
    tiene ninguna línea de solución o de prueba oculta del laboratorio abierto ni lo que
    beto escribió; y el paquete de los estudiantes no trae la referencia."""
    ana, beto = hub.students
    mark = f"apuntes privados de {beto} 7c1e"
    wrote = hub.run_as(beto, f"echo '{mark}' > ~/{LAB}/apuntes.txt")
    assert wrote.returncode == 0, wrote.stderr
    source = labs.REPO / "source" / LAB / f"{LAB}.ipynb"
    release = (labs.REPO / "release" / LAB / f"{LAB}.ipynb").read_text()
    secrets = [line for line in secret_lines(source) if line not in release]
    package = envs.site_packages(hub.aula.student_env) / "course"
    generic = shared(secrets, hub.aula.base / "lib") | shared(secrets, package)
    secrets = [line for line in secrets if line not in generic] + [mark]
    assert len(secrets) > 20
    roots = ["/home", "/srv", str(hub.aula.root)]
    scan = hub.run_as(
        ana, f"python -c {shlex.quote(SCAN)} {' '.join(roots)}", input=json.dumps(secrets)
    )
    assert scan.returncode == 0, scan.stderr
    assert json.loads(scan.stdout) == []
    reference = hub.run_as(ana, "python -c 'import course.reference.attention'")
    assert "ModuleNotFoundError" in reference.stderr


HOG = "b = b'x' * (2 << 30); print('sobrevivió')"
FORKS = textwrap.dedent(
    """
    import os, time
    made = 0
    try:
        while made < 400:
            if os.fork() == 0:
                time.sleep(3); os._exit(0)
            made += 1
    except OSError:
        pass
    print(made)
    """
)
BIG_FILE = textwrap.dedent(
    """
    import signal
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        with open("grande.bin", "wb") as out:
            out.write(b"0" * (64 << 20))
        print("escrito")
    except OSError as error:
        print(error.errno)
    """
)


def test_spawner_bounds_memory_processes_and_file_size(hub, tmp_path):
    """Lo que el hub pone a cada servidor (``ClassSpawner.make_preexec_fn``): ana agota su
    memoria y solo muere su proceso; beto, a la vez, ni lo nota; sus procesos y el
    tamaño de un archivo tienen tope."""
    from course.aula.spawner import ClassSpawner

    ana, beto = hub.students
    spawner = ClassSpawner(
        memory_mb=256, max_processes=64, max_file_mb=16, student_env=str(hub.aula.student_env)
    )
    python = str(hub.aula.student_env / "bin" / "python")

    def run(user, code, **kwargs):
        home = Path(f"/home/{user}")
        return subprocess.Popen(
            [python, "-c", code], preexec_fn=spawner.make_preexec_fn(user), cwd=home,
            env={"HOME": str(home), "PATH": "/usr/bin:/bin"}, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, **kwargs,
        )  # fmt: skip

    calm = run(beto, "import time; b = bytearray(100 << 20); time.sleep(4); print('bien')")
    hog = run(ana, HOG)
    assert hog.wait(60) == -signal.SIGKILL
    assert calm.communicate(timeout=60)[0].strip() == "bien"
    forks = run(ana, FORKS).communicate(timeout=60)[0]
    assert 0 < int(forks) < 64
    written = run(ana, BIG_FILE).communicate(timeout=60)[0].strip()
    assert written == "27"  # EFBIG
    (Path(f"/home/{ana}") / "grande.bin").unlink()


FILL = textwrap.dedent(
    """
    import json, os
    written = {}
    for folder in [os.path.expanduser("~"), *FOLDERS]:
        path, total = os.path.join(folder, "relleno.bin"), 0
        try:
            with open(path, "wb", buffering=0) as out:
                while total < 1024:
                    out.write(b"0" * (1 << 20))
                    total += 1
            written[folder] = [total, 0]
        except OSError as error:
            written[folder] = [total, error.errno]
        os.remove(path)
    print(json.dumps(written))
    """
)


def test_a_student_who_fills_her_disk_reaches_no_one(hub, submitted):
    """Desde un núcleo de su servidor, ana llena su carpeta, ``/tmp`` y ``/var/tmp``: todo
    es su disco (256 MiB en el aula de pruebas) y cada escritura para ahí con «No space
    left on device»; a la vez, beto escribe en su carpeta, vuelve a entregar y el profesor
    recoge la entrega nueva. (``/var/tmp`` no se tapa si el aula está dentro, como la de
    pruebas en ``/var/tmp/course-aula-pruebas``: entonces no se llena.)"""
    ana, beto = hub.students
    folders = disks.shared_tmp(hub.aula.root)
    assert "/tmp" in folders
    opener = hub.spawn(ana)
    token = hub.token(ana, opener)
    kernel = hub.kernel(ana, token)
    shown = hub.execute(ana, token, kernel, FILL.replace("FOLDERS", repr(folders)))
    written = json.loads(shown)
    assert [errno for _, errno in written.values()] == [28] * (1 + len(folders)), shown  # ENOSPC
    assert max(total for total, _ in written.values()) <= 256, shown
    assert hub.execute(ana, token, kernel, "print(6 * 7)") == "42\n"
    again = hub.run_as(beto, f"echo 'nota nueva' > ~/{LAB}/nota.txt && nbgrader submit {LAB}")
    assert again.returncode == 0, again.stdout + again.stderr
    nbgrader = hub.aula.instructor_env / "bin" / "nbgrader"
    collected = hub.run_as(
        hub.instructor, f"cd {hub.course} && {nbgrader} collect --update {LAB}", env="profesor"
    )
    assert collected.returncode == 0, collected.stdout + collected.stderr
    assert (Path(hub.course) / "submitted" / beto / LAB / "nota.txt").read_text() == "nota nueva\n"
