"""Formgrader bajo la extensión de JupyterHub (``jupyterhub-singleuser``, la forma por
defecto desde JupyterHub 5), en español y con la CSP del curso.

La extensión de JupyterHub hace correr el bucle de eventos en su ``initialize``, antes de
que cargue la de Formgrader: lo que ``course.jupyter.safety`` y
``course.jupyter.formgrader`` dejaban para «cuando arranque el servidor» con
``io_loop.add_callback`` corría antes de que existieran las plantillas de Formgrader, y la
página salía en inglés, sin nonces, y se quedaba en «Loading, please wait...».

El servidor se arranca como lo arranca el hub (``jupyterhub-singleuser`` con las variables
``JUPYTERHUB_*``); en lugar del hub, :class:`FakeHub` contesta a su API lo justo: la
versión y quién es el dueño de un token.
"""

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import classroom
import live_server
import pytest

from course.commands import jupyter_es

USER = "profe"
SCOPES = [f"access:servers!user={USER}"]


class FakeHub(BaseHTTPRequestHandler):
    """La API del hub para un servidor: su versión, y ``profe`` para el token bueno."""

    token = ""

    def _reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-JupyterHub-Version", "6.1.1")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if not self.path.rstrip("/").endswith("/api/user"):
            self._reply(200, {"version": "6.1.1"})
        elif self.headers.get("Authorization") == f"token {self.token}":
            self._reply(200, {"kind": "user", "name": USER, "groups": [], "scopes": SCOPES})
        else:
            self._reply(403, {"status": 403})

    def do_POST(self):  # la actividad del servidor
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._reply(200, {})

    def log_message(self, *args):
        pass


@contextmanager
def singleuser(root: Path) -> Iterator[tuple[str, str]]:
    """``jupyterhub-singleuser`` sobre ``root``, como lo arranca el hub: da (url, token)."""
    FakeHub.token = secrets.token_hex(16)
    hub = ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    threading.Thread(target=hub.serve_forever, daemon=True).start()
    port, api = live_server.free_port(), f"http://127.0.0.1:{hub.server_port}/hub/api"
    prefix = f"/user/{USER}/"
    env = {
        **os.environ,
        "JUPYTERHUB_API_TOKEN": secrets.token_hex(16),
        "JUPYTERHUB_API_URL": api,
        "JUPYTERHUB_CLIENT_ID": f"jupyterhub-user-{USER}",
        "JUPYTERHUB_USER": USER,
        "JUPYTERHUB_BASE_URL": "/",
        "JUPYTERHUB_SERVICE_PREFIX": prefix,
        "JUPYTERHUB_SERVICE_URL": f"http://127.0.0.1:{port}{prefix}",
        "JUPYTERHUB_OAUTH_CALLBACK_URL": f"{prefix}oauth_callback",
        "JUPYTERHUB_OAUTH_ACCESS_SCOPES": json.dumps(SCOPES),
        "JUPYTERHUB_ACTIVITY_URL": f"{api}/users/{USER}/activity",
        "JUPYTERHUB_SINGLEUSER_EXTENSION": "1",
        "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
    }
    command = [str(Path(sys.executable).parent / "jupyterhub-singleuser"), "--allow-root"]
    log_path = root / "singleuser.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [*command, f"--ServerApp.root_dir={root}"],
            cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}{prefix.rstrip('/')}"
        try:
            _wait_until_up(f"{base}/api/status", process, log_path)
            yield base, FakeHub.token
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
            hub.shutdown()
            hub.server_close()


def _wait_until_up(url: str, process: subprocess.Popen, log: Path) -> None:
    """Como ``live_server``, con el token en la cabecera (el hub no lo acepta en la URL)."""
    request = urllib.request.Request(url, headers={"Authorization": f"token {FakeHub.token}"})
    deadline = time.monotonic() + live_server.START_S
    while True:
        try:
            urllib.request.urlopen(request, timeout=5).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"jupyterhub-singleuser no arrancó:\n{log.read_text()[-2000:]}")
            time.sleep(0.3)


@pytest.fixture(scope="module")
def formgrader_on_hub(tmp_path_factory):
    live_server.skip_without_chromium()
    root = classroom.course_copy(tmp_path_factory.mktemp("curso_hub"))
    assert jupyter_es.run() == 0  # activa las extensiones del curso (el paso del README)
    with singleuser(root) as server:
        yield server


@pytest.mark.slow
@pytest.mark.browser
def test_formgrader_under_the_hub_extension_is_spanish_and_runs_its_scripts(formgrader_on_hub):
    base, token = formgrader_on_hub
    with live_server.chromium() as browser:
        context = browser.new_context(extra_http_headers={"Authorization": f"token {token}"})
        context.set_default_timeout(60_000)
        violations = []
        context.add_init_script(
            "document.addEventListener('securitypolicyviolation', event => console.log("
            "'CSP ' + event.violatedDirective + ' ' + event.blockedURI))"
        )
        page = context.new_page()
        page.on(
            "console",
            lambda message: message.text.startswith("CSP") and violations.append(message.text),
        )
        response = page.goto(f"{base}/formgrader/manage_assignments")
        html = response.text()
        scripts = re.findall(r"<script\b[^>]*>", html)
        nonce = re.search(r"'nonce-([^']+)'", response.headers["content-security-policy"])[1]
        assert scripts and all(f'nonce="{nonce}"' in tag for tag in scripts), scripts
        assert "<title>nbgrader: calificar</title>" in html and ">Añadir una tarea…<" in html
        # El JavaScript de Formgrader corre: pide las tareas, quita «Cargando» y las lista.
        page.wait_for_selector("td:has-text('01_atencion')")
        assert page.locator("text=Cargando").count() == 0
        assert page.locator("text=Loading").count() == 0
        assert violations == []
