"""El equipo rojo: entregas hostiles del laboratorio 1 contra ``python -m course grade``.

Una sola calificación por módulo (``grade.run`` con 2 procesos y 10 s por celda) de un
curso temporal con los estudiantes honestos ``ana`` (la solución: 80/80 automático),
``beto`` (la versión sin tocar: 0) y ``mal`` (respuestas equivocadas: 0), más una entrega
por cada ataque de ``tests/attacks.py``, dos zips hostiles (``grade --zip``) y una
carpeta de ejecución del laboratorio 7 con enlaces a ``/dev/zero`` y ``/etc/passwd``.
Después, ``python -m course feedback``.

Para cada ataque se comprueba:

1. la nota nunca pasa de la honesta para las mismas respuestas (0 en blanco, 80 con la
   solución), y la calificación no se pierde (una fila ``error`` solo vale para un
   cuaderno ilegible, con un mensaje claro en español);
2. las notas de los demás no cambian (``calificacion.json`` y ``gradebook.db``);
3. el repositorio (``source/``, ``course/``, ``release/``, ``nbgrader_config.py``,
   ``gradebook.db``), la caché de cursos preparados y ``submitted/`` quedan iguales por
   hash (contenido, dueño y permisos), y la marca del ataque no aparece en ningún archivo
   fuera de su propia entrega (repositorio, caché, el curso, ``$HOME``, ``/tmp``…);
4. no queda vivo ningún proceso con su marca;
5. su página de ``feedback/`` no contiene ninguna línea de solución ni de prueba oculta de
   ningún laboratorio (``tests/leaks.py``) ni de los módulos de referencia que no estuviera
   ya en su propio cuaderno.

Además: una entrega en blanco calificada después sigue sacando 0 (nada persistió), y
dos uniones o dos ``grade`` a la vez no cambian ninguna nota.

La caché del curso va a una carpeta temporal dentro de ``~/.cache`` (``XDG_CACHE_HOME``),
donde la pondría un instructor; los ataques apuntan a esas rutas reales.
"""

import hashlib
import html
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import attacks
import nbformat
import pytest
from leaks import secret_lines

from course import grading, labs
from course.commands import export, feedback, grade
from course.grading import feedback_page, files, results
from course.labs import cache_root

pytestmark = pytest.mark.slow

LAB = attacks.LAB
LAB7 = labs.get("07_multi30k")
HONEST_STUDENTS = {"ana": 80.0, "beto": 0.0, "mal": 0.0}
MARK = re.compile(rb"REDTEAM\{(\w+)\}")
SPANISH_UNREADABLE = ("no es un cuaderno válido", "se rechaza")
# Los archivos del repositorio a los que apuntan los ataques: iguales byte a byte.
TARGETS = (
    "source/01_atencion/01_atencion.ipynb", "release/01_atencion/01_atencion.ipynb",
    "nbgrader_config.py", "course/student/checks.py", "course/__init__.py",
    "course/reference/attention.py",
)  # fmt: skip


@dataclass
class Case:
    """Una entrega hostil: un ataque de ``attacks.py`` o uno de archivos (zip, lab 7)."""

    name: str
    kind: str
    honest: float
    lab: str = LAB.id
    unreadable: bool = False
    min_points: float = 0.0
    spawns: bool = False


CASES = [
    Case(
        a.name, a.kind, a.honest, unreadable=a.unreadable, min_points=a.min_points, spawns=a.spawns
    )
    for a in attacks.ATTACKS
] + [
    Case("zip_bomb", "archivos", 0.0, unreadable=True),
    Case("zip_symlink", "archivos", 0.0, unreadable=True),
    Case("run_folder_links", "archivos", 0.0, lab=LAB7.id),
]


# --- instantáneas -------------------------------------------------------------------------


