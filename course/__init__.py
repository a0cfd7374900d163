"""Curso práctico del Transformer: referencia, ejemplos, comprobaciones y herramientas."""
