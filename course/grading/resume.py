"""Reanudar ``grade``: lo ya calificado, sin cambios desde entonces, no se califica otra vez.

Cada ``calificacion.json`` guarda la huella (:func:`fingerprint`) de todo lo que decidió
su nota: el cuaderno entregado y su ``timestamp.txt`` (y, en el laboratorio 7, los archivos
de su ejecución completa), el cuaderno fuente del laboratorio, ``nbgrader_config.py``, el
código del paquete ``course`` y las opciones de la orden (``Settings``). Si el proceso
principal muere a mitad, la orden siguiente reutiliza las entregas que ya tienen su JSON y
su cuaderno calificado con la misma huella y sin error: no las repite ni las pierde. Si
cambió cualquiera de esas cosas, la huella no coincide y la entrega se califica de nuevo.
Una entrega que quedó con error se califica siempre otra vez.
"""

import functools
import hashlib
import json
from dataclasses import asdict
from pathlib import Path

import course
from course import labs
from course.grading import files, results


def fingerprint(task, settings) -> str:
    """La huella de una ``batch.Task`` calificada con ``settings``; ``""`` si no se puede
    leer su cuaderno (entonces nunca se reutiliza)."""
    if task.notebook is None:
        return ""
    digest = hashlib.sha256(_grader(task.lab).encode())
    digest.update(json.dumps([task.student, task.lab, asdict(settings)]).encode())
    try:
        digest.update(files.read_regular(task.notebook, files.NOTEBOOK_MAX_BYTES))
        stamp = task.notebook.parent / "timestamp.txt"
        if stamp.exists() or stamp.is_symlink():
            digest.update(b"timestamp" + files.read_regular(stamp, 1024))
    except (files.Refused, OSError):
        return ""
    outputs = labs.LABS[task.lab].outputs
    if outputs is not None:
        folder = task.notebook.parent / outputs
        for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
            status = path.lstat()
            line = f"{path.relative_to(folder)}\0{status.st_mode}\0{status.st_size}\0"
            digest.update(f"{line}{status.st_mtime_ns}\n".encode())
    return digest.hexdigest()


@functools.cache
def _grader(lab_id: str) -> str:
    """La huella de lo que califica ``lab_id``: el paquete, su fuente y la configuración."""
    digest = hashlib.sha256()
    package = Path(course.__file__).parent
    config = labs.REPO / "nbgrader_config.py"
    paths = sorted(package.rglob("*.py")) + [labs.get(lab_id).source, config]
    for path in paths:
        digest.update(str(path).encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"-")
    return digest.hexdigest()


def previous(task, autograded: Path, settings) -> results.Result | None:
    """El resultado ya guardado de ``task``, si sigue valiendo (misma huella, sin error y
    con su cuaderno calificado); si no, ``None``."""
    path = results.path_for(autograded, task.student, task.lab)
    graded = path.parent / f"{task.lab}.ipynb"
    if not path.is_file() or not graded.is_file():
        return None
    try:
        found = results.read(autograded, task.student, task.lab)
    except (OSError, ValueError, TypeError):
        return None
    mark = fingerprint(task, settings)
    return found if mark and found.fingerprint == mark and not found.error else None
