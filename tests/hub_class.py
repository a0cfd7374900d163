"""Un aula de verdad (``python -m course aula``) para las pruebas lentas.

:func:`hub_class` prepara el aula con cuentas del sistema nuevas (un profesor y dos
estudiantes, con un sufijo al azar), añade la lista de clase, abre el laboratorio 01,
arranca el hub en 127.0.0.1 y un puerto libre, y al salir (también si la prueba falla)
para el hub y borra las cuentas, sus carpetas y el estado del aula.

El entorno ``base`` del aula se guarda entre ejecuciones en :data:`ROOT` (se rehace solo
si cambia ``requirements.txt``): lo caro de preparar un aula es ese entorno.

Para el navegador: ``HubClass.url``, ``passwords`` y :meth:`HubClass.login` (con una
página de Playwright de ``live_server``); sin navegador, :meth:`HubClass.session` entra
por HTTP y :meth:`HubClass.spawn` arranca el servidor del usuario.
"""

import asyncio
import csv
import http.cookiejar
import json
import os
import pwd
import re
import secrets
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from live_server import free_port

from course.aula import service, steps
from course.aula.state import Aula

ROOT = Path("/var/tmp/course-aula-pruebas")
LAB = "01_atencion"
KEEP = ("entornos", "proxy")  # lo que se reutiliza entre ejecuciones
RESTARTED = "[el núcleo murió y se reinicia]"  # lo que añade HubClass.execute


def skip_without_aula() -> None:
    """Omite el módulo de pruebas donde no se puede montar un aula (sin root o sin npm).

    Con ``CI=true``, si falta npm no se omite: el aula falla al prepararse.
    """
    if os.geteuid() != 0 or not Path("/usr/sbin/useradd").exists():
        pytest.skip("el aula crea cuentas del sistema: hace falta root", allow_module_level=True)
    if shutil.which("npm") is None and os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
        pytest.skip(
            "el proxy del aula se instala con npm: «apt-get install nodejs npm»",
            allow_module_level=True,
        )


