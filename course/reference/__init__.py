"""Implementación de referencia del Transformer: un módulo por laboratorio (las respuestas)."""
