"""Nada de la copia de ``course`` que ve el núcleo resuelve un ejercicio (issue 20, punto 6).

Al calificar el laboratorio L, el núcleo importa ``course`` de una copia
(``course.grading.sandbox.course_copy``). Ninguna función de esa copia puede resolver un
ejercicio de L ni de un laboratorio siguiente: ni las referencias (``course.reference``),
ni una función del paquete que se llame como un ejercicio, ni las que lo resuelven con otro
nombre (``course.translation.decoding.bleu`` para el ``corpus_bleu`` del laboratorio 7).

Los ejercicios se buscan aquí por su cuenta (las celdas de solución de cada cuaderno
fuente) y los candidatos en el paquete instalado, módulo a módulo: así una función nueva del
paquete con el nombre de un ejercicio hace fallar la prueba aunque nadie la anote.
"""

import ast
import importlib
import os
import pkgutil
import subprocess
import sys
import textwrap

import nbformat
import pytest

import course
from course import labs
from course.grading import grade_notebook, sandbox

ORDER = list(labs.LABS)
# Soluciones con otro nombre: ejercicio -> expresión que lo resolvería con el paquete.
KNOWN = {
    "collate": ["course.translation.data.batching.collate", "course.translation.data.collate"],
    "corpus_bleu": ["lambda h, r: course.translation.decoding.bleu(h, r).score"],
}
needs_bwrap = pytest.mark.skipif(bool(sandbox.available()), reason=sandbox.available() or "")


