"""La cola común de ``grade`` (``course.grading.batch``): cada proceso toma la entrega
siguiente al empezar una, las caras primero, y el resultado no depende de quién acabó antes.

Sin núcleos: ``grade_notebook`` se sustituye por uno que duerme y anota qué proceso
calificó cada entrega (los procesos de trabajo nacen de ``fork`` y lo heredan).
"""

import os
import time
from pathlib import Path

from course import grading, labs
from course.grading import batch, results, work_queue

SLOW, FAST = "07_multi30k", "01_atencion"


def _tasks(folder: Path, labs_and_students: list[tuple[str, str]]) -> list[batch.Task]:
    tasks = []
    for lab_id, student in labs_and_students:
        notebook = folder / "entregas" / student / lab_id / f"{lab_id}.ipynb"
        notebook.parent.mkdir(parents=True)
        notebook.write_text(student)  # grade califica una copia: se mira el contenido
        tasks.append(batch.Task(student, lab_id, notebook))
    return tasks


def _fake(log: Path, seconds: dict[str, float]):
    """Duerme lo de su estudiante y anota ``pid estudiante`` al empezar."""

    def fake(path, lab, timeout=None, keep=None, stage=None, **settings):
        student = path.read_text()
        if student == "muere":
            os._exit(1)
        with log.open("a") as out:
            out.write(f"{os.getpid()} {student}\n")
        time.sleep(seconds.get(student, 0.05))
        return grading.Result("", lab.id, [grading.Cell(f"punto_{student}", 1, 1)])

    return fake


def _started(log: Path) -> dict[str, list[str]]:
    """Estudiantes que empezó cada proceso, en orden."""
    by_process: dict[str, list[str]] = {}
    for line in log.read_text().splitlines():
        pid, student = line.split()
        by_process.setdefault(pid, []).append(student)
    return by_process


def test_the_expensive_labs_are_taken_first_and_the_rest_keep_their_order(tmp_path):
    tasks = _tasks(tmp_path, [(FAST, "ana"), (SLOW, "bea"), (FAST, "eva"), (SLOW, "zoe")])
    tasks.append(batch.Task("sin", FAST, None, "no hay ningún cuaderno"))
    order = [tasks[i] for i in work_queue.queue_order(tasks)]
    assert [t.student for t in order] == ["bea", "zoe", "ana", "eva", "sin"]
    every_lab = [batch.Task("x", lab.id, tmp_path) for lab in labs.available()]
    assert every_lab[work_queue.queue_order(every_lab)[0]].lab == SLOW  # el más lento de los 7


def test_two_takers_share_the_queue_each_task_once(tmp_path):
    tasks = [batch.Task(f"e{i}", FAST, tmp_path) for i in range(5)]
    queue = work_queue.WorkQueue(tasks, 2)
    first, second = queue.taker(0), queue.taker(1)
    taken = [first(), second(), first(), first(), second(), second(), first()]
    assert [item[0] for item in taken[:2]] == [0, 1]  # cada uno empieza por la suya
    assert sorted(item[0] for item in taken if item) == [0, 1, 2, 3, 4]
    assert taken[-2:] == [None, None]
    held, untouched = queue.unfinished()
    assert held == [0, 1, 2, 3, 4] and untouched == []


def test_the_worker_on_the_long_lab_takes_a_short_one_and_the_other_the_next_long(tmp_path):
    """Un lab. 7 y un lab. 5 a la vez: el del 7 acabará después, así que la siguiente
    larga (el 6) es para el otro, y el del 7 se queda la más corta."""
    labs_in_order = [SLOW, "05_capas", "06_transformer", "02_normalizacion", FAST]
    tasks = [batch.Task("x", lab_id, tmp_path) for lab_id in labs_in_order]
    queue = work_queue.WorkQueue(tasks, 2)
    on_slow, on_other = queue.taker(0), queue.taker(1)
    assert [on_slow()[1].lab, on_other()[1].lab] == [SLOW, "05_capas"]
    assert on_slow()[1].lab == FAST
    assert on_other()[1].lab == "06_transformer"
    assert on_other()[1].lab == "02_normalizacion"


def test_a_long_submission_starts_first_and_the_other_worker_takes_the_rest(tmp_path, monkeypatch):
    log = tmp_path / "empezadas.txt"
    students = ["a1", "a2", "a3", "a4", "a5", "a6", "lento"]
    monkeypatch.setattr(grading, "grade_notebook", _fake(log, {"lento": 3.0}))
    tasks = _tasks(tmp_path, [(FAST, s) for s in students[:-1]] + [(SLOW, "lento")])
    settings = batch.Settings(sandboxed=False)
    done = batch.grade_all(tasks, tmp_path / "out", 2, settings, progress=False)
    assert [(r.student, r.lab) for r in done] == [(t.student, t.lab) for t in tasks]
    assert [r.auto_points for r in done] == [1] * len(tasks) and not any(r.error for r in done)
    by_process = _started(log)
    assert sorted(sum(by_process.values(), [])) == sorted(students)
    slow_worker = next(s for s in by_process.values() if "lento" in s)
    assert slow_worker[0] == "lento"
    # Mientras duerme, el otro califica casi todo lo demás (solo la adelantada es suya).
    assert len(slow_worker) <= 2


def test_results_come_in_task_order_whoever_finishes_first(tmp_path, monkeypatch):
    log = tmp_path / "empezadas.txt"
    monkeypatch.setattr(grading, "grade_notebook", _fake(log, {"ana": 1.5, "bea": 0.0}))
    tasks = _tasks(tmp_path, [(FAST, "ana"), (FAST, "bea"), (FAST, "eva")])
    settings = batch.Settings(sandboxed=False)
    done = batch.grade_all(tasks, tmp_path / "out", 2, settings, progress=False)
    assert [r.student for r in done] == ["ana", "bea", "eva"]
    assert [r.student for r in results.read_all(tmp_path / "out")] == ["ana", "bea", "eva"]


def test_a_dying_worker_with_two_workers_costs_only_its_own_submission(tmp_path, monkeypatch):
    log = tmp_path / "empezadas.txt"
    monkeypatch.setattr(grading, "grade_notebook", _fake(log, {"ana": 0.5}))
    students = ["ana", "muere", "bea", "eva", "ivo", "zoe"]
    tasks = _tasks(tmp_path, [(FAST, s) for s in students])
    settings = batch.Settings(sandboxed=False)
    done = {r.student: r for r in batch.grade_all(tasks, tmp_path / "out", 2, settings, False)}
    assert "murió" in done["muere"].error
    assert all(done[s].auto_points == 1 and not done[s].error for s in students if s != "muere")
    written = sorted(p.parent.parent.name for p in (tmp_path / "out").rglob(results.RESULT_NAME))
    assert written == sorted(students)
