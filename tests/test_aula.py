"""``python -m course aula`` sin levantar el hub: la orden, la lista de clase, la
configuración del hub, el paquete de los estudiantes y la copia de entornos.

El aula de verdad, con cuentas del sistema, está en ``test_aula_hub.py`` (nivel lento).
"""

import json
import os
import re
import stat
import subprocess
import sys
from collections import namedtuple
from pathlib import Path
from types import SimpleNamespace

import pytest
from traitlets.config import Config

from course import cli, names
from course.aula import accounts, envs, hubconfig, service
from course.aula.state import Aula, Settings, Student
from course.labs import CourseError
from course.student.submit import private


def test_help_is_spanish_and_misuse_exits_2(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["aula", "--help"])
    assert done.value.code == 0
    shown = capsys.readouterr().out
    for step in ("preparar", "alumnos", "abrir", "iniciar", "parar", "estado"):
        assert step in shown
    assert "uso:" in shown
    for wrong in (["aula"], ["aula", "borrar"], ["aula", "abrir"]):
        with pytest.raises(SystemExit) as done:
            cli.main(wrong)
        assert done.value.code == 2


def test_status_without_an_aula_says_how_to_prepare(tmp_path, capsys):
    assert cli.main(["aula", "estado", "--carpeta", str(tmp_path)]) == 2
    assert "aula preparar --profesor" in capsys.readouterr().err


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_roster_from_the_lms(tmp_path):
    """Cabeceras en español o inglés, punto y coma (Excel), nombre y apellidos separados;
    el usuario es el identificador en minúsculas."""
    plain = write(tmp_path / "a.csv", "id,nombre,correo\nAna.G,Ana García,ana@x.org\n")
    assert accounts.read_roster(plain, "profe") == [Student("ana.g", "Ana García", "ana@x.org")]
    moodle = write(
        tmp_path / "m.csv",
        "Nombre;Apellido(s);Número de ID;Dirección de correo\nBeto;Ruiz Díaz;B_12;b@x.org\n",
    )
    assert accounts.read_roster(moodle, "profe") == [Student("b_12", "Beto Ruiz Díaz", "b@x.org")]


def test_roster_refuses_bad_names_repeats_and_the_instructor(tmp_path):
    roster = write(
        tmp_path / "r.csv",
        "id,name,email\n../root,X,x@x\nana,A,a@x\nANA,A,a@x\nprofe,P,p@x\n<b>,B,b@x\n",
    )
    with pytest.raises(CourseError) as refused:
        accounts.read_roster(roster, "profe")
    message = str(refused.value)
    for expected in ("fila 2", "fila 5", "fila 6", "«ana» aparece más de una vez", "profesor"):
        assert expected in message
    headless = write(tmp_path / "h.csv", "ana,A,a@x\n")
    with pytest.raises(CourseError, match="columna del identificador"):
        accounts.read_roster(headless, "profe")


def test_system_accounts_are_refused(monkeypatch):
    with pytest.raises(CourseError, match="cuenta del sistema"):
        accounts.ensure_account("daemon")


def configured(tmp_path) -> Config:
    aula = Aula(tmp_path)
    aula.save(
        Settings(
            instructor="profe", course="/home/profe/transformer-es", port=8123,
            students=[Student("ana"), Student("beto")], open_labs=["01_atencion"],
        )
    )  # fmt: skip
    c = Config()
    hubconfig.apply(c, str(tmp_path))
    return c


def test_hub_config_from_the_aula(tmp_path):
    c = configured(tmp_path)
    assert c.Authenticator.allowed_users == {"profe", "ana", "beto"}
    assert c.JupyterHub.load_groups == {
        "formgrade-transformer-es": {"users": ["profe"]},
        "nbgrader-transformer-es": {"users": ["ana", "beto"]},
    }
    assert c.ClassSpawner.instructors == {"profe"}
    assert c.ClassSpawner.student_env == str(tmp_path / "entornos" / "estudiantes")
    assert c.JupyterHub.port == 8123
    assert c.JupyterHub.db_url.endswith(str(tmp_path / "hub" / "jupyterhub.sqlite"))
    (culler,) = c.JupyterHub.services
    assert "jupyterhub_idle_culler" in culler["command"]
    assert set(c.JupyterHub.load_roles[0]["scopes"]) >= {"delete:servers", "list:users"}
    assert "PYTHONPATH" not in c.Spawner.env_keep
    assert c.ConfigurableHTTPProxy.pid_file == str(tmp_path / "hub" / service.PROXY_PID)