def _solution_names(lab_id: str) -> set[str]:
    notebook = nbformat.read(labs.LABS[lab_id].source, as_version=4)
    names = set()
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            tree = ast.parse(cell.source)
            names |= {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    return names


def _later_names(lab_id: str) -> set[str]:
    return set().union(*(_solution_names(i) for i in ORDER[ORDER.index(lab_id) :]))


def _package_modules() -> list[str]:
    """Módulos de ``course`` que el núcleo podría importar (sin la calificación ni los catálogos)."""
    found = ["course"]
    for info in pkgutil.walk_packages(course.__path__, "course."):
        if info.name.split(".")[1] not in ("grading", "mistakes", "cli", "__main__", "commands"):
            found.append(info.name)
    return found


def _candidates(lab_id: str) -> dict[str, list[str]]:
    """Ejercicio -> expresiones del paquete instalado que podrían resolverlo."""
    names = _later_names(lab_id)
    found = {name: list(KNOWN.get(name, [])) for name in names}
    for module_name in _package_modules():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for name in names:
            if hasattr(module, name):
                found[name].append(f"{module_name}.{name}")
    return {name: paths for name, paths in found.items() if paths}


@pytest.mark.parametrize("lab_id", ORDER)
def test_the_copy_holds_no_answer(lab_id, tmp_path):
    """Rápida: en la copia, cada función o clase con nombre de ejercicio (de L o siguientes)
    o de :data:`KNOWN` es el sustituto que lanza ``NotImplementedError``; no hay referencias
    de L ni siguientes."""
    copy = sandbox.course_copy(labs.LABS[lab_id], tmp_path / "course")
    forbidden = (
        _later_names(lab_id) | {"bleu"} | {path.rsplit(".", 1)[1] for path in KNOWN["collate"]}
    )
    hidden = {m for i in ORDER[ORDER.index(lab_id) :] for m in labs.LABS[i].reference}
    assert not [p for p in (copy / "reference").glob("*.py") if p.stem in hidden]
    answers = []
    for path in sorted(copy.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name in forbidden:
                stub = len(node.body) == 2 and isinstance(node.body[1], ast.Raise)
                if not stub:
                    answers.append(f"{path.relative_to(copy)}:{node.name}")
    assert not answers, f"la copia del laboratorio {lab_id} resuelve ejercicios: {answers}"


def test_known_answers_are_stubs_in_lab7_copy(tmp_path):
    """``collate`` y ``bleu`` existen en la copia (el bucle de entrenamiento los nombra), sin código."""
    copy = sandbox.course_copy(labs.LABS["07_multi30k"], tmp_path / "course")
    for relative, name in [
        ("translation/data/batching.py", "collate"),
        ("translation/decoding.py", "bleu"),
    ]:
        text = (copy / relative).read_text(encoding="utf-8")
        assert f"def {name}(*args, **kwargs):" in text
        assert "sacrebleu.BLEU(lowercase=True)" not in text or name != "bleu"
    assert (
        "pad_sequence([s for s, _ in batch]"
        not in (copy / "translation/data/batching.py").read_text()
    )


def test_the_toy_batches_of_the_visible_tests_work_in_the_lab7_copy(tmp_path):
    """Las pruebas visibles del laboratorio 7 usan ``examples.toy_batches`` en el núcleo
    (en el zip no hay calificador): sus lotes no pueden depender del ``collate`` quitado."""
    sandbox.course_copy(labs.LABS["07_multi30k"], tmp_path / "course")
    code = textwrap.dedent("""
        from course.translation import data
        from course.student import examples
        batches = examples.toy_batches(examples.toy_tokenizer())
        print(len(batches), tuple(batches[0].src.shape))
        try:
            data.collate([], 0)
        except NotImplementedError:
            print("collate sin código")
    """)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    count, shape = done.stdout.splitlines()[0].split(" ", 1)
    assert int(count) > 1 and shape.startswith("(")
    assert done.stdout.splitlines()[1] == "collate sin código"


def _importing_notebook(lab_id: str, candidates: dict[str, list[str]]) -> nbformat.NotebookNode:
    """El cuaderno fuente con cada celda de solución cambiada por importaciones del paquete."""
    notebook = nbformat.read(labs.LABS[lab_id].source, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type != "code" or not cell.metadata.get("nbgrader", {}).get("solution"):
            continue
        names = [n.name for n in ast.parse(cell.source).body if hasattr(n, "name")]
        lines = ["import importlib", "import course"]
        for name in names:
            for path in candidates.get(name, []):
                if path.startswith("lambda"):
                    expression = path
                else:
                    module, attribute = path.rsplit(".", 1)
                    expression = f"getattr(importlib.import_module({module!r}), {attribute!r})"
                lines.append(
                    textwrap.dedent(f"""
                    try:
                        {name} = {expression}
                    except Exception as error:
                        print("no está:", {path!r}, type(error).__name__)
                    """)
                )
        cell.source = "\n".join(lines)
    return notebook


@needs_bwrap
@pytest.mark.slow
@pytest.mark.parametrize("lab_id", ORDER)
def test_importing_from_the_package_earns_nothing(lab_id, tmp_path):
    """Lenta: por laboratorio, un cuaderno cuyas respuestas importan cada candidato del paquete
    (mismo nombre que un ejercicio de L o siguientes, las referencias y :data:`KNOWN`),
    calificado por la puerta de verdad: 0 puntos automáticos."""
    candidates = _candidates(lab_id)
    assert candidates if lab_id == "07_multi30k" else True  # collate y corpus_bleu al menos
    path = tmp_path / f"{lab_id}.ipynb"
    nbformat.write(_importing_notebook(lab_id, candidates), path)
    result = grade_notebook(path, labs.LABS[lab_id])
    earned = [(c.grade_id, c.points) for c in result.cells if c.points]
    assert result.auto_points == 0, f"{lab_id}: importar del paquete da puntos: {earned}"


@pytest.mark.slow
def test_training_uses_the_notebook_collate_and_bleu_in_the_lab7_copy(tmp_path):
    """Lenta (entrena, ~30 s): la prueba rápida de entrenamiento del cuaderno 07 funciona con la copia de
    ``course`` del núcleo (sin ``collate`` ni ``bleu``) porque usa las funciones del cuaderno."""
    import subprocess
    import sys

    copy = sandbox.course_copy(labs.LABS["07_multi30k"], tmp_path / "box" / "course")
    script = textwrap.dedent("""
        import json, sys
        sys.path.insert(0, sys.argv[1])
        import sacrebleu
        from torch.nn.utils.rnn import pad_sequence
        import course
        assert course.__file__.startswith(sys.argv[1]), course.__file__
        from course.translation import data, decoding
        from course.translation.config import PRESETS
        import math
        import torch.nn.functional as F
        from course.reference.model import make_src_mask, make_tgt_mask  # laboratorio 6: está
        from course.translation.train import train
        calls = {"collate": 0, "bleu": 0}

        def collate(pairs, pad_idx):
            calls["collate"] += 1
            src = pad_sequence([s for s, _ in pairs], batch_first=True, padding_value=pad_idx)
            tgt = pad_sequence([t for _, t in pairs], batch_first=True, padding_value=pad_idx)
            return src, tgt[:, :-1], tgt[:, 1:]

        def train_step(model, batch, optimizer, scheduler, pad_idx, smoothing, clip_norm):
            model.train()
            src, tgt_in, tgt_out = batch
            logits = model(src, tgt_in, make_src_mask(src, pad_idx), make_tgt_mask(tgt_in, pad_idx))
            loss = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=pad_idx)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            return loss.item()

        def evaluate(model, batches, pad_idx):
            return 1.0, math.e

        def corpus_bleu(hypotheses, references):
            calls["bleu"] += 1
            return sacrebleu.corpus_bleu(hypotheses, [references]).score

        for stub in (lambda: data.collate([], 0), lambda: decoding.bleu([], [])):
            try:
                stub()
                raise SystemExit("la copia resuelve el ejercicio")
            except NotImplementedError:
                pass
        sums = data.synthetic_corpus(sys.argv[2], n=120)
        import dataclasses
        cfg = dataclasses.replace(PRESETS["smoke"], vocab_size=200, max_test_pairs=4, epochs=1)
        result = train(cfg, sys.argv[3], data_dir=sys.argv[2], sums=sums, progress=False,
                       log=lambda _: None, collate=collate, corpus_bleu=corpus_bleu,
                       train_step=train_step, evaluate=evaluate)
        print(json.dumps(calls | {"score": result.bleu.score}))
    """)
    env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            str(copy.parent),
            str(tmp_path / "toy"),
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    calls = __import__("json").loads(run.stdout.strip().splitlines()[-1])
    assert calls["collate"] > 0 and calls["bleu"] == 2, calls


def test_what_is_secret_per_lab_is_decided_in_labs():
    """Lo secreto de cada laboratorio: las referencias del laboratorio y de los
    siguientes, los catálogos de errores (no sus huellas) y, del calificador, todo menos el
    agente en el núcleo y todo en el zip."""
    assert labs.is_answer("reference/multihead.py", "04_multicabeza")
    assert labs.is_answer("reference/multihead.py", "02_normalizacion")
    assert not labs.is_answer("reference/attention.py", "04_multicabeza")
    assert labs.is_answer("mistakes/attention.py", "07_multi30k")
    assert not labs.is_answer("mistakes/fingerprints/01_atencion.json", "01_atencion")
    assert not labs.is_answer("mistakes/__init__.py", "01_atencion")
    assert labs.in_kernel("grading/agent.py", "01_atencion")
    assert not labs.in_kernel("grading/runner.py", "01_atencion")
    assert not labs.in_kernel("reference/attention.py", "01_atencion")
    assert labs.in_kernel("translation/decoding.py", "01_atencion")
    assert not labs.in_bundle("grading/agent.py", "07_multi30k")
    assert not labs.in_bundle("commands/grade.py", "07_multi30k")
    assert not labs.in_bundle("translation/decoding.py", "06_transformer")
    assert labs.in_bundle("translation/decoding.py", "07_multi30k")
    assert labs.in_bundle("reference/attention.py", "02_normalizacion")
    assert not labs.in_bundle("student/__pycache__/checks.cpython-311.pyc", "01_atencion")
