"""``python -m course bundle --through LAB``: un zip para los estudiantes.

Contiene, dentro de la carpeta ``transformer-es/``: los cuadernos de estudiante de los
laboratorios hasta LAB incluido, el paquete ``course`` sin los módulos de referencia de
LAB y de los siguientes (los anteriores se quedan, para que el laboratorio N+1 pueda
apoyarse en un laboratorio N que funciona) y sin el código de las funciones que resuelven
sus ejercicios (como la copia que ve el núcleo al calificar), ``requirements.txt``, un
``pyproject.toml`` con solo los paquetes que van y un README corto en español. Nada de
``source/``, pruebas ni libro de notas.

Los cuadernos se generan de nuevo desde ``source/`` (como ``python -m course build``),
no se copian de ``release/``: si alguien probó un laboratorio en ``release/``, sus
respuestas no llegan al zip. Si ``release/`` no coincide con lo generado, se avisa.
"""

import json
import re
import sys
import tempfile
import zipfile
from pathlib import Path

from course import labs

README = """# El Transformer, pieza a pieza (laboratorios {first} a {last})

Instalación, una vez, en un entorno virtual con Python 3.11:

```bash
pip install -r requirements.txt
python -m course jupyter-es      # JupyterLab en español
python -m course doctor          # comprueba que todo está en orden
```

`doctor` termina con «Todo en orden» solo si tus cuadernos encuentran el paquete del curso
(lo instala la línea `-e .` de `requirements.txt`), los datos y los laboratorios.

Sin GPU, instala antes la rueda de PyTorch para CPU (ocupa mucho menos):
`pip install torch=={torch} --index-url https://download.pytorch.org/whl/cpu`.

Para trabajar, haz tu copia del laboratorio y ábrela (no trabajes en `release/`, que es
el original):

```bash
python -m course empezar {first}   # copia release/{first}/ a trabajo/{first}/
jupyter lab trabajo/{first}/{first}.ipynb
```

Rellena las celdas con `# TU CÓDIGO AQUÍ` y ejecuta la celda de pruebas que sigue a cada
ejercicio (o el botón *Validar*). `python -m course check trabajo/{first}/{first}.ipynb`
pasa todas las pruebas visibles de una vez. Tu profesor califica la entrega con las
pruebas ocultas, que no van en este paquete, y te devuelve un informe.

Laboratorios incluidos:

{table}
{train}"""

TRAIN = """
En el laboratorio 7, `python -m course train` entrena el traductor fuera del cuaderno con
tus funciones (`collate`, `train_step`, `evaluate` y `corpus_bleu` de
`trabajo/07_multi30k/07_multi30k.ipynb`). Prueba primero la receta corta (unos 3 min en
2 núcleos) y luego la del cuaderno:

```bash
python -m course train --preset corta    # ~3 min
python -m course train --preset rapida   # ~10 min; --epocas N, --minutos M, --lote TOKENS
```
"""


def contents(through: str, release: Path = labs.RELEASE) -> dict[str, Path]:
    """Nombre dentro del zip -> archivo; los cuadernos de estudiante salen de ``release``."""
    last = labs.get(through)
    order = list(labs.LABS)
    files = {}
    for lab_id in order[: order.index(last.id) + 1]:
        folder = release / lab_id
        for path in sorted(folder.rglob("*")) if folder.exists() else []:
            if path.is_file() and ".ipynb_checkpoints" not in path.parts:
                files[f"release/{path.relative_to(release).as_posix()}"] = path
    for path in sorted((labs.REPO / "course").rglob("*")):
        relative = path.relative_to(labs.REPO)
        if path.is_file() and labs.in_bundle(relative.relative_to("course").as_posix(), last.id):
            files[str(relative)] = path
    files["requirements.txt"] = labs.REPO / "requirements.txt"
    return files


def packages(names: list[str]) -> list[str]:
    """Paquetes de Python (carpetas con ``__init__.py``) entre los nombres del zip."""
    return sorted(
        name.removesuffix("/__init__.py").replace("/", ".")
        for name in names
        if name.startswith("course/") and name.endswith("/__init__.py")
    )


