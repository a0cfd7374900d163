"""Traducción alemán→inglés con Multi30k: datos, configuración, entrenamiento, puntos de
control y decodificación (laboratorio 7 y ``python -m course train``)."""
