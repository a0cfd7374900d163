"""El servidor de la clase: JupyterHub con el curso (``python -m course aula``).

Todo vive en una carpeta propia (por omisión ``/srv/aula``), de root:

- ``aula.json``: quién es el profesor, el puerto, los estudiantes y los laboratorios
  abiertos (:mod:`course.aula.state`);
- ``entornos/``: tres entornos de Python hechos con el Python del sistema, que todos los
  usuarios pueden ejecutar (:mod:`course.aula.envs`): ``base`` (las dependencias),
  ``estudiantes`` (solo lo que pueden tener ahora: el paquete del zip de estudiantes) y
  ``profesor`` (el repositorio del curso, en la carpeta privada del profesor);
- ``intercambio/``: el intercambio de nbgrader con permisos que impiden tocar la entrega
  de otro (:mod:`course.aula.exchange`);
- ``hub/`` (0700): la configuración, la base de datos y el secreto de las cookies de
  JupyterHub, su registro y su pid (:mod:`course.aula.service`);
- ``proxy/``: configurable-http-proxy instalado con npm.

Las cuentas del sistema (PAM) salen de la lista de clase (:mod:`course.aula.accounts`);
el hub lanza cada servidor con límites por usuario (:mod:`course.aula.spawner`).
"""
