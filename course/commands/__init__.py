"""Una orden de ``python -m course`` por módulo.

Cada módulo de orden define tres cosas, y ``course.cli`` solo las junta:

- ``HELP``: una línea en español, la de la lista de ``python -m course --ayuda`` y la
  descripción de la orden;
- ``add_arguments(parser)``: sus argumentos, en un ``course.argparse_es.ArgumentParser``;
- ``main(args) -> int``: la ejecuta con lo que analizó argparse y devuelve el código de
  salida. Llama a ``run``, la misma orden con argumentos de Python (la que usan las pruebas).

El módulo se importa para leer sus argumentos, también para la ayuda y los errores de uso:
lo pesado (nbgrader, PyTorch, ``course.grading``) se importa dentro de ``run``.

Un error del usuario (laboratorio desconocido, archivo que no es un cuaderno) se lanza como
``course.labs.CourseError``: ``course.cli`` lo imprime y sale con código 2.
"""

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]


def present(module: str) -> bool:
    """¿Trae este paquete ``course.<module>``? (el del estudiante no lleva las del profesor)

    Se mira el archivo dentro de este paquete, no ``importlib.util.find_spec``: con otra
    copia del curso instalada en modo editable, esta encontraría sus módulos.
    """
    path = PACKAGE.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()
