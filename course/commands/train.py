"""``python -m course train``: entrena el Transformer alemán→inglés y mide su BLEU.

Con ``torchrun --nproc_per_node=N -m course train ...`` cada proceso entrena con una
parte de los lotes (``DistributedDataParallel``); solo el proceso 0 escribe y traduce.

El paso de entrenamiento y la validación son los de ``course.reference.translation``.
El paquete del estudiante no la lleva (es la solución del laboratorio 7): ahí, y con
``--cuaderno``, se usan las funciones del cuaderno del estudiante (:data:`FUNCTIONS`).
"""

import ast
import dataclasses
from pathlib import Path

from course import labs
from course.argparse_es import positive
from course.commands import present
from course.labs import CourseError
from course.translation.config import PRESETS, TrainConfig

HELP = "entrena el traductor de Multi30k y mide su BLEU"

DEFAULT_OUT = Path("runs")
NOTEBOOK = labs.REPO / "trabajo" / "07_multi30k" / "07_multi30k.ipynb"  # el de «empezar»
# Lo que se toma del cuaderno: el paquete del estudiante no lleva la referencia del
# laboratorio 7, y sus course.translation.data.collate y course.translation.decoding.bleu no tienen código.
FUNCTIONS = ("collate", "train_step", "evaluate", "corpus_bleu")
PENDING = (
    "Tu cuaderno {path} aún tiene ejercicios sin hacer (NotImplementedError): «train» usa tus"
    " collate (ejercicio 1), train_step (3), evaluate (4) y corpus_bleu (6). Complétalos,"
    " comprueba sus pruebas visibles y vuelve a ejecutar la orden."
)


def add_arguments(parser) -> None:
    """Una receta (``PRESETS``) y lo que se suele querer cambiar de ella sin editar código:
    épocas, tope de minutos y tamaño del lote."""
    parser.add_argument(
        "--preset", choices=list(PRESETS), default="cpu", metavar="RECETA",
        help="receta: gpu (una GPU, ~2 min), cpu (2 núcleos, ~25 min), rapida (2 núcleos,"
        " ~10 min, para una clase), corta (2 núcleos, ~3 min, para probar primero) o smoke"
        " (segundos); por omisión, cpu",
    )  # fmt: skip
    parser.add_argument("--epocas", type=positive(int), metavar="N", help="número máximo de épocas")
    parser.add_argument(
        "--minutos", type=positive(float), metavar="M",
        help="tope de minutos de entrenamiento (sin contar datos ni traducción); la tasa de"
        " aprendizaje termina su coseno al agotarse",
    )  # fmt: skip
    parser.add_argument(
        "--lote", type=positive(int), metavar="TOKENS",
        help="tamaño del lote en tokens, relleno incluido (menos tokens: menos memoria y más"
        " pasos por época)",
    )  # fmt: skip
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="la receta smoke (pocos pasos con unos cientos de frases), con el nombre de la elegida",
    )
    parser.add_argument(
        "--out", metavar="CARPETA", help="carpeta de resultados (por omisión runs/RECETA)"
    )
    parser.add_argument(
        "--resume", action="store_true", help="continúa desde CARPETA/last.pt si existe"
    )
    parser.add_argument(
        "--cuaderno", metavar="CUADERNO",
        help="entrena con tus funciones del laboratorio 7 (collate, train_step, evaluate y"
        " corpus_bleu); en el paquete del estudiante, que no trae la solución, siempre, por"
        " omisión de trabajo/07_multi30k/07_multi30k.ipynb. Ejecuta su código sin aislar:"
        " solo con cuadernos de confianza, no con entregas",
    )  # fmt: skip


def main(args) -> int:
    overrides = {"epochs": args.epocas, "max_minutes": args.minutos, "max_tokens": args.lote}
    return run(
        args.preset, args.smoke, args.out, args.resume,
        overrides={k: v for k, v in overrides.items() if v is not None},
        notebook=args.cuaderno,
    )  # fmt: skip


