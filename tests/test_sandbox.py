"""El aislamiento del núcleo (``course.grading.sandbox``), probado desde dentro.

Cada prueba ejecuta un pequeño programa hostil con la misma orden bwrap que recibe el
núcleo de una entrega y comprueba lo que no debe poder hacer. Las de la orden ``grade``
y ``check`` sin bubblewrap sustituyen ``sandbox.available`` por un motivo falso.
"""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from course import grading, labs
from course.commands import check, grade
from course.grading import sandbox
from course.labs import CourseError, cache_root

needs_bwrap = pytest.mark.skipif(
    bool(sandbox.available()), reason=f"sin aislamiento aquí: {sandbox.available()}"
)


def _box(tmp_path: Path, lab_id: str = "01_atencion") -> sandbox.Box:
    lab = labs.get(lab_id)
    runtime = tmp_path / "nucleo"
    runtime.mkdir()
    uid = 200_000 + os.getpid() % 100_000 if os.geteuid() == 0 else None
    if uid is not None:
        os.chown(runtime, uid, uid)
    package = sandbox.course_copy(lab, tmp_path / "course")
    return sandbox.Box(lab=lab, runtime=runtime, package=package, uid=uid)


def _inside(box: sandbox.Box, code: str) -> subprocess.CompletedProcess:
    program = [sys.executable, "-c", textwrap.dedent(code)]
    return subprocess.run(box.command(program), capture_output=True, text=True, timeout=120)


def test_the_course_copy_has_no_answers_for_the_lab_nor_later(tmp_path):
    copy = sandbox.course_copy(labs.get("04_multicabeza"), tmp_path)
    references = {p.stem for p in (copy / "reference").glob("*.py")}
    assert {"attention", "normalization", "positional"} <= references
    assert not references & {"multihead", "layers", "model", "training", "translation"}
    assert sorted(p.name for p in (copy / "grading").iterdir()) == ["__init__.py", "agent.py"]


def test_the_command_mounts_neither_the_root_nor_the_repository(tmp_path):
    words = _box(tmp_path).command(["python"])
    mounted = {words[i + 1] for i, word in enumerate(words) if word in ("--ro-bind", "--bind")}
    assert "/" not in mounted
    for path in (labs.REPO, labs.REPO.parent, cache_root(), Path.home(), Path("/tmp")):
        assert str(path.resolve()) not in mounted
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent", "--clearenv"):
        assert flag in words


@pytest.fixture
def distant_copy():
    """Otra copia del curso lejos del repositorio (en CI apareció una fuera de su carpeta)."""
    folder = Path(f"/var/tmp/copia-lejana-{os.getpid()}")
    yield _plant_reference(folder)
    shutil.rmtree(folder)


@needs_bwrap
def test_the_kernel_sees_only_the_system_python_and_its_own_folders(tmp_path, distant_copy):
    python = {Path(p).resolve().parts[1] for p in (sys.prefix, sys.base_prefix)}
    done = _inside(
        _box(tmp_path),
        f"""
        import os
        print(os.path.exists({str(distant_copy)!r}))
        print(*sorted(os.listdir("/")))
        """,
    )
    assert done.returncode == 0, done.stderr
    seen, root = done.stdout.splitlines()
    assert seen == "False"
    system = {Path(name).name for name in sandbox.SYSTEM}
    mine = {"dev", "proc", "tmp", labs.REPO.resolve().parts[1], Path(tmp_path).parts[1]}
    assert set(root.split()) <= system | mine | python, root


def _plant_reference(folder: Path) -> Path:
    """Una copia legible por cualquiera de ``course/reference/attention.py`` bajo ``folder``."""
    reference = folder / "course" / "reference"
    reference.mkdir(parents=True)
    target = reference / "attention.py"
    shutil.copyfile(labs.REPO / "course" / "reference" / "attention.py", target)
    for path in (folder, folder / "course", reference):
        path.chmod(0o755)
    target.chmod(0o644)
    return target


@pytest.fixture
def sibling_copy():
    """Otra copia del curso junto al repositorio (la del curso pasado, una rama…)."""
    folder = labs.REPO.parent / f"copia-del-curso-{os.getpid()}"
    yield _plant_reference(folder)
    shutil.rmtree(folder)


