"""La interfaz de JupyterLab en español: traducciones, extensión y Formgrader.

``python -m course jupyter-es`` instala lo que hay aquí en el entorno.
"""
