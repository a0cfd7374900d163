"""Referencia del laboratorio 6: el Transformer completo frente a ``nn.Transformer``."""

import math
import types

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch_weights import copy_stack, randomize_vectors

from course.reference.model import (
    Transformer,
    count_parameters,
    greedy_decode,
    make_src_mask,
    make_tgt_mask,
    use_fused_kernels,
)
from course.student import checks
from course.translation.config import ModelConfig

PAD, BOS, EOS = 0, 1, 2
V_SRC, V_TGT, D, H, D_FF = 11, 13, 8, 2, 16


def _config(**overrides) -> ModelConfig:
    fields = dict(
        src_vocab_size=V_SRC,
        tgt_vocab_size=V_TGT,
        d_model=D,
        num_heads=H,
        num_encoder_layers=2,
        num_decoder_layers=2,
        d_ff=D_FF,
        dropout=0.0,
        max_len=16,
    )
    return ModelConfig(**(fields | overrides))


def _model(seed: int = 0, **overrides) -> Transformer:
    torch.manual_seed(seed)
    return Transformer(_config(**overrides)).eval()


SRC = torch.tensor([[3, 4, 5, 6], [7, 8, 9, PAD]])  # (B, T_k), la segunda con relleno
TGT = torch.tensor([[BOS, 5, 6], [BOS, 9, PAD]])  # (B, T_q)