def pyproject(names: list[str], source: Path = labs.REPO / "pyproject.toml") -> str:
    """El ``pyproject.toml`` del curso con solo los paquetes que van en el zip: con uno
    que falta, ``pip install -e .`` se niega («package directory … does not exist»)."""
    shipped = packages(names)
    text = re.sub(
        r"(?m)^packages = \[.*\]$",
        lambda _: "packages = [" + ", ".join(f'"{p}"' for p in shipped) + "]",
        source.read_text(encoding="utf-8"),
    )
    return re.sub(
        r'(?m)^"(course(?:\.\w+)*)" = \[.*\]\n',
        lambda m: m[0] if m[1] in shipped else "",
        text,
    )


def without_answers(name: str, path: Path, through: str) -> bytes:
    """El archivo ``path`` para el zip: los módulos sin el código de las funciones que
    resuelven un ejercicio de ``through`` o de uno siguiente (como la copia que ve el núcleo
    al calificar, ``sandbox.course_copy``: ``collate`` y ``bleu`` son del laboratorio 7)."""
    from course.grading import sandbox

    if not (name.startswith("course/") and name.endswith(".py")):
        return path.read_bytes()
    text = sandbox.without_answers(
        path.read_text(encoding="utf-8"), name.removeprefix("course/"), through
    )
    return text.encode("utf-8")


def fresh_release(through: str, root: Path) -> Path:
    """Genera en ``root/release`` los cuadernos de estudiante hasta ``through`` desde
    ``source/``; avisa de cada ``release/`` del repositorio que no coincide."""
    from course import grading

    order = list(labs.LABS)
    for lab in [lab for lab in labs.available() if order.index(lab.id) <= order.index(through)]:
        print(f"Genero {lab.id} desde source/…", file=sys.stderr)
        built = grading.generate(lab, root)
        if not lab.release.exists() or json.loads(built.read_text()) != json.loads(
            lab.release.read_text()
        ):
            print(
                f"aviso: release/{lab.id} no coincide con source/ (¿alguien trabajó ahí?);"
                f" el zip lleva la versión recién generada. «python -m course build {lab.id}»"
                " regenera release/.",
                file=sys.stderr,
            )
    return root / "release"


def readme(through: str) -> str:
    from course.commands.doctor import pins

    order = list(labs.LABS)
    included = [labs.LABS[i] for i in order[: order.index(through) + 1]]
    present = [lab for lab in included if lab.release.exists()]
    table = "\n".join(f"- `{lab.id}`: {lab.title}" for lab in present)
    train = TRAIN if any(lab.id in labs.LAB_ONLY for lab in present) else ""
    return README.format(
        first=present[0].id, last=through, table=table, torch=pins().get("torch", ""),
        train=train,
    )  # fmt: skip


HELP = "prepara un zip para estudiantes hasta un laboratorio"


def add_arguments(parser) -> None:
    parser.add_argument("--through", required=True, metavar="LAB", help="último laboratorio")
    parser.add_argument("--output", "-o", metavar="ZIP", help="ruta del zip (por omisión dist/…)")


def main(args) -> int:
    return run(args.through, args.output)


def run(through: str, output: str | None = None) -> int:
    lab = labs.get(through)
    target = Path(output) if output else labs.REPO / "dist" / f"transformer-es-hasta-{lab.id}.zip"
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="course-bundle-") as folder:
        files = contents(lab.id, fresh_release(lab.id, Path(folder)))
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, path in files.items():
                archive.writestr(f"transformer-es/{name}", without_answers(name, path, lab.id))
            archive.writestr("transformer-es/pyproject.toml", pyproject(list(files)))
            archive.writestr("transformer-es/README.md", readme(lab.id))
    notebooks = sum(name.endswith(".ipynb") for name in files)
    print(f"{target}: {notebooks} cuadernos, {len(files) + 2} archivos.")
    return 0