def _snapshot(*roots: Path, skip: tuple[str, ...] = ("__pycache__",)) -> dict[str, tuple]:
    """Cada entrada bajo ``roots``: hash del contenido (o destino del enlace), dueño y modo."""
    found = {}
    for root in roots:
        if not root.exists() and not root.is_symlink():
            continue
        paths = [root] if not root.is_dir() else sorted(root.rglob("*"))
        for path in paths:
            if any(part in skip for part in path.parts):
                continue
            info = path.lstat()
            if stat.S_ISREG(info.st_mode):
                content = hashlib.sha256(path.read_bytes()).hexdigest()
            elif stat.S_ISLNK(info.st_mode):
                content = "enlace:" + os.readlink(path)
            elif stat.S_ISDIR(info.st_mode):
                content = "carpeta"
            else:
                content = "especial"
            found[str(path)] = (content, info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode))
    return found


def _changes(before: dict, after: dict) -> list[str]:
    return sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))


def _repo_paths() -> list[Path]:
    repo = labs.REPO
    return [repo / "source", repo / "course", repo / "release", repo / "nbgrader_config.py",
            repo / "gradebook.db"]  # fmt: skip


def _marks_in_files(roots: list[Path], max_bytes: int = 64 * 2**20) -> dict[str, set[str]]:
    """Marca del equipo rojo -> archivos que la contienen (en el nombre o en el texto)."""
    found: dict[str, set[str]] = {}
    for root in roots:
        if not root.exists():
            continue
        paths = [root] if root.is_file() else root.rglob("*")
        for path in paths:
            try:
                info = path.lstat()
                names = set(MARK.findall(str(path).encode()))
                if stat.S_ISREG(info.st_mode) and info.st_size <= max_bytes:
                    names |= set(MARK.findall(path.read_bytes()))
            except OSError:
                continue
            for name in names:
                found.setdefault(name.decode(), set()).add(str(path))
    return found


def _marks_in_names(folders: list[Path]) -> dict[str, set[str]]:
    """Archivos con marca directamente en ``folders`` (``/tmp``, ``$HOME``, ``/``…)."""
    found: dict[str, set[str]] = {}
    for folder in folders:
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for path in entries:
            for name in MARK.findall(path.name.encode()):
                found.setdefault(name.decode(), set()).add(str(path))
    return found


def _marked_processes() -> dict[str, list[str]]:
    """Procesos vivos con una marca en su ``argv``."""
    alive: dict[str, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state == "Z":  # ya muerto, a la espera de que su padre lo recoja
            continue
        for name in MARK.findall(cmdline):
            alive.setdefault(name.decode(), []).append(entry.name)
    return alive


# --- secretos -----------------------------------------------------------------------------


def _normal(text: str) -> str:
    return " ".join(text.split())


def _secret() -> set[str]:
    """Líneas de solución y de pruebas ocultas de todos los laboratorios que no publica
    ningún cuaderno de ``release/``, y las líneas de los módulos de referencia que no
    aparecen en nada de lo publicado."""
    released = set()
    for lab in labs.LABS.values():
        for cell in nbformat.read(lab.release, 4).cells:
            released |= {line.strip() for line in cell.source.splitlines()}
    secret = set()
    for lab in labs.LABS.values():
        secret |= secret_lines(c.source for c in nbformat.read(lab.source, 4).cells) - released
    public = set(released)
    package = Path(grading.__file__).parents[1]
    for path in package.rglob("*.py"):
        if "reference" not in path.relative_to(package).parts:
            public |= {line.strip() for line in path.read_text().splitlines()}
    for path in (package / "reference").glob("*.py"):
        if path.name == "__init__.py":  # va en la copia que ve el núcleo: no es secreto
            continue
        for raw in path.read_text().splitlines():
            line = raw.strip()
            if len(line) >= 16 and not line.startswith("#") and line not in public:
                secret.add(line)
    return {_normal(line) for line in secret}


def _visible(page: str) -> set[str]:
    """Las líneas que ve quien abre la página (sin etiquetas, estilos ni guiones)."""
    page = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.S | re.I)
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    return {_normal(line) for line in text.splitlines()}


