"""Copia de pesos de las capas Transformer de PyTorch a las de ``course.reference``.

Lo usan ``test_reference_layers.py`` y ``test_reference_model.py``.
"""

import torch
from torch import nn

from course.student import checks


def randomize_vectors(module: nn.Module, seed: int) -> None:
    """Sesgos y pesos de normas aleatorios: PyTorch los inicia a 0 y 1, que esconden errores."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() == 1:
                is_norm_weight = "norm" in name and name.endswith("weight")
                noise = 0.3 * torch.randn(p.shape, generator=generator)
                p.copy_(noise + (1.0 if is_norm_weight else 0.0))


def copy_layer(source: nn.Module, target: nn.Module) -> None:
    """``nn.TransformerEncoderLayer``/``DecoderLayer`` -> ``EncoderLayer``/``DecoderLayer``."""
    checks.copy_mha_weights(source.self_attn, target.self_attn)
    if hasattr(source, "multihead_attn"):
        checks.copy_mha_weights(source.multihead_attn, target.cross_attn)
    target.feed_forward.linear1.load_state_dict(source.linear1.state_dict())
    target.feed_forward.linear2.load_state_dict(source.linear2.state_dict())
    for name in ("norm1", "norm2", "norm3"):
        if hasattr(source, name):
            getattr(target, name).load_state_dict(getattr(source, name).state_dict())


def copy_stack(source: nn.Module, target: nn.Module) -> None:
    """``nn.TransformerEncoder``/``Decoder`` -> ``Encoder``/``Decoder`` (capas y norma final)."""
    for source_layer, target_layer in zip(source.layers, target.layers, strict=True):
        copy_layer(source_layer, target_layer)
    if source.norm is not None:
        target.norm.load_state_dict(source.norm.state_dict())