@needs_bwrap
def test_a_copy_of_the_course_next_to_the_repository_is_hidden(tmp_path, sibling_copy):
    done = _inside(
        _box(tmp_path),
        f"""
        import os, course
        print(os.path.exists({str(sibling_copy)!r}), "course.grading" in dir(course))
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]


@pytest.fixture
def home_secret(monkeypatch):
    """Un $HOME legible por cualquiera con un archivo del profesor: solo el aislamiento lo
    oculta (el de root, 0700, ya lo protegerían los permisos)."""
    home = Path(f"/var/tmp/curso-home-{os.getpid()}")
    home.mkdir(mode=0o755)
    secret = home / "secreto.txt"
    secret.write_text("clave")
    secret.chmod(0o644)
    monkeypatch.setenv("HOME", str(home))
    yield secret
    shutil.rmtree(home)


@needs_bwrap
def test_the_kernel_sees_no_answers_no_network_and_a_read_only_system(tmp_path, home_secret):
    done = _inside(
        _box(tmp_path),
        f"""
        import importlib, os, socket
        def fails(action):
            try:
                action()
            except Exception:
                return True
            return False
        repo = {str(labs.REPO)!r}
        print("fuente", fails(lambda: open(repo + "/source/01_atencion/01_atencion.ipynb").read()))
        print("cache", fails(lambda: os.listdir({str(cache_root())!r} + "/grading")) or not os.listdir({str(cache_root())!r}))
        print("home", fails(lambda: open({str(home_secret)!r}).read()))
        print("referencia", fails(lambda: importlib.import_module("course.reference.attention")))
        print("red", fails(lambda: socket.create_connection(("1.1.1.1", 80), timeout=2)))
        print("raiz", fails(lambda: open("/escrito-por-el-nucleo", "w")))
        print("curso", fails(lambda: open(repo + "/course/student/checks.py", "a")))
        open("propio.txt", "w").write("ok")
        print("trabajo", open("propio.txt").read() == "ok")
        """,
    )
    assert done.returncode == 0, done.stderr
    answers = dict(line.split() for line in done.stdout.splitlines())
    assert answers == dict.fromkeys(
        ("fuente", "cache", "home", "referencia", "red", "raiz", "curso", "trabajo"), "True"
    )


@needs_bwrap
def test_earlier_labs_reference_stays_importable(tmp_path):
    done = _inside(_box(tmp_path, "02_normalizacion"), "import course.reference.attention")
    assert done.returncode == 0, done.stderr


@needs_bwrap
def test_a_detached_process_dies_with_the_sandbox(tmp_path):
    marker = f"marca-aislamiento-{os.getpid()}"
    done = _inside(
        _box(tmp_path),
        f"""
        import subprocess
        subprocess.Popen(["sleep", "300", {marker!r}], start_new_session=True)
        """,
    )
    assert done.returncode == 0, done.stderr
    alive = [
        p for p in Path("/proc").iterdir()
        if p.name.isdigit() and marker in _cmdline(p)
    ]  # fmt: skip
    assert not alive


def _cmdline(process: Path) -> str:
    try:
        return (process / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_grade_refuses_without_sandbox_and_names_the_flag(tmp_path, monkeypatch):
    lab = labs.get("01_atencion")
    folder = tmp_path / "submitted" / "ana" / lab.id
    folder.mkdir(parents=True)
    shutil.copy(lab.release, folder)  # con algo que calificar: sin nada, no comprueba nada
    monkeypatch.setattr(sandbox, "available", lambda: "no está instalado bubblewrap (bwrap)")
    with pytest.raises(CourseError, match="--no-sandbox"):
        grade.run(root=tmp_path, progress=False)


def test_check_without_sandbox_warns_once_in_spanish(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "available", lambda: "no está instalado bubblewrap (bwrap)")
    seen = {}

    def fake(path, lab, sandboxed=True):
        seen["sandboxed"] = sandboxed
        return grading.Result("", "01_atencion")

    monkeypatch.setattr(grading, "grade_notebook", fake)
    assert check.run(str(labs.get("01_atencion").release), None) == 0
    err = capsys.readouterr().err
    assert err.count("aviso: califico sin aislamiento") == 1
    assert seen == {"sandboxed": False}


def test_a_virtual_environment_under_tmp_is_mounted_for_the_kernel(tmp_path, monkeypatch):
    # En CI el entorno virtual vive en /tmp, que el núcleo ve como un tmpfs vacío.
    venv = Path("/tmp/entorno-de-prueba/venv")
    monkeypatch.setattr(sys, "prefix", str(venv))
    words = _box(tmp_path).command(["python"])
    mounted = [words[i + 1] for i, word in enumerate(words) if word == "--ro-bind"]
    assert str(venv) in mounted