def _sinusoid(max_len: int, d_model: int) -> torch.Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    rate = 10000.0 ** (-(torch.arange(d_model) // 2 * 2) / d_model)
    angle = position * rate
    return torch.where(torch.arange(d_model) % 2 == 0, angle.sin(), angle.cos()).float()


def test_src_mask_hides_padding_only():
    expected = torch.tensor([[[True, True, True, True]], [[True, True, True, False]]])
    checks.close("máscara de origen", make_src_mask(SRC, PAD), expected)


def test_tgt_mask_combines_padding_and_causality():
    lower = [[True, False, False], [True, True, False], [True, True, True]]
    no_pad_last = [[True, False, False], [True, True, False], [True, True, False]]
    expected = torch.tensor([lower, no_pad_last])
    checks.close("máscara de destino", make_tgt_mask(TGT, PAD), expected)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_matches_torch_transformer(norm_first):
    torch.manual_seed(1)
    reference = nn.Transformer(
        D, H, 2, 2, D_FF, dropout=0.0, batch_first=True, norm_first=norm_first
    ).eval()
    if not norm_first:  # nn.Transformer siempre añade una norma final; post-norm no la lleva
        reference.encoder.norm = reference.decoder.norm = None
    randomize_vectors(reference, seed=2)
    model = _model(seed=3, norm_first=norm_first, tie_weights=False)
    copy_stack(reference.encoder, model.encoder)
    copy_stack(reference.decoder, model.decoder)
    src_mask, tgt_mask = make_src_mask(SRC, PAD), make_tgt_mask(TGT, PAD)
    src = F.embedding(SRC, model.src_embed.embedding.weight) * math.sqrt(D) + _sinusoid(4, D)
    tgt = F.embedding(TGT, model.tgt_embed.embedding.weight) * math.sqrt(D) + _sinusoid(3, D)
    out = reference(
        src,
        tgt,
        tgt_mask=~torch.ones(3, 3, dtype=torch.bool).tril(),
        src_key_padding_mask=SRC == PAD,
        tgt_key_padding_mask=TGT == PAD,
        memory_key_padding_mask=SRC == PAD,
    )
    expected = F.linear(out, model.generator.weight, model.generator.bias)
    logits = model(SRC, TGT, src_mask, tgt_mask)
    checks.shape("logits", logits, (2, 3, V_TGT), "(B, T_q, V)")
    checks.close("logits", logits, expected)


def test_weight_tying_shares_storage_and_saves_v_times_d_parameters():
    tied, untied = _model(tie_weights=True), _model(tie_weights=False)
    assert tied.generator.weight is tied.tgt_embed.embedding.weight
    assert tied.generator.weight.data_ptr() == tied.tgt_embed.embedding.weight.data_ptr()
    assert count_parameters(untied) - count_parameters(tied) == V_TGT * D


def test_count_parameters_matches_the_formula():
    def mha() -> int:
        return 4 * (D * D + D)

    ffn, norm = D * D_FF + D_FF + D_FF * D + D, 2 * D
    encoder_layer = mha() + ffn + 2 * norm
    decoder_layer = 2 * mha() + ffn + 3 * norm
    embeddings = V_SRC * D + V_TGT * D
    generator = V_TGT * D + V_TGT
    expected = embeddings + 2 * encoder_layer + 2 * decoder_layer + generator
    assert count_parameters(_model(tie_weights=False)) == expected
    expected_pre = expected + 2 * norm  # normas finales del codificador y del decodificador
    assert count_parameters(_model(tie_weights=False, norm_first=True)) == expected_pre


def test_matrices_use_xavier_uniform_initialization():
    model = _model(d_model=32, d_ff=64, tie_weights=False)
    for name, p in model.named_parameters():
        if p.dim() > 1:
            fan_out, fan_in = p.shape
            bound = math.sqrt(6.0 / (fan_in + fan_out))
            assert p.abs().max() <= bound, name
            assert p.abs().max() > 0.8 * bound, name  # no es la inicialización por defecto


def test_decoder_output_does_not_depend_on_future_target_tokens():
    model = _model(seed=4)
    tgt = torch.tensor([[BOS, 5, 6, 7, 8]])
    src = SRC[:1]
    edited = tgt.clone()
    edited[0, 3:] = torch.tensor([11, 12])
    logits = model(src, tgt, make_src_mask(src, PAD), make_tgt_mask(tgt, PAD))
    logits_edited = model(src, edited, make_src_mask(src, PAD), make_tgt_mask(edited, PAD))
    checks.close("logits pasados", logits_edited[:, :3], logits[:, :3])
    assert not torch.allclose(logits_edited[:, 3:], logits[:, 3:])


def test_padded_source_tokens_do_not_affect_the_output():
    model = _model(seed=5)
    edited = SRC.clone()
    edited[1, -1] = 10  # otro token en la posición de relleno, misma máscara
    src_mask, tgt_mask = make_src_mask(SRC, PAD), make_tgt_mask(TGT, PAD)
    checks.close(
        "logits", model(edited, TGT, src_mask, tgt_mask), model(SRC, TGT, src_mask, tgt_mask)
    )


def test_decode_returns_cross_attention_weights_over_the_source():
    model = _model(seed=6)
    src_mask = make_src_mask(SRC, PAD)
    memory = model.encode(SRC, src_mask)
    out, weights = model.decode(memory, src_mask, TGT, make_tgt_mask(TGT, PAD))
    checks.shape("salida", out, (2, 3, D), "(B, T_q, D)")
    checks.shape("pesos", weights, (2, H, 3, 4), "(B, H, T_q, T_k)")
    checks.rows_sum_to_one("pesos", weights)
    assert (weights[1, :, :, -1] == 0).all()


class ScriptedModel(nn.Module):
    """Modelo falso: en el paso t propone ``script[:, t]`` para cada frase del lote."""

    def __init__(self, script: torch.Tensor, vocab_size: int) -> None:
        super().__init__()
        self.script, self.vocab_size = script, vocab_size
        self.generator = nn.Identity()
        self.calls = 0

    def encode(self, src, src_mask):
        return torch.zeros(src.size(0), src.size(1), 1)

    def decode(self, memory, src_mask, tgt, tgt_mask):
        self.calls += 1
        step = tgt.size(1) - 1
        return F.one_hot(self.script[:, : step + 1], self.vocab_size).float(), None


def test_greedy_decode_pads_after_eos_and_stops_when_all_finished():
    script = torch.tensor([[5, EOS, 7, 7, 7, 7], [6, 6, EOS, 7, 7, 7]])
    model = ScriptedModel(script, vocab_size=8)
    src = torch.ones(2, 3, dtype=torch.long)
    out = greedy_decode(model, src, make_src_mask(src, PAD), 7, BOS, EOS, PAD)
    expected = torch.tensor([[BOS, 5, EOS, PAD], [BOS, 6, 6, EOS]])
    checks.close("tokens", out, expected)
    assert model.calls == 3, "debe parar en cuanto todas las frases han producido EOS"


def test_greedy_decode_stops_at_max_len_without_eos():
    script = torch.full((3, 10), 4)
    model = ScriptedModel(script, vocab_size=8)
    src = torch.ones(3, 2, dtype=torch.long)
    out = greedy_decode(model, src, make_src_mask(src, PAD), 5, BOS, EOS, PAD)
    checks.close("tokens", out, torch.tensor([[BOS, 4, 4, 4, 4]] * 3))


def test_greedy_decode_of_real_model_is_batched_consistently():
    model = _model(seed=7)
    src_mask = make_src_mask(SRC, PAD)
    both = greedy_decode(model, SRC, src_mask, 6, BOS, EOS, PAD)
    for b in range(2):
        alone = greedy_decode(model, SRC[b : b + 1], src_mask[b : b + 1], 6, BOS, EOS, PAD)
        length = alone.size(1)
        checks.close(f"frase {b}", both[b : b + 1, :length], alone)
        assert (both[b, length:] == PAD).all()


def test_config_dropout_reaches_the_model_in_training_mode():
    model = _model(seed=8, dropout=0.3)
    masks = make_src_mask(SRC, PAD), make_tgt_mask(TGT, PAD)
    expected = model.eval()(SRC, TGT, *masks)
    checks.close("eval es determinista", model(SRC, TGT, *masks), expected)
    torch.manual_seed(0)
    assert not torch.allclose(model.train()(SRC, TGT, *masks), expected)


def _dropout_rates(model: Transformer) -> dict[str, list[float]]:
    """Tasas de los ``nn.Dropout`` de ``model``: de la atención, de la FFN y las demás."""
    rates = {"attention": [], "activation": [], "other": []}
    for name, module in model.named_modules():
        if isinstance(module, nn.Dropout):
            if name.endswith(("self_attn.dropout", "cross_attn.dropout")):
                rates["attention"].append(module.p)
            elif name.endswith("feed_forward.dropout"):
                rates["activation"].append(module.p)
            else:
                rates["other"].append(module.p)
    return rates


@pytest.mark.parametrize(
    ("attention_dropout", "activation_dropout", "attention", "activation"),
    [(None, None, 0.3, 0.3), (0.0, None, 0.0, 0.3), (None, 0.0, 0.3, 0.0), (0.1, 0.2, 0.1, 0.2)],
)
def test_attention_and_activation_dropout_replace_dropout_only_where_they_say(
    attention_dropout, activation_dropout, attention, activation
):
    model = _model(
        dropout=0.3, attention_dropout=attention_dropout, activation_dropout=activation_dropout
    )
    # 2 capas del codificador (autoatención) y 2 del decodificador (autoatención y cruzada)
    # 4 capas con una FFN cada una; la posicional y un residual por capa
    assert _dropout_rates(model) == {
        "attention": [attention] * 6,
        "activation": [activation] * 4,
        "other": [0.3] * 5,
    }


def test_separate_dropout_rates_keep_the_parameters_and_their_initialization():
    want = _model(seed=3, dropout=0.1).state_dict()
    got = _model(seed=3, dropout=0.1, attention_dropout=0.0, activation_dropout=0.0).state_dict()
    assert got.keys() == want.keys()
    for name, tensor in want.items():
        torch.testing.assert_close(got[name], tensor, msg=name)


@pytest.mark.parametrize(("attention_dropout", "want"), [(None, 0.2), (0.0, 0.0)])
def test_fused_attention_gets_the_attention_rate_in_training(monkeypatch, attention_dropout, want):
    """Con tasa 0 la atención fusionada de la CPU puede usar su núcleo rápido."""
    seen = []

    def spy(*args, dropout_p=0.0, **kwargs):
        seen.append(dropout_p)
        return F.scaled_dot_product_attention(*args, dropout_p=dropout_p, **kwargs)

    monkeypatch.setattr("course.reference.multihead.F", types.SimpleNamespace(
        scaled_dot_product_attention=spy))  # fmt: skip
    model = use_fused_kernels(_model(dropout=0.2, attention_dropout=attention_dropout).train())
    model(SRC, TGT, make_src_mask(SRC, PAD), make_tgt_mask(TGT, PAD))
    assert seen == [want] * 6


def test_attention_dropout_acts_in_training_mode():
    model = _model(seed=8, dropout=0.0, attention_dropout=0.5)
    masks = make_src_mask(SRC, PAD), make_tgt_mask(TGT, PAD)
    expected = model.eval()(SRC, TGT, *masks)
    torch.manual_seed(0)
    assert not torch.allclose(model.train()(SRC, TGT, *masks), expected)
