"""La configuración de JupyterHub del aula, leída de ``aula.json`` en cada arranque.

``hub/jupyterhub_config.py`` solo llama a :func:`apply`. Decisiones:

- **PAM** con las cuentas del sistema que crea ``aula alumnos`` (``course.aula.accounts``):
  funciona sin nada más y cada estudiante es un usuario del sistema, que es lo que separa
  sus archivos. Para LTI 1.3 (Moodle) u OAuth, ``docs/aula.md``.
- Entran solo el profesor y los estudiantes de la lista (``allowed_users``), y solo con
  un nombre que cumple la regla de ``course.names`` en minúsculas (``username_pattern``),
  venga de donde venga.
- Grupos de nbgrader: ``formgrade-transformer-es`` (profesores) y
  ``nbgrader-transformer-es`` (estudiantes).
- El servidor de cada usuario con :class:`course.aula.spawner.ClassSpawner`, en JupyterLab.
- ``jupyterhub-idle-culler`` como servicio del hub: apaga un servidor sin actividad.
"""

import sys
from pathlib import Path

from course.aula.state import INSTRUCTORS_GROUP, STUDENTS_GROUP, Aula

USERNAME_PATTERN = r"^[a-z0-9_][a-z0-9._-]{0,63}$"  # course.names en minúsculas
IDLE_TIMEOUT_S = 3600
CULLER_SCOPES = ["list:users", "read:users:activity", "read:servers", "delete:servers"]


def apply(c, root: str) -> None:
    """Configura ``c`` (el ``get_config()`` de JupyterHub) para el aula de ``root``."""
    aula = Aula(Path(root))
    settings = aula.load()
    students = [s.user for s in settings.students]
    c.JupyterHub.ip = settings.ip
    c.JupyterHub.port = settings.port
    c.JupyterHub.hub_ip = "127.0.0.1"
    c.JupyterHub.hub_port = settings.port + 1  # la API del hub, solo en 127.0.0.1
    c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings.port + 2}"
    c.JupyterHub.db_url = f"sqlite:///{aula.hub / 'jupyterhub.sqlite'}"
    c.JupyterHub.cookie_secret_file = str(aula.hub / "jupyterhub_cookie_secret")
    c.JupyterHub.pid_file = str(aula.pid_file)
    c.ConfigurableHTTPProxy.command = [str(aula.proxy)]
    c.ConfigurableHTTPProxy.pid_file = str(aula.hub / "proxy.pid")

    c.JupyterHub.authenticator_class = "pam"
    c.Authenticator.allowed_users = {settings.instructor, *students}
    c.Authenticator.username_pattern = USERNAME_PATTERN
    c.JupyterHub.load_groups = {
        INSTRUCTORS_GROUP: {"users": [settings.instructor]},
        STUDENTS_GROUP: {"users": students},
    }

    c.JupyterHub.spawner_class = "course.aula.spawner.ClassSpawner"
    c.ClassSpawner.instructors = {settings.instructor}
    c.ClassSpawner.instructor_env = str(aula.instructor_env)
    c.ClassSpawner.student_env = str(aula.student_env)
    c.ClassSpawner.memory_mb = settings.memory_mb
    c.Spawner.ip = "127.0.0.1"
    c.Spawner.env_keep = ["LANG", "LC_ALL"]  # nada del entorno de root (PYTHONPATH…)
    c.Spawner.default_url = "/lab"
    c.Spawner.notebook_dir = "~"

    c.JupyterHub.services = [
        {
            "name": "idle-culler",
            "command": [
                sys.executable,
                "-m",
                "jupyterhub_idle_culler",
                f"--timeout={IDLE_TIMEOUT_S}",
            ],
        }
    ]
    c.JupyterHub.load_roles = [
        {"name": "idle-culler", "scopes": CULLER_SCOPES, "services": ["idle-culler"]}
    ]
