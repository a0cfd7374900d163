"""``python -m course aula``: el servidor de la clase (JupyterHub), como root.

Órdenes, en el orden en que se usan (``course/aula/`` las explica):

- ``preparar --profesor USUARIO``: la cuenta del profesor y su copia privada del curso,
  los entornos de estudiantes y profesor, el proxy y el intercambio;
- ``alumnos LISTA.csv``: las cuentas de los estudiantes, en el hub y en el libro de notas;
- ``abrir LAB``: publica el laboratorio y pone al día el entorno de los estudiantes;
- ``iniciar``, ``parar``, ``estado``.
"""

from pathlib import Path

from course.aula.state import DEFAULT_ROOT

HELP = "el servidor de la clase con JupyterHub"


def add_arguments(parser) -> None:
    steps = parser.add_subparsers(dest="step", title="pasos", metavar="PASO", required=True)
    prepare = steps.add_parser(
        "preparar", help="cuentas, entornos, proxy e intercambio (se puede repetir)",
        description="Prepara el aula: la cuenta del profesor y su copia del curso, los"
        " entornos de Python, el proxy de JupyterHub y el intercambio de nbgrader.",
    )  # fmt: skip
    prepare.add_argument("--profesor", required=True, metavar="USUARIO", help="cuenta del profesor")
    prepare.add_argument("--ip", default="", help="dirección en la que escucha (por omisión todas)")
    prepare.add_argument("--puerto", type=int, default=8000, help="puerto (por omisión 8000)")
    prepare.add_argument(
        "--memoria", type=int, default=3072, metavar="MIB",
        help="memoria de cada usuario con sus núcleos, en MiB (por omisión 3072)",
    )  # fmt: skip
    prepare.add_argument(
        "--disco", type=int, default=2048, metavar="MIB",
        help="disco de cada estudiante nuevo, en MiB (por omisión 2048)",
    )  # fmt: skip
    roster = steps.add_parser(
        "alumnos", help="añade la lista de clase (CSV del aula virtual)",
        description="Crea las cuentas de los estudiantes de la lista (id, nombre, correo) y"
        " los añade al hub y al libro de notas. Las contraseñas nuevas quedan en"
        " hub/contraseñas.csv, que solo lee root.",
    )  # fmt: skip
    roster.add_argument("lista", type=Path, metavar="LISTA.csv", help="la lista de clase")
    opening = steps.add_parser(
        "abrir", help="publica un laboratorio para los estudiantes",
        description="Genera y publica el laboratorio y pone al día el entorno de los"
        " estudiantes: lleva las respuestas de los laboratorios anteriores, no las de este.",
    )  # fmt: skip
    opening.add_argument("lab", metavar="LAB", help="laboratorio, p. ej. 01_atencion")
    steps.add_parser("iniciar", help="arranca el hub", description="Arranca el hub.")
    steps.add_parser("parar", help="para el hub", description="Para el hub y los servidores.")
    steps.add_parser("estado", help="dice si el hub está en marcha", description="Estado del aula.")
    for step in steps.choices.values():
        step.add_argument(
            "--carpeta", type=Path, default=DEFAULT_ROOT, metavar="CARPETA",
            help=f"carpeta del aula (por omisión {DEFAULT_ROOT})",
        )  # fmt: skip
        step._positionals.title = "argumentos"
        step._optionals.title = "opciones"


def main(args) -> int:
    from course.aula import service, steps
    from course.aula.state import Aula

    aula = Aula(args.carpeta)
    if args.step == "preparar":
        steps.prepare(aula, args.profesor, args.ip, args.puerto, args.memoria, print, args.disco)
        print(f"Aula preparada en {aula.root}. Siguiente paso: «python -m course aula alumnos"
              " LISTA.csv» y «python -m course aula iniciar».")  # fmt: skip
    elif args.step == "alumnos":
        new = steps.add_students(aula, args.lista, print)
        if new:
            print(f"Contraseñas de las {len(new)} cuentas nuevas en {aula.passwords}.")
        if service.stop(aula):
            service.start(aula)
            print("Hub reiniciado para que entren los nuevos.")
    elif args.step == "abrir":
        steps.open_lab(aula, args.lab, print)
        print(f"{args.lab} publicado: los estudiantes lo descargan en «Tareas».")
    elif args.step == "iniciar":
        number = service.start(aula)
        print(f"Hub en marcha (pid {number}) en {service.url(aula)}; registro en {aula.log}.")
    elif args.step == "parar":
        print("Hub parado." if service.stop(aula) else "El hub no estaba en marcha.")
    else:
        return _status(aula, service)
    return 0


def _status(aula, service) -> int:
    from course.aula import disks

    settings = aula.load()
    number = service.pid(aula)
    state = f"en marcha (pid {number}) en {service.url(aula)}" if number else "parado"
    print(f"Hub: {state}.")
    print(f"Profesor: {settings.instructor}; estudiantes: {len(settings.students)}.")
    print(f"Laboratorios abiertos: {', '.join(settings.open_labs) or 'ninguno'}.")
    for line in disks.report(aula, [student.user for student in settings.students]):
        print(line)
    return 0 if number else 1
