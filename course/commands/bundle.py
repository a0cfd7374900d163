"""``python -m course bundle --through LAB``: un zip para los estudiantes.

Contiene, dentro de la carpeta ``transformer-es/``: los cuadernos de ``release/`` de los
laboratorios hasta LAB incluido, el paquete ``course`` sin los módulos de referencia de
LAB y de los siguientes (los anteriores se quedan, para que el laboratorio N+1 pueda
apoyarse en un laboratorio N que funciona), ``requirements.txt``, ``pyproject.toml`` y
un README corto en español. Nada de ``source/``, pruebas ni libro de notas.
"""

import zipfile
from pathlib import Path

from course import labs

# Módulos del profesor (calificar, devolver, exportar): los estudiantes no los necesitan.
INSTRUCTOR_ONLY = {
    "grading", "commands/build.py", "commands/check.py",
    "commands/grade.py", "commands/feedback.py", "commands/export.py", "commands/bundle.py",
}  # fmt: skip
# Módulos que solo usa un laboratorio: van en el zip a partir de ese laboratorio.
LAB_ONLY = {
    "07_multi30k": ("data", "decoding.py", "incremental.py", "train.py", "commands/train.py")
}

README = """# El Transformer, pieza a pieza (laboratorios {first} a {last})

Instalación, una vez, en un entorno virtual con Python 3.11:

```bash
pip install -r requirements.txt
python -m course jupyter-es      # JupyterLab en español
python -m course doctor          # comprueba que todo está en orden
```

Sin GPU, instala antes la rueda de PyTorch para CPU (ocupa mucho menos):
`pip install torch=={torch} --index-url https://download.pytorch.org/whl/cpu`.

Para trabajar: `jupyter lab release/{first}/{first}.ipynb`. Rellena las celdas con
`# TU CÓDIGO AQUÍ` y ejecuta la celda de pruebas que sigue a cada ejercicio (o el botón
*Validate*). Tu profesor califica la entrega con pruebas ocultas y te devuelve un informe.

Laboratorios incluidos:

{table}
"""


def contents(through: str) -> dict[str, Path]:
    """Nombre dentro del zip -> archivo del repositorio."""
    last = labs.get(through)
    order = list(labs.LABS)
    later = order[order.index(last.id) :]
    excluded = {module for lab_id in later for module in labs.LABS[lab_id].reference}
    files = {}
    for lab_id in order[: order.index(last.id) + 1]:
        folder = labs.RELEASE / lab_id
        for path in sorted(folder.rglob("*")) if folder.exists() else []:
            if path.is_file() and ".ipynb_checkpoints" not in path.parts:
                files[str(path.relative_to(labs.REPO))] = path
    included = set(order[: order.index(last.id) + 1])
    skipped = INSTRUCTOR_ONLY | {
        m for lab_id, ms in LAB_ONLY.items() if lab_id not in included for m in ms
    }
    for path in sorted((labs.REPO / "course").rglob("*.py")):
        relative = path.relative_to(labs.REPO)
        inside = relative.relative_to("course").as_posix()
        if relative.parts[1] == "reference" and path.stem in excluded:
            continue
        if inside in skipped or any(inside.startswith(f"{m}/") for m in skipped):
            continue
        files[str(relative)] = path
    for name in ("requirements.txt", "pyproject.toml"):
        files[name] = labs.REPO / name
    return files


def readme(through: str) -> str:
    from course.commands.doctor import pins

    order = list(labs.LABS)
    included = [labs.LABS[i] for i in order[: order.index(through) + 1]]
    present = [lab for lab in included if lab.release.exists()]
    table = "\n".join(f"- `{lab.id}`: {lab.title}" for lab in present)
    return README.format(
        first=present[0].id, last=through, table=table, torch=pins().get("torch", "")
    )


def run(through: str, output: str | None = None) -> int:
    lab = labs.get(through)
    target = Path(output) if output else labs.REPO / "dist" / f"transformer-es-hasta-{lab.id}.zip"
    target.parent.mkdir(parents=True, exist_ok=True)
    files = contents(lab.id)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, path in files.items():
            archive.write(path, f"transformer-es/{name}")
        archive.writestr("transformer-es/README.md", readme(lab.id))
    notebooks = sum(name.endswith(".ipynb") for name in files)
    print(f"{target}: {notebooks} cuadernos, {len(files) + 1} archivos.")
    return 0
