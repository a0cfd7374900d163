"""Bucle de entrenamiento, puntos de control, búsqueda en haz y DDP con gloo (CPU, datos de juguete)."""

import dataclasses
import math
import os
import re
import socket
import types

import pytest
import torch
import torch.multiprocessing as mp

from course import cli
from course.reference import translation
from course.reference.model import Transformer, greedy_decode, make_src_mask, use_fused_kernels
from course.reference.training import cosine_warmup_lambda
from course.translation import data, threads
from course.translation import train as train_module
from course.translation.checkpoint import for_translation, save_checkpoint
from course.translation.config import PRESETS, ModelConfig, TrainConfig
from course.translation.decoding import beam_search, bleu, translate
from course.translation.schedule import WarmupCosine
from course.translation.train import (
    CheckpointError,
    Stop,
    final_checkpoint,
    load_checkpoint,
    load_model,
    train,
)

TINY = TrainConfig(
    name="tiny",
    d_model=32,
    num_heads=2,
    num_encoder_layers=1,
    num_decoder_layers=1,
    d_ff=64,
    dropout=0.1,
    vocab_size=200,
    max_tokens=512,
    epochs=3,
    lr=3e-3,
    warmup_steps=5,
    max_test_pairs=8,
    beam_size=2,
    decode_batch_size=4,
)


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """Corpus de juguete con los nombres de Multi30k y caché del tokenizador aislada."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(data.ENV_VAR, raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    directory = tmp_path / "toy"
    return directory, data.synthetic_corpus(directory, n=160)


def _train(cfg, out, toy, **kwargs):
    return train(
        cfg, out, data_dir=toy[0], sums=toy[1], progress=False, log=lambda _: None, **kwargs
    )


def test_smoke_training_decreases_loss_and_writes_outputs(toy, tmp_path):
    result = _train(TINY, tmp_path / "run", toy)
    losses = [e["val_loss"] for e in result.history]
    assert len(losses) == TINY.epochs and losses[-1] < losses[0]
    assert sum(result.train_losses[-3:]) < sum(result.train_losses[:3])
    lines = (tmp_path / "run" / "test_2016_flickr.en.txt").read_text(encoding="utf-8")
    assert lines.count("\n") == TINY.max_test_pairs
    assert 0.0 <= result.bleu.score <= 100.0 and "case:mixed" in result.bleu.signature
    for name in ("best.pt", "last.pt", "metrics.json"):
        assert (tmp_path / "run" / name).is_file()
    state = load_checkpoint(tmp_path / "run" / "last.pt")
    assert state["step"] == result.step and state["seed"] == TINY.seed
    assert state["train_config"]["name"] == "tiny"
    for key in ("optimizer", "scheduler", "model_config"):
        assert key in state


def test_custom_step_and_evaluate_are_the_ones_called(toy, tmp_path):
    # Como en el cuaderno 07: el bucle usa las funciones del estudiante, no las de referencia.
    losses, evaluations = [], []

    def step(*args):
        losses.append(translation.train_step(*args))
        return losses[-1]

    def evaluate(*args):
        evaluations.append(translation.evaluate(*args))
        return evaluations[-1]

    cfg = dataclasses.replace(TINY, epochs=2, average_last=2, max_test_pairs=2)
    result = _train(cfg, tmp_path / "run", toy, train_step=step, evaluate=evaluate)
    assert result.step > 0 and result.train_losses == losses and len(losses) == result.step
    # una validación por época y otra para decidir entre el promedio de pesos y best.pt
    assert len(evaluations) == cfg.epochs + 1
    assert [e["val_loss"] for e in result.history] == [loss for loss, _ in evaluations[:2]]


@pytest.mark.parametrize("average_last", [1, 2])
def test_final_checkpoint_holds_the_weights_that_translated_the_test_set(
    toy, tmp_path, average_last
):
    out = tmp_path / "run"
    out.mkdir()
    (out / "average.pt").write_text("de una ejecución anterior")  # debe desaparecer o reescribirse
    cfg = dataclasses.replace(TINY, epochs=2, average_last=average_last, max_test_pairs=2)
    result = _train(cfg, out, toy)
    path = final_checkpoint(out)
    assert path.name == ("best.pt" if result.decoded_with == "best.pt" else "average.pt")
    model, _, _ = load_model(path)
    for (name, a), b in zip(
        model.state_dict().items(), result.model.state_dict().values(), strict=True
    ):
        torch.testing.assert_close(a, b, msg=name)


def test_resume_continues_from_the_same_step(toy, tmp_path):
    cfg = dataclasses.replace(TINY, epochs=2)
    full = _train(cfg, tmp_path / "full", toy, decode_test=False)
    cut = max(2, full.step // 2 + 1)  # a mitad de la segunda época o antes
    first = _train(cfg, tmp_path / "cut", toy, decode_test=False, max_steps=cut)
    assert first.step == cut and load_checkpoint(tmp_path / "cut" / "last.pt")["step"] == cut
    second = _train(cfg, tmp_path / "cut", toy, decode_test=False, resume=True)
    assert second.step == full.step
    assert second.train_losses == pytest.approx(full.train_losses[cut:], rel=1e-4)
    for (name, a), b in zip(
        full.model.state_dict().items(), second.model.state_dict().values(), strict=True
    ):
        torch.testing.assert_close(a, b, msg=name)


def test_corrupt_checkpoint_gives_spanish_error_without_traceback(toy, tmp_path, capsys):
    out = tmp_path / "run"
    _train(dataclasses.replace(TINY, epochs=1), out, toy, decode_test=False)
    blob = (out / "last.pt").read_bytes()
    (out / "last.pt").write_bytes(blob[: len(blob) // 2])  # escritura interrumpida
    with pytest.raises(CheckpointError, match="dañado o incompleto"):
        load_checkpoint(out / "last.pt")
    assert cli.main(["train", "--smoke", "--out", str(out), "--resume"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: El punto de control") and "Traceback" not in err
    (out / "best.pt").write_bytes(b"")
    with pytest.raises(CheckpointError):
        load_model(out / "best.pt")


def _tiny_model(seed=0, eos_bias=0.0):
    torch.manual_seed(seed)
    config = ModelConfig(50, 50, d_model=32, num_heads=2, num_encoder_layers=1,
                         num_decoder_layers=2, d_ff=64, dropout=0.0)  # fmt: skip
    model = Transformer(config).eval()
    model.generator.bias.data[data.EOS_IDX] += eos_bias
    return model


def _sources():
    src = torch.randint(4, 50, (5, 7), generator=torch.Generator().manual_seed(1))
    src[1, 4:] = 0
    src[3, 2:] = 0
    return src, make_src_mask(src, 0)


def test_beam_of_one_is_greedy():
    model, (src, mask) = _tiny_model(), _sources()
    greedy = greedy_decode(model, src, mask, 12, data.BOS_IDX, data.EOS_IDX, 0)
    beam = beam_search(model, src, mask, 1, 12, data.BOS_IDX, data.EOS_IDX, 0)
    assert torch.equal(beam, greedy)


@pytest.mark.parametrize("beam_size", [2, 4])
def test_beam_outputs_end_at_eos_then_padding(beam_size):
    model, (src, mask) = _tiny_model(eos_bias=3.0), _sources()
    ys = beam_search(model, src, mask, beam_size, 20, data.BOS_IDX, data.EOS_IDX, 0)
    assert ys.shape[0] == src.shape[0] and ys.shape[1] <= 20
    assert (ys[:, 0] == data.BOS_IDX).all()
    for row in ys.tolist():
        assert data.EOS_IDX in row, row
        end = row.index(data.EOS_IDX)
        assert all(t == 0 for t in row[end + 1 :]) and 0 not in row[1:end]


def test_translate_keeps_order_and_bleu_reports_both_cases():
    pairs = data.toy_pairs(6)
    tokenizer = data.train_tokenizer([t for p in pairs for t in p], vocab_size=120)
    model = _tiny_model()
    config = dataclasses.replace(model.config, src_vocab_size=tokenizer.vocab_size,
                                 tgt_vocab_size=tokenizer.vocab_size)  # fmt: skip
    torch.manual_seed(0)
    model = Transformer(config).eval()
    model.generator.bias.data[data.EOS_IDX] += 4.0  # salidas cortas, lejos de max_len
    sentences = [de for de, _ in pairs]
    one_by_one = [translate(model, tokenizer, [s], beam_size=3)[0] for s in sentences]
    assert translate(model, tokenizer, sentences, beam_size=3, batch_size=4) == one_by_one
    report = bleu(["A dog runs."], ["a dog runs."])
    assert report.lowercase_score == pytest.approx(100.0) and report.score < 100.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ddp_worker(rank, world_size, port, cfg, out, toy):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size))  # fmt: skip
    os.environ["XDG_CACHE_HOME"] = str(out / "xdg")
    torch.set_num_threads(1)
    try:
        result = train(cfg, out, data_dir=toy[0], sums=toy[1], device="cpu", progress=False,
                       log=lambda _: None, decode_test=False)  # fmt: skip
        flat = torch.cat([p.detach().flatten() for p in result.model.parameters()])
        torch.save((rank, result.step, flat), out / f"rank{rank}.pt")
    finally:
        torch.distributed.destroy_process_group()


def test_ddp_two_cpu_processes_keep_identical_parameters(toy, tmp_path):
    cfg = dataclasses.replace(TINY, epochs=1)
    mp.start_processes(_ddp_worker, args=(2, _free_port(), cfg, tmp_path, toy),
                       nprocs=2, start_method="spawn")  # fmt: skip
    results = [torch.load(tmp_path / f"rank{r}.pt") for r in range(2)]
    (r0, steps0, p0), (r1, steps1, p1) = results
    assert (r0, r1) == (0, 1) and steps0 == steps1 > 0
    torch.testing.assert_close(p0, p1, rtol=0, atol=0)
    initial = torch.cat([p.flatten() for p in Transformer(cfg.model_config(200)).parameters()])
    assert p0.shape != initial.shape or not torch.equal(p0, initial)


def test_time_limit_stops_mid_epoch_and_still_validates(toy, tmp_path):
    cfg = dataclasses.replace(TINY, epochs=50, max_minutes=1e-6, max_test_pairs=2)
    result = _train(cfg, tmp_path / "run", toy)
    assert result.step == 1 and len(result.history) == 1  # un paso, validado y traducido
    state = load_checkpoint(tmp_path / "run" / "last.pt")
    assert (state["epoch"], state["batch_in_epoch"], state["step"]) == (0, 1, 1)
    assert result.bleu is not None


def test_best_checkpoint_keeps_only_what_translation_needs(toy, tmp_path):
    _train(dataclasses.replace(TINY, epochs=1), tmp_path / "run", toy, decode_test=False)
    best = load_checkpoint(tmp_path / "run" / "best.pt")
    last = load_checkpoint(tmp_path / "run" / "last.pt")
    assert "optimizer" in last and not {"optimizer", "scheduler", "recent"} & best.keys()
    assert (tmp_path / "run" / "best.pt").stat().st_size < (
        tmp_path / "run" / "last.pt"
    ).stat().st_size / 2
    model, _, _ = load_model(tmp_path / "run" / "best.pt")
    torch.testing.assert_close(model.state_dict(), best["model"])


def _estimates(cfg, out, toy, monkeypatch, **kwargs):
    monkeypatch.setattr(train_module, "ESTIMATE_STEPS", (1, 3))
    messages = []
    train(cfg, out, data_dir=toy[0], sums=toy[1], progress=False, log=messages.append,
          decode_test=False, **kwargs)  # fmt: skip
    return [m for m in messages if m.startswith("Estimación en esta máquina")]


def test_estimate_of_the_duration_is_printed_once_from_the_first_steps(toy, tmp_path, monkeypatch):
    cfg = dataclasses.replace(TINY, epochs=4)
    [message] = _estimates(cfg, tmp_path / "run", toy, monkeypatch)
    match = re.fullmatch(r"Estimación en esta máquina: ~(\d+(?:,\d)?) min para 4 épocas "
                         r"\((\d+,\d) pasos/s\)\.", message)  # fmt: skip
    assert match, message
    assert float(match[2].replace(",", ".")) > 0


def test_estimate_says_where_the_time_limit_cuts(toy, tmp_path, monkeypatch):
    # 10 000 épocas no caben en 2,5 min: la estimación avisa de que el tope corta antes
    cfg = dataclasses.replace(TINY, epochs=10_000, max_minutes=2.5)
    [message] = _estimates(cfg, tmp_path / "run", toy, monkeypatch, max_steps=3)
    match = re.search(r"el tope de 2,5 min lo corta hacia la época (\d+,\d) ", message)
    assert match, message
    assert 0 < float(match[1].replace(",", ".")) < 10_000


def test_cli_offers_the_rapida_recipe():
    args = cli._parser().parse_args(["train", "--preset", "rapida"])
    assert args.preset == "rapida" and PRESETS["rapida"].max_minutes is not None


def test_weights_to_average_are_the_last_epochs_that_fit_in_the_time_limit():
    # 10 s por época, 40 s gastados de 60: tras esta época caben 2 más, no las 7 de la receta
    cfg = dataclasses.replace(TINY, epochs=10, max_minutes=1.0)
    assert train_module._epochs_left(cfg, 2, per_epoch=10.0, elapsed=40.0) == pytest.approx(2.0)
    cfg = dataclasses.replace(cfg, max_minutes=None)
    assert train_module._epochs_left(cfg, 2, per_epoch=10.0, elapsed=40.0) == 7


def _twin_models(dropout: float) -> tuple[Transformer, Transformer]:
    cfg = ModelConfig(src_vocab_size=23, tgt_vocab_size=19, d_model=16, num_heads=2,
                      num_encoder_layers=2, num_decoder_layers=2, d_ff=32, dropout=dropout,
                      norm_first=True)  # fmt: skip
    torch.manual_seed(0)
    plain = Transformer(cfg)
    with torch.no_grad():  # pesos y sesgos de LayerNorm lejos de 1 y 0
        for module in plain.modules():
            if type(module).__name__ == "LayerNorm":
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.5, 0.5)
    fused = Transformer(cfg)
    fused.load_state_dict(plain.state_dict())
    return plain, use_fused_kernels(fused)


def _loss_and_grads(model: Transformer, src, tgt) -> tuple[torch.Tensor, list[torch.Tensor]]:
    model.zero_grad()
    src_mask = make_src_mask(src, 0)
    logits = model(src, tgt, src_mask, torch.ones(5, 5, dtype=torch.bool).tril())
    loss = logits.logsumexp(-1).mean() - logits[..., 3].mean()
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters()]


def test_fused_kernels_compute_what_the_lab_modules_compute():
    plain, fused = _twin_models(dropout=0.0)
    src = torch.tensor([[5, 6, 7, 8, 0, 0], [9, 10, 11, 12, 13, 14]])
    tgt = torch.tensor([[1, 4, 5, 6, 7], [1, 8, 9, 0, 0]])
    want, want_grads = _loss_and_grads(plain.train(), src, tgt)
    got, got_grads = _loss_and_grads(fused.train(), src, tgt)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
    for g, w in zip(got_grads, want_grads, strict=True):
        torch.testing.assert_close(g, w, atol=1e-5, rtol=1e-4)
    switched = [m for m in fused.modules() if getattr(m, "fused", False)]
    assert {type(m).__name__ for m in switched} == {"MultiHeadAttention", "LayerNorm"}
    assert not [m for m in fused.modules() if "forward" in vars(m)]  # nada parcheado desde fuera
    assert _cross_weights(fused, src, tgt) is None  # la atención fusionada no los materializa
    use_fused_kernels(fused, enabled=False)
    assert not [m for m in fused.modules() if getattr(m, "fused", False)]
    torch.testing.assert_close(_cross_weights(fused, src, tgt), _cross_weights(plain, src, tgt))


def _cross_weights(model: Transformer, src, tgt):
    src_mask = make_src_mask(src, 0)
    memory = model.eval().encode(src, src_mask)
    return model.decode(memory, src_mask, tgt, torch.ones(5, 5, dtype=torch.bool).tril())[1]


def _captured(monkeypatch) -> list:
    """Sustituye el bucle por uno que anota la receta y las funciones que recibe."""
    calls = []

    def fake(cfg, out_dir, **kwargs):
        calls.append((cfg, kwargs))
        if "train_step" in kwargs:
            kwargs["train_step"]()
        return types.SimpleNamespace(bleu=None)

    monkeypatch.setattr(train_module, "train", fake)
    return calls


def test_epochs_minutes_and_batch_size_override_the_recipe(monkeypatch, tmp_path, capsys):
    calls = _captured(monkeypatch)
    argv = ["train", "--preset", "corta", "--epocas", "2", "--minutos", "1.5", "--lote", "1024"]
    assert cli.main([*argv, "--out", str(tmp_path)]) == 0
    [(cfg, kwargs)] = calls
    assert (cfg.epochs, cfg.max_minutes, cfg.max_tokens) == (2, 1.5, 1024)
    assert cfg == dataclasses.replace(PRESETS["corta"], epochs=2, max_minutes=1.5, max_tokens=1024)
    assert kwargs == {"resume": False}  # con la referencia en el paquete, sus funciones
    out = capsys.readouterr().out
    assert "Receta «corta»: 2 épocas como máximo, tope de 1,5 min, lotes de 1024 tokens" in out


def test_the_short_recipe_fits_in_three_minutes():
    short = PRESETS["corta"]
    assert short.max_minutes is not None and short.max_minutes <= 3
    assert short.model_config(4000) == PRESETS["rapida"].model_config(4000)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--epocas", "0"], "argumento --epocas: debe ser mayor que cero, no 0"),
        (["--minutos", "-1"], "argumento --minutos: debe ser mayor que cero, no -1"),
        (["--lote", "mil"], "argumento --lote: «mil» no es un número entero"),
    ],
)
def test_bad_overrides_are_refused_in_spanish(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["train", *argv])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def _lab7_notebook(path, step_body: str):
    """Un cuaderno con la forma del 07: preparación, una demostración, respuestas y pruebas."""
    import nbformat

    def cell(source, **nbgrader):
        made = nbformat.v4.new_code_cell(source)
        if nbgrader:
            made.metadata["nbgrader"] = nbgrader
        return made

    cells = [
        cell("import math\nPAD = 0", grade_id="preparacion", solution=False, grade=False),
        cell("from math import sqrt\n(OUT / 'demo').write_text('no')"),  # solo su import
        cell("def collate(pairs, pad_idx):\n    return pairs", grade_id="ej1", solution=True),
        cell(f"def train_step(*args):\n    {step_body}", grade_id="ej3", solution=True),
        cell("def evaluate(m, b, p):\n    return (1.0, math.e)", grade_id="ej4", solution=True),
        cell("def corpus_bleu(h, r):\n    return 1.0", grade_id="ej6", solution=True),
        cell("raise SystemExit('prueba')", grade_id="ej3_prueba", grade=True, points=1),
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def test_train_takes_the_students_functions_from_the_notebook(monkeypatch, tmp_path, capsys):
    calls = _captured(monkeypatch)
    notebook = _lab7_notebook(tmp_path / "07.ipynb", "return sqrt(4.0)")
    assert (
        cli.main(["train", "--smoke", "--out", str(tmp_path / "r"), "--cuaderno", str(notebook)])
        == 0
    )
    [(_, kwargs)] = calls
    assert set(kwargs) == {"resume", "collate", "train_step", "evaluate", "corpus_bleu"}
    assert kwargs["train_step"]() == 2.0 and kwargs["evaluate"](None, None, 0)[0] == 1.0
    assert not (tmp_path / "demo").exists()  # de las demás celdas, solo los import
    assert f"tus funciones de {notebook}" in capsys.readouterr().out


def test_unfinished_exercises_or_no_notebook_are_explained_in_spanish(
    monkeypatch, tmp_path, capsys
):
    from course.commands import train as command

    _captured(monkeypatch)
    notebook = _lab7_notebook(tmp_path / "07.ipynb", "raise NotImplementedError()")
    assert cli.main(["train", "--smoke", "--out", str(tmp_path), "--cuaderno", str(notebook)]) == 2
    err = capsys.readouterr().err
    assert "aún tiene ejercicios sin hacer" in err and "Traceback" not in err
    # El paquete del estudiante no trae la referencia: sin cuaderno, qué hacer.
    monkeypatch.setattr(command, "present", lambda module: module != "reference.translation")
    monkeypatch.setattr(command, "NOTEBOOK", tmp_path / "no-existe.ipynb")
    assert cli.main(["train", "--smoke", "--out", str(tmp_path)]) == 2
    assert "python -m course empezar 07_multi30k" in capsys.readouterr().err


def _optimizer() -> torch.optim.Optimizer:
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)


def _by_hand(step: int, warmup: int = 4, total: int = 20) -> float:
    """Calentamiento lineal hasta 1 y coseno hasta 0 en ``total``, escrito a mano."""
    if step <= warmup:
        return step / warmup
    return 0.5 * (1 + math.cos(math.pi * min(1.0, (step - warmup) / (total - warmup))))


def _rates(scheduler, optimizer, steps: int) -> list[float]:
    rates = []
    for _ in range(steps):
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return rates


def test_scheduler_without_time_limit_is_warmup_and_cosine():
    optimizer = _optimizer()
    rates = _rates(WarmupCosine(optimizer, warmup=4, total_steps=20), optimizer, 24)
    assert rates == pytest.approx([_by_hand(s) for s in range(1, 25)])
    twin = _optimizer()
    lambda_lr = torch.optim.lr_scheduler.LambdaLR(twin, cosine_warmup_lambda(4, 20))
    assert rates == pytest.approx(_rates(lambda_lr, twin, 24))


def test_scheduler_with_time_limit_follows_the_clock_after_warmup():
    now = [1000.0]
    scheduler = WarmupCosine(_optimizer(), 4, 20, seconds=100.0, clock=lambda: now[0])
    now[0] = 5000.0  # leer los datos no cuenta: el reloj empieza con restart
    scheduler.restart()
    now[0] = 5090.0  # el tiempo no cambia el calentamiento
    assert [scheduler.factor(s) for s in (1, 2, 3, 4)] == pytest.approx([0.25, 0.5, 0.75, 1.0])
    now[0] = 5050.0  # mitad del tiempo: avance 4 + 0,5 · 16 = paso 12, aunque vaya por el 5
    assert scheduler.elapsed() == 50.0
    assert scheduler.factor(5) == pytest.approx(_by_hand(12))
    assert scheduler.factor(15) == pytest.approx(_by_hand(15))  # los pasos van por delante
    now[0] = 5100.0  # tiempo agotado: tasa 0
    assert scheduler.factor(5) == 0.0


def test_scheduler_state_survives_a_checkpoint_without_its_clock(tmp_path):
    optimizer = _optimizer()
    scheduler = WarmupCosine(optimizer, 4, 20)
    _rates(scheduler, optimizer, 7)
    state = scheduler.state_dict()
    assert not {"clock", "started"} & state.keys()
    torch.save(state, tmp_path / "s.pt")
    again_optimizer = _optimizer()
    again = WarmupCosine(again_optimizer, 4, 20)
    again.load_state_dict(torch.load(tmp_path / "s.pt", weights_only=True))
    again_optimizer.param_groups[0]["lr"] = again.get_last_lr()[0]
    assert _rates(again, again_optimizer, 3) == pytest.approx([_by_hand(s) for s in (8, 9, 10)])


def test_stop_reasons_are_an_enum_with_spanish_values(toy, tmp_path):
    assert {stop.value for stop in Stop} == {"límite de pasos", "tope de tiempo"}
    messages = []
    cfg = dataclasses.replace(TINY, epochs=50, max_minutes=1e-6, max_test_pairs=2)
    train(cfg, tmp_path / "run", data_dir=toy[0], sums=toy[1], progress=False,
          log=messages.append, decode_test=False)  # fmt: skip
    assert "Entrenamiento detenido en el paso 1 (época 1): tope de tiempo." in messages


def _tiny_state(tokenizer, step: int = 3) -> dict:
    model = _tiny_model()
    config = dataclasses.replace(model.config, src_vocab_size=tokenizer.vocab_size,
                                 tgt_vocab_size=tokenizer.vocab_size)  # fmt: skip
    model = Transformer(config)
    return {
        "version": 1, "model": model.state_dict(), "model_config": dataclasses.asdict(config),
        "train_config": dataclasses.asdict(TINY), "step": step,
        "tokenizer": tokenizer.tokenizer.to_str(), "optimizer": {"lr": 0.1},
    }  # fmt: skip


def test_checkpoint_round_trip_and_translation_copy(tmp_path):
    pairs = data.toy_pairs(6)
    tokenizer = data.train_tokenizer([t for p in pairs for t in p], vocab_size=120)
    state = _tiny_state(tokenizer)
    save_checkpoint(tmp_path / "run" / "last.pt", state)
    loaded = load_checkpoint(tmp_path / "run" / "last.pt")
    assert loaded.keys() == state.keys() and loaded["step"] == 3
    torch.testing.assert_close(loaded["model"], state["model"])
    assert "optimizer" not in for_translation(loaded)
    save_checkpoint(tmp_path / "run" / "best.pt", for_translation(loaded))
    assert final_checkpoint(tmp_path / "run").name == "best.pt"
    model, tok, _ = load_model(tmp_path / "run" / "best.pt", fused=True)
    assert not model.training and tok.tokenizer.to_str() == state["tokenizer"]
    assert {type(m).__name__ for m in model.modules() if getattr(m, "fused", False)} == {
        "MultiHeadAttention", "LayerNorm"
    }  # fmt: skip
    torch.testing.assert_close(model.state_dict(), state["model"])
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["best.pt", "last.pt"]


def test_interrupted_write_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    pairs = data.toy_pairs(6)
    tokenizer = data.train_tokenizer([t for p in pairs for t in p], vocab_size=120)
    path = tmp_path / "last.pt"
    save_checkpoint(path, _tiny_state(tokenizer, step=3))

    def interrupted(obj, target):
        with open(target, "wb") as f:
            f.write(b"PK\x03\x04 a medias")
        raise KeyboardInterrupt

    monkeypatch.setattr(torch, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(path, _tiny_state(tokenizer, step=4))
    assert load_checkpoint(path)["step"] == 3
    assert [p.name for p in tmp_path.iterdir()] == ["last.pt"]  # ni rastro del .part
    monkeypatch.undo()
    save_checkpoint(path, {"model": {}})
    with pytest.raises(CheckpointError, match="le faltan version"):
        load_checkpoint(path)
    with pytest.raises(CheckpointError, match="No existe"):
        load_checkpoint(tmp_path / "otro.pt")


@pytest.mark.parametrize(
    ("cores", "busy", "want"), [(2, 1.0, 1), (2, 0.3, 2), (8, 3.4, 5), (2, 6.0, 1), (4, None, 4)]
)
def test_one_thread_less_per_core_that_other_programs_keep_busy(cores, busy, want):
    assert threads.training_threads(cores, busy) == want


def test_threads_follow_the_free_cores_and_come_back(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(threads, "busy_cores", lambda: 1.0)  # p. ej. «yes > /dev/null»
    before, messages = torch.get_num_threads(), []
    torch.set_num_threads(2)
    try:
        with threads.beside_others(True, messages.append) as adjust:
            adjust()
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        monkeypatch.setenv("OMP_NUM_THREADS", "2")  # quien ejecuta manda
        with threads.beside_others(True, messages.append) as adjust:
            adjust()
            assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert messages == ["Otros programas ocupan ~1,0 núcleos: se entrena con 1 hilo de 2."]


def test_busy_cores_is_a_share_of_the_machine():
    busy = threads.busy_cores(0.05)
    assert busy is None or 0.0 <= busy <= os.cpu_count()


def test_recipe_passes_attention_and_activation_dropout_to_the_model():
    config = TINY.model_config(200)
    assert (config.attention_dropout, config.activation_dropout) == (None, None)  # las de dropout
    cfg = dataclasses.replace(TINY, attention_dropout=0.0, activation_dropout=0.05)
    model = Transformer(cfg.model_config(200))
    rates = {n: m.p for n, m in model.named_modules() if isinstance(m, torch.nn.Dropout)}
    assert {p for n, p in rates.items() if n.endswith("attn.dropout")} == {0.0}
    assert {p for n, p in rates.items() if n.endswith("feed_forward.dropout")} == {0.05}
    others = {p for n, p in rates.items() if not n.endswith(("attn.dropout", "forward.dropout"))}
    assert others == {0.1}  # residuales y posicional


def _as_before_separate_rates(path) -> None:
    """Reescribe ``path`` como lo guardaba el curso antes de las tasas de *dropout* separadas."""
    state = load_checkpoint(path)
    for key in ("attention_dropout", "activation_dropout"):
        del state["model_config"][key]
        del state["train_config"][key]
    save_checkpoint(path, state)


def test_checkpoints_from_before_separate_dropout_rates_load_and_resume(toy, tmp_path):
    out = tmp_path / "run"
    cfg = dataclasses.replace(TINY, epochs=2)
    _train(cfg, out, toy, decode_test=False, max_steps=3)
    _as_before_separate_rates(out / "last.pt")
    model, _, _ = load_model(out / "last.pt")
    assert (model.config.attention_dropout, model.config.activation_dropout) == (None, None)
    assert _train(cfg, out, toy, decode_test=False, resume=True).step > 3
