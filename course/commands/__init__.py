"""Una orden de ``python -m course`` por módulo."""