@dataclass
class HubClass:
    aula: Aula
    url: str
    instructor: str
    students: list[str]
    passwords: dict[str, str]

    @property
    def course(self) -> Path:
        return Path(self.aula.load().course)

    def run_as(self, user: str, command: str, env: str = "estudiantes", **kwargs):
        """``command`` (bash) como ``user``, con su ``HOME`` y el entorno del aula ``env``."""
        folder = self.aula.envs / env / "bin"
        home = pwd.getpwnam(user).pw_dir
        return subprocess.run(
            ["runuser", "-u", user, "--", "env", "-i", f"HOME={home}", f"USER={user}",
             "LANG=C.UTF-8", f"PATH={folder}:/usr/bin:/bin", "bash", "-c", command],
            cwd=home, capture_output=True, text=True, **kwargs,
        )  # fmt: skip

    def session(self, user: str) -> urllib.request.OpenerDirector:
        """Un cliente HTTP con la sesión de ``user`` iniciada en el hub (formulario PAM)."""
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        page = opener.open(f"{self.url}/hub/login", timeout=30).read().decode()
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page)[1]
        form = {"username": user, "password": self.passwords[user], "_xsrf": xsrf}
        opener.open(f"{self.url}/hub/login", urllib.parse.urlencode(form).encode(), timeout=30)
        if not any(cookie.name.startswith("jupyterhub-session") for cookie in jar):
            raise AssertionError(f"{user} no pudo entrar en el hub")
        opener.jar = jar
        return opener

    def spawn(self, user: str) -> urllib.request.OpenerDirector:
        """Entra como ``user`` y arranca su servidor; espera a que JupyterLab responda (el
        cliente pasa también por el OAuth del servidor del usuario)."""
        opener = self.session(user)
        opener.open(f"{self.url}/hub/spawn", timeout=120).read()
        lab = f"{self.url}/user/{user}/lab"
        for _ in range(120):
            try:
                with opener.open(lab, timeout=10) as response:
                    if response.url.startswith(lab) and b"jupyter-config-data" in response.read():
                        return opener
            except OSError:
                pass
            time.sleep(1)
        raise AssertionError(f"el servidor de {user} no arrancó")

    def token(self, user: str, opener: urllib.request.OpenerDirector) -> str:
        """Un token de la API para ``user``, pedido con su sesión (como la página de tokens)."""
        xsrf = next(cookie.value for cookie in opener.jar if cookie.name == "_xsrf")
        request = urllib.request.Request(
            f"{self.url}/hub/api/users/{user}/tokens", data=b'{"note": "pruebas"}',
            headers={"X-XSRFToken": xsrf, "Content-Type": "application/json"}, method="POST",
        )  # fmt: skip
        with opener.open(request, timeout=30) as response:
            return json.loads(response.read())["token"]

    def kernel(self, user: str, token: str) -> str:
        """Arranca un núcleo en el servidor de ``user``; devuelve su id."""
        request = urllib.request.Request(
            f"{self.url}/user/{user}/api/kernels", data=b"{}", method="POST",
            headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.loads(response.read())["id"]

    def execute(self, user: str, token: str, kernel: str, code: str) -> str:
        """Ejecuta ``code`` en el núcleo (como una celda); devuelve lo que imprimió y sus
        errores."""
        address = self.url.replace("http", "ws", 1)
        url = f"{address}/user/{user}/api/kernels/{kernel}/channels"
        return asyncio.run(_execute(url, token, code))

    def login(self, page, user: str) -> None:
        """Inicia la sesión de ``user`` en una página de Playwright."""
        page.goto(f"{self.url}/hub/login")
        page.fill("input[name=username]", user)
        page.fill("input[name=password]", self.passwords[user])
        page.click("[type=submit]")


async def _execute(url: str, token: str, code: str, timeout: float = 300) -> str:
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    connection = await websocket_connect(
        HTTPRequest(url, headers={"Authorization": f"token {token}"})
    )
    message_id = uuid.uuid4().hex
    header = {"msg_id": message_id, "msg_type": "execute_request", "version": "5.3",
              "session": uuid.uuid4().hex, "username": "", "date": ""}  # fmt: skip
    content = {"code": code, "silent": False, "store_history": False, "user_expressions": {},
               "allow_stdin": False, "stop_on_error": True}  # fmt: skip
    request = {"header": header, "parent_header": {}, "metadata": {}, "content": content,
               "channel": "shell", "buffers": []}  # fmt: skip
    await connection.write_message(json.dumps(request))
    shown = []
    while True:
        raw = await asyncio.wait_for(connection.read_message(), timeout)
        if raw is None:
            raise AssertionError("el núcleo cerró la conexión")
        reply = json.loads(raw)
        state = reply.get("content", {}).get("execution_state")
        if reply["msg_type"] == "status" and state in ("restarting", "dead"):
            connection.close()
            return "".join(shown) + RESTARTED
        if reply.get("parent_header", {}).get("msg_id") != message_id:
            continue
        kind = reply["msg_type"]
        if kind == "stream":
            shown.append(reply["content"]["text"])
        elif kind == "error":
            shown.append(f"{reply['content']['ename']}: {reply['content']['evalue']}")
        elif kind == "status" and reply["content"]["execution_state"] == "idle":
            connection.close()
            return "".join(shown)


@contextmanager
def hub_class(
    count: int = 2, memory_mb: int = 1024, root: Path = ROOT, disk_mb: int = 256
) -> Iterator[HubClass]:
    """El aula en ``root`` con un profesor y ``count`` estudiantes (``ana…``, ``beto…``,
    ``e3…``…), con ``memory_mb`` MiB de memoria y ``disk_mb`` MiB de disco para cada uno."""
    tag = secrets.token_hex(2)
    instructor = f"profe{tag}"
    names = ("ana", "beto", *(f"e{i}" for i in range(3, count + 1)))
    students = [f"{name}{tag}" for name in names][:count]
    aula = Aula(root)
    _clean(aula)
    try:
        steps.prepare(
            aula, instructor, "127.0.0.1", free_port(), memory_mb, lambda _: None, disk_mb
        )
        roster = aula.hub / "lista.csv"
        roster.write_text(
            "id,nombre,correo\n"
            + "".join(f"{s},{s.title()} Prueba,{s}@example.org\n" for s in students)
        )
        steps.add_students(aula, roster, lambda _: None)
        steps.open_lab(aula, LAB, lambda _: None)
        service.start(aula)
        with open(aula.passwords, newline="") as handle:
            passwords = {row["usuario"]: row["contraseña"] for row in csv.DictReader(handle)}
        yield HubClass(aula, service.url(aula), instructor, students, passwords)
    finally:
        service.stop(aula)
        for user in (instructor, *students):
            _remove_account(user)
        _clean(aula)


def _remove_account(user: str) -> None:
    try:
        uid = pwd.getpwnam(user).pw_uid
    except KeyError:
        return
    owned = [
        p for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real == uid
    ]
    for process in owned:
        process.kill()
    psutil.wait_procs(owned, timeout=10)
    _unmount(Path(pwd.getpwnam(user).pw_dir))
    subprocess.run(["userdel", "--remove", user], capture_output=True)
    for group in (Path("/sys/fs/cgroup/memory/aula") / user, Path("/sys/fs/cgroup/aula") / user):
        if group.is_dir():
            group.rmdir()


def _unmount(folder: Path) -> None:
    """Desmonta el disco del aula montado en ``folder`` (``course.aula.disks``), si lo hay."""
    if folder.is_mount():
        subprocess.run(["umount", str(folder)], check=True)


def _clean(aula: Aula) -> None:
    """Todo el aula menos lo que se reutiliza (:data:`KEEP`)."""
    if not aula.root.exists():
        return
    _unmount(aula.exchange)
    for entry in aula.root.iterdir():
        if entry.name not in KEEP:
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    for env in ("estudiantes", "profesor"):
        shutil.rmtree(aula.envs / env, ignore_errors=True)
    os.makedirs(aula.root, exist_ok=True)
