"""El valor por omisión de ``grade --jobs``: las CPU que el proceso puede usar de verdad,
con cgroups, afinidad y entorno falsos (``course.grading.cpus``)."""

from course.grading import cpus

MACHINE = set(range(8))


def _v1(tmp_path, quota: int, period: int = 100000, path: str = "slurm/uid_0/job_7"):
    tmp_path.mkdir(exist_ok=True)
    own = tmp_path / "cgroup"
    own.write_text(f"5:memory:/{path}\n3:cpu,cpuacct:/{path}\n0::/\n")
    folder = tmp_path / "fs" / "cpu,cpuacct" / path
    folder.mkdir(parents=True)
    (folder / "cpu.cfs_quota_us").write_text(f"{quota}\n")
    (folder / "cpu.cfs_period_us").write_text(f"{period}\n")
    return tmp_path / "fs", own


def _v2(tmp_path, limits: dict[str, str], path: str = "kubepods/pod1/c1"):
    own = tmp_path / "cgroup"
    own.write_text(f"0::/{path}\n")
    for where, limit in limits.items():
        folder = tmp_path / "fs" / where
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "cpu.max").write_text(f"{limit}\n")
    return tmp_path / "fs", own


def test_affinity_alone(tmp_path):
    assert cpus.usable({}, tmp_path, tmp_path / "no", affinity={0, 3}) == 2


def test_slurm_cpus_per_task(tmp_path):
    found = cpus.usable({"SLURM_CPUS_PER_TASK": "3"}, tmp_path, tmp_path / "no", MACHINE)
    assert found == 3
    assert cpus.usable({"SLURM_CPUS_PER_TASK": "x"}, tmp_path, tmp_path / "no", MACHINE) == 8


def test_cgroup_v1_quota_rounds_up(tmp_path):
    fs, own = _v1(tmp_path, quota=150000)
    assert cpus.usable({}, fs, own, MACHINE) == 2
    fs, own = _v1(tmp_path / "sin", quota=-1)
    assert cpus.usable({}, fs, own, MACHINE) == 8


def test_cgroup_v2_takes_the_tightest_ancestor(tmp_path):
    limits = {"kubepods/pod1/c1": "500000 100000", "kubepods/pod1": "300000 100000"}
    fs, own = _v2(tmp_path, limits)
    assert cpus.usable({}, fs, own, MACHINE) == 3
    assert cpus.usable({"SLURM_CPUS_PER_TASK": "1"}, fs, own, MACHINE) == 1


def test_a_quota_below_one_cpu_still_gives_one_job(tmp_path):
    fs, own = _v2(tmp_path, {"kubepods/pod1/c1": "20000 100000"})
    assert cpus.usable({}, fs, own, MACHINE) == 1


def test_this_machine_counts_at_least_one():
    assert cpus.usable() >= 1
