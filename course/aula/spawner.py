"""Cómo lanza el hub el servidor de cada usuario: su entorno y sus límites.

:class:`ClassSpawner` es el ``LocalProcessSpawner`` de JupyterHub (un proceso por usuario,
con su cuenta del sistema) que

- elige el entorno: el del profesor para los profesores, el de los estudiantes para los
  demás (``course.aula.envs``);
- pone al servidor, y a todo lo que arranque (núcleos, terminales), en un grupo de
  control de memoria propio del usuario (cgroup v1 o v2): muchos núcleos o un núcleo que
  lo llena todo agotan solo su memoria; el núcleo más grande de ese usuario muere, los
  demás usuarios ni lo notan;
- le pone un tope de procesos (``RLIMIT_NPROC``, por usuario) y de tamaño de archivo
  (``RLIMIT_FSIZE``);
- a un estudiante con disco propio (``course.aula.disks``) le da ``/tmp`` y ``/var/tmp``
  privados, en ese disco: llenarlos no llena el disco de los demás.
"""

import os
import pwd
import resource
from pathlib import Path

from jupyterhub.spawner import LocalProcessSpawner
from traitlets import Integer, Set, Unicode

from course.aula import disks

CGROUP = Path("/sys/fs/cgroup")
MiB = 1024 * 1024


class ClassSpawner(LocalProcessSpawner):
    instructors = Set(Unicode(), help="usuarios que usan el entorno del profesor").tag(config=True)
    instructor_env = Unicode(help="entorno de Python del profesor").tag(config=True)
    student_env = Unicode(help="entorno de Python de los estudiantes").tag(config=True)
    memory_mb = Integer(3072, help="memoria de cada usuario, con sus núcleos (MiB)").tag(
        config=True
    )
    max_processes = Integer(512, help="procesos de cada usuario").tag(config=True)
    max_file_mb = Integer(2048, help="tamaño máximo de un archivo (MiB)").tag(config=True)

    def environment_for(self) -> str:
        return self.instructor_env if self.user.name in self.instructors else self.student_env

    async def start(self):
        env = self.environment_for()
        self.cmd = [f"{env}/bin/jupyterhub-singleuser"]
        self.environment["PATH"] = f"{env}/bin:/usr/local/bin:/usr/bin:/bin"
        return await super().start()

    def make_preexec_fn(self, name):
        switch_user = super().make_preexec_fn(name)
        group = memory_group(name, self.memory_mb * MiB)
        processes, file_bytes = self.max_processes, self.max_file_mb * MiB
        home = Path(pwd.getpwnam(name).pw_dir)
        own_disk = name not in self.instructors and (home / ".tmp").is_dir() and home.is_mount()
        targets = disks.shared_tmp(Path(self.student_env).parent.parent)

        def preexec():
            join(group)
            resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
            if own_disk:
                disks.private_tmp(home, targets)
            switch_user()

        return preexec


def memory_group(user: str, limit: int) -> Path:
    """La carpeta del grupo de control de memoria de ``user`` (creada, con su tope)."""
    v1 = CGROUP / "memory"
    if v1.is_dir():
        group = v1 / "aula" / user
        group.mkdir(parents=True, exist_ok=True)
        memory, swap = group / "memory.limit_in_bytes", group / "memory.memsw.limit_in_bytes"
        files = [memory, swap] if swap.exists() else [memory]
        if len(files) == 2 and limit > int(memory.read_text()):
            files.reverse()  # memoria+swap nunca por debajo de memoria: al subir, va primero
        for path in files:
            path.write_text(str(limit))
        return group
    parent = CGROUP / "aula"
    parent.mkdir(exist_ok=True)
    (CGROUP / "cgroup.subtree_control").write_text("+memory")
    (parent / "cgroup.subtree_control").write_text("+memory")
    group = parent / user
    group.mkdir(exist_ok=True)
    (group / "memory.max").write_text(str(limit))
    (group / "memory.swap.max").write_text("0")
    return group


def join(group: Path) -> None:
    """Mete este proceso (recién creado, todavía root) en ``group``."""
    (group / "cgroup.procs").write_text(str(os.getpid()))
