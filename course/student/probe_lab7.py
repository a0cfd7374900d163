"""Ayudas de las pruebas del laboratorio 7 que miran lo que una función del estudiante le
hace a un modelo: se ejecutan en el núcleo del estudiante, sobre el modelo de ese núcleo
(``course.student.probe.remotable``), y devuelven datos que el calificador compara.

Las de ``course.student.probe`` (laboratorios 1 a 6) no cambian: este módulo solo añade las del 7.
"""

import torch

from course.student.probe import _detached, remotable


@remotable
def forward_grad_modes(function, model, *args):
    """``function(model, *args)`` anotando, en cada pasada hacia delante de ``model``, si
    se calculaban gradientes (``torch.is_grad_enabled()``).

    Sirve para ver si ``evaluate`` usa ``torch.no_grad()``: los valores que devuelve son los
    mismos con gradientes o sin ellos. Devuelve ``(resultado, lista de bool)``.
    """
    seen = []
    handle = model.register_forward_hook(
        lambda module, inputs, output: seen.append(torch.is_grad_enabled())
    )
    try:
        result = function(model, *args)
    finally:
        handle.remove()
    return _detached(result), seen


@remotable
def gradients(model) -> dict:
    """Nombre -> ``.grad`` de cada parámetro de ``model`` (``None`` si no tiene), tal como está.

    Los parámetros viajan por valor sin su ``.grad``: para ver lo que un paso dejó en el
    modelo del núcleo, se lee allí.
    """
    return {
        name: None if p.grad is None else p.grad.detach().clone()
        for name, p in model.named_parameters()
    }
