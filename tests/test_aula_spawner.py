"""El grupo de memoria de cada usuario del aula (``course.aula.spawner.memory_group``)."""

import os
import secrets

import pytest

from course.aula.spawner import CGROUP, MiB, memory_group


@pytest.mark.skipif(os.geteuid() != 0, reason="crear grupos de control pide root")
def test_the_limit_can_go_up_and_down():
    """``aula preparar --memoria`` con más memoria que antes: en cgroup v1 la memoria no
    puede pasar de memoria+swap, así que subir el tope de un grupo que ya existe fallaba
    (EINVAL) y el servidor de ese estudiante no arrancaba."""
    user = f"prueba-{secrets.token_hex(3)}"
    try:
        for megabytes in (256, 512, 128):
            group = memory_group(user, megabytes * MiB)
            for name in ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.max"):
                if (group / name).exists():
                    assert int((group / name).read_text()) == megabytes * MiB
    finally:
        for base in (CGROUP / "memory" / "aula", CGROUP / "aula"):
            if (base / user).is_dir():
                (base / user).rmdir()