@pytest.mark.parametrize(
    "name", ["ana", "ana.garcia", "b_12", "12345", "Ana", "-ana", ".ana", "a/b", "<b>", "ana garcía", "x" * 65]
)  # fmt: skip
def test_hub_usernames_follow_the_course_rule(name):
    """Lo que el hub deja entrar (venga del autenticador que venga) cumple la regla de
    ``course.names`` y está en minúsculas."""
    allowed = re.fullmatch(hubconfig.USERNAME_PATTERN, name) is not None
    assert allowed == (names.problem(name, "estudiante") == "" and name == name.lower())


def fake_env(folder: Path) -> Path:
    packages = envs.site_packages(folder)
    packages.mkdir(parents=True)
    (packages / "torch.py").write_text("x = 1\n")
    (folder / "bin").mkdir()
    (folder / "bin" / "jupyter").write_text(f"#!{folder}/bin/python3\nimport jupyter\n")
    os.chmod(folder / "bin" / "jupyter", 0o755)
    (folder / "etc").mkdir()
    (folder / "etc" / "config.json").write_text("{}")
    return folder


def test_copied_env_shares_packages_and_owns_scripts_and_config(tmp_path):
    base = fake_env(tmp_path / "base")
    copy = tmp_path / "estudiantes"
    envs.copy_env(base, copy)
    assert (envs.site_packages(copy) / "torch.py").stat().st_ino == (
        envs.site_packages(base) / "torch.py"
    ).stat().st_ino
    assert (copy / "etc" / "config.json").stat().st_ino != (
        base / "etc" / "config.json"
    ).stat().st_ino
    script = copy / "bin" / "jupyter"
    assert script.read_text().startswith(f"#!{copy}/bin/python3\n")
    assert (base / "bin" / "jupyter").read_text().startswith(f"#!{base}/bin/python3\n")
    assert os.access(script, os.X_OK)


VersionInfo = namedtuple("VersionInfo", "major minor micro releaselevel serial")


@pytest.mark.parametrize("micro_offset", [0, 1])
def test_base_copies_packages_only_from_the_same_exact_python(tmp_path, monkeypatch, micro_offset):
    """Solo se copian los paquetes del entorno que ejecuta ``aula`` si su Python es el del
    sistema hasta la última cifra: soupsieve 4.1.3 (Python ≥ 3.11.5), copiado de 3.11.7
    a un entorno de 3.11.2, rompía la página de calificar de Formgrader."""
    system = sys.version_info
    running = VersionInfo(system.major, system.minor, system.micro + micro_offset, *system[3:])
    venv = tmp_path / "venv"
    monkeypatch.setattr(
        envs, "sys", SimpleNamespace(prefix=str(venv), base_prefix="/usr", version_info=running)
    )
    monkeypatch.setattr(envs, "SYSTEM_PYTHON", Path(sys.executable))  # hace de Python del sistema
    envs.site_packages(venv).mkdir(parents=True)
    assert envs._reusable(venv) is (micro_offset == 0)


def installed(tmp_path, through: str | None) -> set[str]:
    aula = Aula(tmp_path)
    envs.site_packages(aula.student_env).mkdir(parents=True)
    envs.install_student_package(aula, through)
    package = envs.site_packages(aula.student_env) / "course"
    return {p.relative_to(package).as_posix() for p in package.rglob("*") if p.is_file()}


def test_student_package_has_only_closed_answers(tmp_path):
    """Con 02 abierto: la referencia del 01 sí, la del 02 y siguientes no; nada del
    profesor, ni mutantes, ni el aula."""
    shipped = installed(tmp_path, "02_normalizacion")
    assert "reference/attention.py" in shipped
    assert "reference/normalization.py" not in shipped
    assert "student/submit.py" in shipped
    for forbidden in (
        "grading/",
        "aula/",
        "commands/aula.py",
        "commands/grade.py",
        "mistakes/attention.py",
    ):
        assert not any(name.startswith(forbidden) for name in shipped), forbidden
    assert not any(name.endswith(".pyc") for name in shipped)


def test_student_package_before_any_lab_has_no_answers(tmp_path):
    shipped = installed(tmp_path, None)
    assert not [
        name for name in shipped if name.startswith("reference/") and "__init__" not in name
    ]
    package = envs.site_packages(Aula(tmp_path).student_env) / "course"
    modes = {stat.S_IMODE(p.stat().st_mode) for p in package.rglob("*")}
    assert modes <= {0o755, 0o644}


