"""``python -m course progreso``: tus laboratorios según tu última ``check`` de cada uno.

Puntos por ejercicio, los errores que nombraron las pruebas la última vez y qué apartado
del cuaderno repasar (``course.report.progress``). No califica nada: para ponerlo al día,
vuelve a ejecutar ``python -m course check CUADERNO``.
"""

HELP = "tu progreso: puntos, errores nombrados y qué repasar"


def add_arguments(parser) -> None:
    pass


def main(args) -> int:
    return run()


def run() -> int:
    from course.report import progress

    print(progress.report())
    return 0
