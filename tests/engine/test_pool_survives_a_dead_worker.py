"""A grading process of `grade -j N` that dies (killed by the kernel, or a fault no student action
is known to cause any more) costs only the student it was grading: Python's process pool fails
every submission still pending once one of its processes dies, so the classmates it had not
graded yet are graded again in fresh processes, each on its own, and only the student whose
grading kills its process again is reported failed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from autograder.engine import executors
from autograder.sandbox import Limits

NAME = "lec01_codesign"


def _dies_on_mallory(name, folder, **_):
    if Path(folder).name == "mallory":
        os._exit(9)             # the grading process itself dies, as the kernel's OOM killer would end it
    time.sleep(0.3)             # classmates still running or pending when it dies
    return f"graded {Path(folder).name} in {os.getpid()}"


def test_a_dead_grading_process_costs_only_its_own_student(tmp_path, monkeypatch):
    if "fork" not in __import__("multiprocessing").get_all_start_methods():
        pytest.skip("the stand-in grading reaches the workers only when they are forked")
    monkeypatch.setattr(executors, "prepare_process", lambda job, fork_server: None)
    monkeypatch.setattr(executors, "share_key_work", lambda assignment, submissions: None)
    monkeypatch.setattr(executors, "grade_submission", _dies_on_mallory)
    names = ["mallory", "alice", "bob", "carol", "dave"]
    finished = []
    executors.ProcessPool(2).grade_all(executors.Job(NAME, Limits(), "none"),
                                       [executors.Submission(tmp_path / n) for n in names],
                                       lambda student, result, error: finished.append((student, result, error)),
                                       lambda: None)
    assert sorted(s for s, _, _ in finished) == sorted(names), "each student finished exactly once"
    outcome = {s: (result, error) for s, result, error in finished}
    assert outcome["mallory"][0] is None and "worker process failed" in outcome["mallory"][1]
    for name in names[1:]:
        result, error = outcome[name]
        assert error is None and result.startswith(f"graded {name} in "), (name, error)