def _own_lines(path: Path | None) -> set[str]:
    """Las líneas que la entrega ya traía (lo suyo se le puede enseñar)."""
    if path is None or not path.is_file():
        return set()
    text = path.read_text(errors="replace")
    try:
        sources = [c.source for c in nbformat.reads(text, 4).cells]
    except Exception:  # noqa: BLE001 (un cuaderno dañado: su texto tal cual)
        sources = [text]
    return {_normal(line) for source in sources for line in source.splitlines()}


# --- entregas de archivos -----------------------------------------------------------------


def _zip_bomb(path: Path) -> None:
    """Un zip de 2 MB que dice y da 2 GiB de ceros como cuaderno de ``zip_bomb``."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(bytes(files.MIB)) + compressor.flush(zlib.Z_FULL_FLUSH)
    deflated = block * 2048 + compressor.flush()
    name = f"zip_bomb/{LAB.id}/{LAB.id}.ipynb".encode()
    size = 2048 * files.MIB
    fields = (20, 0, zipfile.ZIP_DEFLATED, 0, 0, 0, len(deflated), size & 0xFFFFFFFF, len(name))
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, *fields, 0) + name + deflated
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, *fields, 0, 0, 0, 0, 0, 0) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local), 0)
    path.write_bytes(local + central + end)


def _zip_links(path: Path) -> None:
    """Un cuaderno que es un enlace a /etc/passwd y entradas que salen de la carpeta."""
    with zipfile.ZipFile(path, "w") as bundle:
        link = zipfile.ZipInfo(f"zip_symlink/{LAB.id}/{LAB.id}.ipynb")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        bundle.writestr(link, "/etc/passwd")
        for name in ("../../REDTEAM{zip_symlink}.ipynb", "/tmp/REDTEAM{zip_symlink}.ipynb",
                     f"zip_symlink/{LAB.id}/../../../REDTEAM{{zip_symlink}}/x.ipynb"):  # fmt: skip
            bundle.writestr(name, "{}")


def _run_folder(root: Path) -> None:
    """Lab 7 en blanco con su ejecución completa llena de enlaces y una FIFO."""
    folder = root / "submitted" / "run_folder_links" / LAB7.id
    folder.mkdir(parents=True)
    shutil.copyfile(LAB7.release, folder / f"{LAB7.id}.ipynb")
    run = folder / LAB7.outputs
    (run / "decodificado").mkdir(parents=True)
    (run / "best.pt").symlink_to("/dev/zero")
    (run / "traducciones.txt").symlink_to("/etc/passwd")
    (run / "decodificado" / "test.es").symlink_to("/etc/shadow")
    (run / "sistema").symlink_to("/etc", target_is_directory=True)
    os.mkfifo(run / "tuberia")


# --- la campaña ---------------------------------------------------------------------------


@dataclass
class Campaign:
    root: Path
    status: int
    seconds: float
    results: dict[str, results.Result]
    gradebook: dict[str, float]
    changed_repo: list[str]
    changed_cache: list[str]
    changed_submitted: list[str]
    marks: dict[str, set[str]]
    alive: dict[str, list[str]]
    pages: dict[str, str]
    secret: set[str]
    submissions: dict[str, Path] = field(default_factory=dict)


@pytest.fixture(scope="module")
def cache_home():
    """Una caché de curso nueva dentro de ``~/.cache``, donde la tendría el instructor."""
    base = Path.home() / ".cache"
    base.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="transformer-es-equipo-rojo-", dir=base))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(folder))
        yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def campaign(cache_home, tmp_path_factory) -> Campaign:
    root = tmp_path_factory.mktemp("curso-rojo")
    for lab in (LAB, LAB7):
        grading.prepared_course(lab)
    context = attacks.Context(labs.REPO, cache_root(), root, Path.home())
    submitted = root / "submitted"
    submissions = {}

    def submit(student: str, text: str) -> None:
        folder = submitted / student / LAB.id
        folder.mkdir(parents=True)
        submissions[student] = folder / f"{LAB.id}.ipynb"
        submissions[student].write_text(text)

    wrong = attacks.base_notebook("blanco")
    attacks.wrong_answers(wrong)
    submit("ana", nbformat.writes(attacks.base_notebook("solucion")))
    submit("beto", LAB.release.read_text())
    submit("mal", nbformat.writes(wrong))
    for attack in attacks.ATTACKS:
        submit(attack.name, attacks.build(attack, context))
    _run_folder(root)
    submissions["run_folder_links"] = submitted / "run_folder_links" / LAB7.id / f"{LAB7.id}.ipynb"
    archives = tmp_path_factory.mktemp("zips")
    zips = [archives / "bomba.zip", archives / "enlaces.zip"]
    _zip_bomb(zips[0])
    _zip_links(zips[1])

    cache = cache_root() / "grading"
    before = (_snapshot(*_repo_paths()), _snapshot(cache), _snapshot(submitted))
    start = time.perf_counter()
    status = grade.run(root=root, zips=[str(z) for z in zips], jobs=2, timeout=10, progress=False)
    seconds = time.perf_counter() - start
    deadline = time.monotonic() + 5
    while _marked_processes() and time.monotonic() < deadline:
        time.sleep(0.2)
    alive = _marked_processes()
    after = (_snapshot(*_repo_paths()), _snapshot(cache), _snapshot(submitted))

    start = time.perf_counter()
    assert feedback.run(root=root) == 0
    feedback_seconds = time.perf_counter() - start
    marks = _marks_in_files([*_repo_paths(), cache_home, root, Path.home() / ".config"])
    extra = _marks_in_names(
        [Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path("/run"), Path("/"), Path.home(),
         Path.home() / ".cache", labs.REPO, root.parent]
    )  # fmt: skip
    for name, paths in extra.items():
        marks.setdefault(name, set()).update(paths)
    found = {r.student: r for r in results.read_all(root / "autograded")}
    book = {row["student_id"]: float(row["score"]) for row in export.rows(root)
            if row["assignment"] == LAB.id}  # fmt: skip
    pages = {path.parts[-3]: path.read_text() for path in (root / "feedback").glob("*/*/*.html")}
    print(
        f"\nequipo rojo: {len(found)} entregas calificadas en {seconds:.0f} s;"
        f" devoluciones en {feedback_seconds:.0f} s"
    )
    return Campaign(
        root, status, seconds, found, book,
        _changes(before[0], after[0]), _changes(before[1], after[1]), _changes(before[2], after[2]),
        marks, alive, pages, _secret(), submissions,
    )  # fmt: skip


def _own_folder(root: Path, student: str, path: str) -> bool:
    """¿Está ``path`` dentro de lo que es de ``student`` (su entrega, su calificación)?"""
    return any(
        Path(path).is_relative_to(root / part / student)
        for part in ("submitted", "autograded", "feedback")
    )


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_attack_gains_nothing_and_harms_no_one(campaign, case):
    result = campaign.results.get(case.name)
    assert result is not None, f"{case.name}: no hay calificacion.json"
    assert result.lab == case.lab

    # (1) nunca más que la nota honesta; la calificación no se pierde
    if case.unreadable:
        assert result.error and any(s in result.error for s in SPANISH_UNREADABLE), result.error
    else:
        assert not result.error, f"{case.name}: calificación perdida: {result.error}"
        assert result.auto_points <= case.honest, (
            f"{case.name}: {result.auto_points} puntos con respuestas que valen {case.honest}"
            f" ({[(c['grade_id'], c['points']) for c in result.cells if c['points']]})"
        )
        assert result.auto_points >= case.min_points, (
            f"{case.name}: el resto del cuaderno no se calificó ({result.auto_points} puntos;"
            f" {[(c['grade_id'], c['message'][:80]) for c in result.cells if c['message']]})"
        )
        if case.name in campaign.gradebook:
            assert campaign.gradebook[case.name] <= case.honest

    # (2) las notas de los demás
    for student, points in HONEST_STUDENTS.items():
        other = campaign.results[student]
        assert not other.error and other.auto_points == points, (student, other.auto_points)
        assert campaign.gradebook[student] == points, (student, campaign.gradebook[student])

    # (3) repositorio, caché y submitted/ iguales; su marca en ningún sitio ajeno
    assert not campaign.changed_cache, f"caché de calificación cambiada: {campaign.changed_cache}"
    assert not campaign.changed_submitted, f"submitted/ cambiada: {campaign.changed_submitted}"
    mark = attacks.marker(case.name)
    mine = [p for p in campaign.changed_repo if mark in p or _has_mark(p, case.name)]
    assert not mine, f"{case.name} cambió el repositorio: {mine}"
    targets = {str(labs.REPO / t) for t in TARGETS} & set(campaign.changed_repo)
    assert not targets, f"archivos atacados del repositorio cambiados: {sorted(targets)}"
    foreign = sorted(
        p for p in campaign.marks.get(case.name, ()) if not _own_folder(campaign.root, case.name, p)
    )
    assert not foreign, f"{case.name} escribió fuera de su entrega: {foreign}"

    # (4) ningún proceso suyo vivo
    assert case.name not in campaign.alive, f"procesos vivos: {campaign.alive[case.name]}"

    # (5) ni soluciones ni pruebas ocultas en su devolución
    page = campaign.pages.get(case.name, "")
    if not case.unreadable:
        assert page, f"{case.name}: sin página de devolución"
    text = _visible(page)
    own = _own_lines(campaign.submissions.get(case.name))
    leaked = sorted((campaign.secret - own) & text)
    assert not leaked, f"{case.name}: {len(leaked)} líneas secretas en feedback/: {leaked[:5]}"
    assert not any("root:x:0:0" in line for line in text)


def _has_mark(path: str, name: str) -> bool:
    try:
        return attacks.marker(name).encode() in Path(path).read_bytes()
    except OSError:
        return False


def test_the_repository_is_unchanged(campaign):
    """Lo que atacan las entregas queda igual; en el resto del árbol, ningún cambio lleva
    una marca (otras personas pueden estar editando el repositorio a la vez)."""
    targets = {str(labs.REPO / t) for t in TARGETS}
    assert not targets & set(campaign.changed_repo), sorted(targets & set(campaign.changed_repo))
    marked = [p for p in campaign.changed_repo if MARK.search(p.encode()) or _any_mark(p)]
    assert not marked, marked


def _any_mark(path: str) -> bool:
    try:
        return MARK.search(Path(path).read_bytes()) is not None
    except OSError:
        return False


def test_no_process_and_no_mark_survives_at_all(campaign):
    assert not campaign.alive
    strays = {
        name: sorted(p for p in paths if not _own_folder(campaign.root, name, p))
        for name, paths in campaign.marks.items()
    }
    assert not {name: paths for name, paths in strays.items() if paths}


def test_honest_students_pages_hold_no_secret_either(campaign):
    for student in HONEST_STUDENTS:
        text = _visible(campaign.pages[student])
        own = _own_lines(campaign.submissions[student])
        assert not (campaign.secret - own) & text, student


def test_the_leak_scan_would_see_a_printed_secret(campaign):
    """La comprobación (5) funciona: una línea de solución de otro laboratorio impresa en
    una página se detecta aunque pase por el HTML de nbconvert."""
    line = sorted(secret_lines(c.source for c in nbformat.read(LAB7.source, 4).cells))[0]
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("print(x)", outputs=[
            nbformat.v4.new_output("stream", name="stdout", text=f"{line}\n")])]
    )  # fmt: skip
    page = feedback_page.render(campaign.results["beto"], notebook, set())
    assert _normal(line) in _visible(page)


def test_the_process_and_file_scans_see_a_marked_leftover(tmp_path):
    """Las comprobaciones (3) y (4) funcionan: un proceso y un archivo con marca se ven."""
    (tmp_path / "x.txt").write_text("basura REDTEAM{sonda} basura")
    (tmp_path / "REDTEAM{sonda2}").write_text("")
    leftover = subprocess.Popen(["sh", "-c", "sleep 30", "REDTEAM{sonda}"])
    try:
        time.sleep(0.2)
        assert str(leftover.pid) in _marked_processes().get("sonda", [])
    finally:
        leftover.kill()
        leftover.wait()
    assert "sonda" not in _marked_processes()
    assert _marks_in_files([tmp_path]) == {
        "sonda": {str(tmp_path / "x.txt")}, "sonda2": {str(tmp_path / "REDTEAM{sonda2}")}
    }  # fmt: skip


def test_a_blank_notebook_graded_afterwards_still_gets_zero(campaign):
    graded = grading.grade_notebook(LAB.release, LAB, timeout=10)
    assert graded.auto_points == 0
    assert all(cell.points == 0 for cell in graded.cells if cell.points is not None)


def _merge_in_subprocess(root: Path) -> subprocess.Popen:
    code = (
        "import sys\nfrom pathlib import Path\nfrom course.commands import grade\n"
        "sys.exit(grade.run(root=Path(sys.argv[1]), merge_only=True, progress=False))"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code, str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, cwd=root,
    )  # fmt: skip


def test_two_merges_at_once_keep_every_grade_and_both_backups(campaign):
    root = campaign.root
    backups = set(root.glob("gradebook.db.*.bak"))
    first, second = _merge_in_subprocess(root), _merge_in_subprocess(root)
    outs = [p.communicate(timeout=120) for p in (first, second)]
    assert first.returncode == second.returncode == campaign.status, outs
    new = set(root.glob("gradebook.db.*.bak")) - backups
    assert len(new) == 2, sorted(map(str, new))
    book = {
        r["student_id"]: float(r["score"]) for r in export.rows(root) if r["assignment"] == LAB.id
    }
    assert book == campaign.gradebook


def test_two_grade_runs_at_once_agree(campaign, tmp_path):
    """Dos ``grade`` sobre el mismo curso casi a la vez: ambos terminan, cada uno escribe
    sus resultados y el libro de notas tiene las notas honestas."""
    for student in ("ana", "beto"):
        folder = tmp_path / "submitted" / student / LAB.id
        folder.mkdir(parents=True)
        shutil.copyfile(campaign.submissions[student], folder / f"{LAB.id}.ipynb")
    code = (
        "import sys\nfrom pathlib import Path\nfrom course.commands import grade\n"
        "sys.exit(grade.run(root=Path(sys.argv[1]), jobs=1, timeout=10, progress=False))"
    )
    runs = []
    for _ in range(2):
        runs.append(subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        ))  # fmt: skip
        time.sleep(0.5)
    outs = [p.communicate(timeout=300) for p in runs]
    assert [p.returncode for p in runs] == [0, 0], outs
    found = {r.student: r.auto_points for r in results.read_all(tmp_path / "autograded")}
    assert found == {"ana": 80, "beto": 0}
    book = {r["student_id"]: float(r["score"]) for r in export.rows(tmp_path)}
    assert book == {"ana": 80, "beto": 0}


def test_figures_for_reliability(campaign):
    """Las cifras de docs/reliability.md (se imprimen con ``-s``)."""
    kinds: dict[str, int] = {}
    for case in CASES:
        kinds[case.kind] = kinds.get(case.kind, 0) + 1
    inflated = [c.name for c in CASES if not campaign.results[c.name].error
                and campaign.results[c.name].auto_points > c.honest]  # fmt: skip
    lost = [c.name for c in CASES if campaign.results[c.name].error and not c.unreadable]
    print(f"\nataques por clase: {kinds} (total {len(CASES)})")
    print(f"notas infladas: {len(inflated)}; notas perdidas: {len(lost)}")
    print(f"calificación de {len(campaign.results)} entregas: {campaign.seconds:.0f} s")
    assert len(CASES) >= 60