def test_private_submission_modes(tmp_path):
    """Una entrega: carpetas 0750 y archivos 0640 (nbgrader las deja en 0777 y 0644)."""
    folder = tmp_path / "ana+01_atencion+hora+azar"
    (folder / "sub").mkdir(parents=True)
    for path in (folder / "01_atencion.ipynb", folder / "sub" / "x.txt"):
        path.write_text("{}")
        os.chmod(path, 0o666)
    os.chmod(folder, 0o777)
    private(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o750
    assert stat.S_IMODE((folder / "sub").stat().st_mode) == 0o750
    assert stat.S_IMODE((folder / "01_atencion.ipynb").stat().st_mode) == 0o640
    assert stat.S_IMODE((folder / "sub" / "x.txt").stat().st_mode) == 0o640


def other_group() -> int:
    """Un grupo distinto del efectivo en el que este proceso puede crear archivos."""
    if os.geteuid() == 0:
        return os.getegid() + 4242
    others = [group for group in os.getgroups() if group != os.getegid()]
    if not others:
        pytest.skip("hace falta root o un grupo secundario")
    return others[0]


def test_whole_submission_takes_the_group_of_inbound(tmp_path, monkeypatch):
    """Con ``inbound/`` setgid del grupo del profesor, todo lo que deja ``nbgrader submit``
    (también ``timestamp.txt`` y ``submission_secret.txt``, escritos tras la copia) es de ese
    grupo: si no, el profesor no los lee y «Publicar devolución» se detiene."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory

    from course.student.submit import PrivateSubmit

    lab = "01_atencion"
    exchange = tmp_path / "intercambio"
    inbound = exchange / "transformer-es" / "inbound"
    (exchange / "transformer-es" / "outbound" / lab).mkdir(parents=True)
    inbound.mkdir()
    group = other_group()
    os.chown(inbound, -1, group)
    os.chmod(inbound, 0o3733)
    work = tmp_path / "ana" / lab
    work.mkdir(parents=True)
    for folder in (exchange / "transformer-es" / "outbound" / lab, work):
        (folder / f"{lab}.ipynb").write_text("{}")
    os.chmod(work, 0o700)
    config = Config()
    config.Exchange.root = str(exchange)
    config.Exchange.cache = str(tmp_path / "cache")
    config.CourseDirectory.course_id = "transformer-es"
    config.CourseDirectory.root = str(work.parent)
    config.CourseDirectory.assignment_id = lab
    coursedir = CourseDirectory(config=config)
    monkeypatch.chdir(work.parent)  # nbgrader submit entrega la carpeta del laboratorio de aquí
    authenticator = Authenticator(config=config)
    PrivateSubmit(coursedir=coursedir, authenticator=authenticator, config=config).start()
    (submission,) = inbound.iterdir()
    found = {path.name: path.stat().st_gid for path in submission.iterdir()}
    assert found == {
        name: group for name in (f"{lab}.ipynb", "timestamp.txt", "submission_secret.txt")
    }
    assert stat.S_IMODE(submission.stat().st_mode) == 0o750


def test_stop_ends_a_proxy_that_outlived_its_hub(tmp_path):
    """Un proxy cuyo hub ya murió no se queda ocupando el puerto: «aula parar» lo apaga."""
    aula = Aula(tmp_path)
    aula.hub.mkdir()
    proxy = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "configurable-http-proxy"]
    )
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (aula.hub / service.PROXY_PID).write_text(str(proxy.pid))
        assert service.stop(aula) is False  # no había hub
        assert proxy.wait(timeout=10) is not None
        (aula.hub / service.PROXY_PID).write_text(str(stranger.pid))  # un pid reutilizado
        service.stop(aula)
        assert stranger.poll() is None, "parar mató un proceso que no era el proxy"
    finally:
        proxy.kill()
        stranger.kill()


def test_state_file_is_root_only(tmp_path):
    aula = Aula(tmp_path)
    aula.save(Settings(instructor="profe", course="/c"))
    assert stat.S_IMODE(aula.settings_file.stat().st_mode) == 0o600
    assert json.loads(aula.settings_file.read_text())["instructor"] == "profe"
    assert aula.load().instructor == "profe"