def run(
    preset: str, smoke: bool = False, out: str | None = None, resume: bool = False,
    overrides: dict | None = None, notebook: str | None = None,
) -> int:  # fmt: skip
    from course.translation import train

    cfg = recipe(preset, smoke, overrides or {})
    functions, source = steps(notebook)
    out_dir = Path(out) if out else DEFAULT_OUT / cfg.name
    print(describe(cfg) + (f"; tus funciones de {source}" if source else ""))
    try:
        result = train.train(cfg, out_dir, resume=resume, **functions)
    except NotImplementedError:
        if not source:
            raise
        raise CourseError(PENDING.format(path=source)) from None
    if result.bleu is not None:
        print(f"BLEU (sacreBLEU, con mayúsculas, detokenizado): {result.bleu.score:.2f}")
        print(f"BLEU en minúsculas: {result.bleu.lowercase_score:.2f}")
        print(f"Firma: {result.bleu.signature}")
        print(f"Traducciones: {out_dir / train.TRANSLATIONS_FILE}")
        print(f"Punto de control: {train.final_checkpoint(out_dir)}")
    return 0


def recipe(preset: str, smoke: bool, overrides: dict) -> TrainConfig:
    """La receta ``preset`` (o la de humo, llamada ``smoke-<preset>``) con los cambios de
    la línea de órdenes (``--epocas``, ``--minutos``, ``--lote``)."""
    cfg = PRESETS["smoke" if smoke else preset]
    if smoke and preset != "smoke":
        cfg = dataclasses.replace(cfg, name=f"smoke-{preset}")
    if overrides:
        cfg = dataclasses.replace(cfg, **overrides)
    return cfg


def describe(cfg: TrainConfig) -> str:
    """Una línea en español con lo que más cambia la duración de la receta."""
    minutes = f"{cfg.max_minutes:g}".replace(".", ",") if cfg.max_minutes else ""
    cap = f"tope de {minutes} min" if minutes else "sin tope"
    return (
        f"Receta «{cfg.name}»: {cfg.epochs} época{'s' * (cfg.epochs != 1)} como máximo, {cap},"
        f" lotes de {cfg.max_tokens} tokens"
    )


def steps(notebook: str | None) -> tuple[dict, str | None]:
    """(funciones para ``course.translation.train.train``, cuaderno de donde salen).

    Sin ``notebook`` y con la referencia en el paquete, ``train`` usa la referencia.
    """
    if notebook is None and present("reference.translation"):
        return {}, None
    path = Path(notebook) if notebook else NOTEBOOK
    if notebook is None and not path.exists():
        raise CourseError(
            "Este paquete no trae la solución del laboratorio 7, así que «train» entrena con"
            f" tus funciones del cuaderno {path}, que no existe aquí. Ejecuta «python -m course"
            " empezar 07_multi30k», completa los ejercicios 1, 3, 4 y 6 y vuelve a ejecutar"
            " «train» desde esta carpeta (o indica tu cuaderno con --cuaderno)."
        )
    return _from_notebook(path), str(path)


def _from_notebook(path: Path) -> dict:
    """Ejecuta las importaciones y las respuestas del cuaderno y devuelve sus funciones.

    Se ejecutan enteras la celda de preparación (las importaciones) y las de respuesta (una
    respuesta puede usar otra, p. ej. las máscaras). De las demás (demostraciones, el propio
    entrenamiento) solo sus ``import``: una respuesta puede usar lo que importó otra celda
    (``pad_sequence``). Las de pruebas no se ejecutan.
    """
    from course import notebooks

    namespace = {"__name__": "__cuaderno__"}
    for cell in notebooks.read(path).cells:
        if cell.cell_type != "code" or notebooks.is_test(cell):
            continue
        name = notebooks.grade_id(cell) or "sin nombre"
        whole = notebooks.is_solution(cell) or notebooks.is_setup(name)
        try:
            code = cell.source if whole else _imports(cell.source)
            exec(compile(code, f"<{path}: celda {name}>", "exec"), namespace)  # noqa: S102
        except Exception as error:  # noqa: BLE001 (cualquier fallo del código del estudiante)
            raise CourseError(
                f"La celda «{name}» de tu cuaderno {path} falla al ejecutarla:"
                f" {type(error).__name__}: {error}. Corrígela (sus pruebas visibles ayudan)."
            ) from None
    missing = [name for name in FUNCTIONS if not callable(namespace.get(name))]
    if missing:
        raise CourseError(f"Tu cuaderno {path} no define {', '.join(missing)}.")
    return {name: namespace[name] for name in FUNCTIONS}


def _imports(source: str) -> str:
    """Solo los ``import`` de primer nivel de una celda (nada si no es Python válido)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    kept = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    return "\n".join(ast.unparse(node) for node in kept)
