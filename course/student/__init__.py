"""Lado del estudiante: lo que importa su núcleo (comprobaciones, pistas, ejemplos,
figuras, ayudas de las pruebas) y las pruebas visibles sin calificador. Nada de aquí
contiene respuestas: el núcleo del estudiante lo ve todo."""
