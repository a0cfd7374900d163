"""``course.grading.cgroups`` sin tocar los cgroups de la máquina: qué jerarquía se elige,
qué límites se escriben (v1 y v2), cómo se entra y cómo se cuentan las muertes por memoria.
La calificación de verdad, en ``tests/test_memory_guard.py``."""

import os
import subprocess
from pathlib import Path

from course.grading import cgroups

V1 = """31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
V1_MEMBERSHIP = "8:pids:/\n4:memory:/api/abc\n1:cpu:/\n0::/\n"


def test_v1_is_found_where_this_process_lives():
    found = cgroups.locate(V1, V1_MEMBERSHIP)
    assert found.version == 1
    assert found.folders == {
        "memory": Path("/sys/fs/cgroup/memory/api/abc"),
        "pids": Path("/sys/fs/cgroup/pids"),
        "cpu": Path("/sys/fs/cgroup/cpu"),
    }


def test_v2_needs_memory_and_pids_offered(tmp_path):
    mountinfo = f"30 23 0:26 / {tmp_path} rw - cgroup2 cgroup2 rw\n"
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    found = cgroups.locate(mountinfo, "0::/user.slice/grade.scope\n")
    assert found.version == 2
    assert set(found.folders) == {"memory", "pids", "cpu"}
    assert found.folders["memory"] == tmp_path / "user.slice" / "grade.scope"
    (tmp_path / "cgroup.controllers").write_text("cpu io\n")  # sin memory ni pids
    assert cgroups.locate(mountinfo, "0::/\n") is None
    assert cgroups.locate(V1.replace("memory", "nada"), V1_MEMBERSHIP) is None


def _fake(tmp_path: Path, version: int) -> cgroups.Hierarchy:
    if version == 2:
        return cgroups.Hierarchy(2, dict.fromkeys(("memory", "pids", "cpu"), tmp_path))
    folders = {name: tmp_path / name for name in ("memory", "pids", "cpu")}
    return cgroups.Hierarchy(1, folders)


def test_limits_v1_and_v2(tmp_path):
    for version in (1, 2):
        group = cgroups.Group(_fake(tmp_path / f"v{version}", version), "g")
        for folder in group.folders:
            folder.mkdir(parents=True)
        swap = "memory.memsw.limit_in_bytes" if version == 1 else "memory.swap.max"
        (group.folders[1 if version == 1 else 0] / swap).touch()  # hay swap que limitar
        cgroups._limit(group, 3 * 2**30, 99)

        def read(controller, name, group=group):
            return (group.hierarchy.folders[controller] / group.name / name).read_text()

        if version == 1:
            assert read("memory", "memory.limit_in_bytes") == str(3 * 2**30)
            assert read("memory", "memory.memsw.limit_in_bytes") == str(3 * 2**30)  # sin swap
            assert read("cpu", "cpu.shares") == "1024"
        else:
            assert read("memory", "memory.max") == str(3 * 2**30)
            assert read("memory", "memory.swap.max") == "0"  # sin swap
            assert read("memory", "memory.oom.group") == "1"
            assert read("cpu", "cpu.weight") == "100"
        assert read("pids", "pids.max") == "99"


def test_each_group_is_named_after_its_grader_and_removed(tmp_path, monkeypatch):
    hierarchy = _fake(tmp_path, 1)
    for folder in hierarchy.folders.values():
        folder.mkdir()
    monkeypatch.setattr(cgroups, "hierarchy", lambda: hierarchy)
    monkeypatch.setattr(cgroups, "_limit", lambda *args: None)
    first, second = cgroups.create(2**30, 9), cgroups.create(2**30, 9)
    assert first.name.startswith(f"{cgroups.PREFIX}{os.getpid()}-") and first != second
    assert all(folder.is_dir() for folder in first.folders)
    first.remove()
    assert not any(folder.exists() for folder in first.folders)
    assert all(folder.is_dir() for folder in second.folders)


def test_out_of_memory_kills_are_counted_from_the_group(tmp_path):
    for version, name, text in (
        (1, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n"),
        (2, "memory.events", "low 0\nhigh 0\nmax 5\noom 1\noom_kill 2\noom_group_kill 0\n"),
    ):
        group = cgroups.Group(_fake(tmp_path / f"v{version}", version), "g")
        folder = group.hierarchy.folders["memory"] / "g"
        folder.mkdir(parents=True)
        assert group.oom_kills() == 0
        (folder / name).write_text(text)
        assert group.oom_kills() == (3 if version == 1 else 2)


def test_the_wrapped_command_starts_inside_every_folder(tmp_path):
    group = cgroups.Group(_fake(tmp_path, 1), "g")
    for folder in group.folders:
        folder.mkdir(parents=True)
    command = ["sh", "-c", 'echo "$$ $(cat /proc/self/oom_score_adj)"']
    done = subprocess.run(group.wrap(command), capture_output=True, text=True, check=True)
    pid, adjust = done.stdout.split()
    assert adjust == str(cgroups.OOM_KERNEL)
    assert [path.read_text().strip() for path in group.procs] == [pid] * 3  # exec: mismo pid
    (group.procs[1]).unlink()
    (group.procs[1]).mkdir()  # no se puede escribir: no se lanza nada
    assert subprocess.run(group.wrap(["true"])).returncode == 125
