"""Calificar la clase en un planificador (``deploy/slurm/``, ``deploy/kubernetes/``), sin
clúster: los scripts de Slurm con ``sbatch`` y Python falsos, y los Job de Kubernetes
contra ``deploy/kubernetes/job.schema.json`` (un subconjunto estricto de batch/v1 Job
escrito a partir de la API: una clave desconocida o un tipo equivocado no pasa)."""

import json
import os
import subprocess

import jsonschema
import pytest
import yaml

from course.labs import REPO

SLURM = REPO / "deploy" / "slurm"
KUBE = REPO / "deploy" / "kubernetes"


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads((KUBE / "job.schema.json").read_text())


def _manifest(name: str) -> dict:
    return yaml.safe_load((KUBE / name).read_text())


@pytest.mark.parametrize("name", ["calificar.yaml", "unir.yaml"])
def test_jobs_follow_the_schema(schema, name):
    jsonschema.Draft7Validator(schema).validate(_manifest(name))


def test_the_schema_catches_a_misspelt_key_and_a_wrong_value(schema):
    job = _manifest("calificar.yaml")
    job["spec"]["template"]["spec"]["containers"][0]["resource"] = {}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(schema).validate(job)
    job = _manifest("calificar.yaml")
    job["spec"]["template"]["spec"]["restartPolicy"] = "Always"  # un Job no lo admite
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(schema).validate(job)


def test_the_indexed_job_covers_every_shard_once():
    spec = _manifest("calificar.yaml")["spec"]
    container = spec["template"]["spec"]["containers"][0]
    shards = {e["name"]: e["value"] for e in container["env"]}["FRAGMENTOS"]
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == spec["parallelism"] == int(shards)
    assert '--shard "$((JOB_COMPLETION_INDEX + 1))/$FRAGMENTOS"' in container["args"][0]
    merge = _manifest("unir.yaml")["spec"]["template"]["spec"]["containers"][0]
    assert merge["command"][-1] == "--merge-only"


def _fake_bin(tmp_path, name: str, body: str):
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/bash\n{body}\n")
    path.chmod(0o755)
    return folder


@pytest.mark.parametrize(("grade", "task"), [(0, 0), (1, 0), (3, 3), (2, 2), (143, 143)])
def test_a_shard_task_fails_only_when_the_grader_failed(tmp_path, grade, task):
    venv = _fake_bin(tmp_path, "python", f'echo "$@" > "$(dirname "$0")/../args"; exit {grade}')
    env = {
        **os.environ, "VENV": str(venv.parent), "FRAGMENTOS": "4", "SLURM_ARRAY_TASK_ID": "3",
    }  # fmt: skip
    done = subprocess.run(
        ["bash", SLURM / "fragmento.sbatch", "--lab", "01_atencion"], env=env, cwd=tmp_path
    )
    assert done.returncode == task
    assert (tmp_path / "args").read_text().split() == [
        "-m", "course", "grade", "--shard", "3/4", "--lab", "01_atencion",
    ]  # fmt: skip


def test_launch_chains_the_merge_after_any_end_of_the_array(tmp_path):
    log = tmp_path / "sbatch.log"
    fake = _fake_bin(tmp_path, "sbatch", f'echo "$@" >> {log}; echo 4242')
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "VENV": "/v", "FRAGMENTOS": "6"}
    done = subprocess.run(
        [SLURM / "lanzar.sh", "--zip", "aula.zip"], env=env, cwd=tmp_path, capture_output=True,
        text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    array, merge = log.read_text().splitlines()
    assert "--array=1-6" in array and array.endswith("fragmento.sbatch --zip aula.zip")
    assert "--dependency=afterany:4242" in merge and merge.endswith("unir.sbatch --zip aula.zip")
    assert (tmp_path / "logs").is_dir()
