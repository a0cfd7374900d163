"""Un servidor de Jupyter de verdad y Chromium para las pruebas en navegador.

``test_browser.py`` (JupyterLab) y ``test_formgrader_safe.py`` (Formgrader) arrancan el
servidor igual: sin navegador en 127.0.0.1, puerto libre y token aleatorio, sobre una
copia del curso en un directorio temporal (el repositorio no se toca).
"""

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/lib/chromium/chromium")
START_S = 120  # con la máquina cargada, JupyterLab tarda más de 5 s en responder


def skip_without_chromium() -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"no hay Chromium en {CHROMIUM}: instálalo con «apt-get install -y chromium»")
    pytest.importorskip(
        "playwright.sync_api", reason="falta playwright (pip install -r requirements.txt)"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


@contextmanager
def running(app: str, root: Path, *options: str, env: dict | None = None) -> Iterator[tuple]:
    """``jupyter app`` (``lab`` o ``server``) sobre ``root`` hasta salir del ``with``:
    da ``(url base, token)``; su salida queda en ``root/jupyter.log``."""
    port, token = free_port(), secrets.token_hex(16)
    log = open(root / "jupyter.log", "w")  # noqa: SIM115 (se cierra al terminar)
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyter", app, "--no-browser", "--allow-root",
         "--ip=127.0.0.1", f"--port={port}", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={root}", *options],
        cwd=root, stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "JUPYTER_RUNTIME_DIR": str(root / ".runtime"), **(env or {})},
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(f"{base}/api/status?token={token}", process, root / "jupyter.log")
        yield base, token
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _wait_until_up(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_S
    while True:
        try:
            get(url)
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"jupyter no arrancó:\n{log.read_text()[-2000:]}")
            time.sleep(0.3)


@contextmanager
def chromium() -> Iterator:
    """Chromium de Debian sin ventana, con Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield browser
        browser.close()
