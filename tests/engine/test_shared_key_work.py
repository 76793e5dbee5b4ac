"""Work every variant's key shares is done once per batch, not once per worker: `grade -j 2` on
students whose keys are not stored yet forks its workers after that work (lec01's reference forward
of the end-to-end lab, ~2.6 s of CPU: answers.end_to_end), so they inherit it."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import pytest

from autograder.engine import executors, key_cache
from autograder.engine.assignment import _variant_key, load_assignment
from autograder.engine.variants import params_for
from autograder.sandbox import Limits

NAME = "lec01_codesign"


def test_workers_forked_for_new_variants_inherit_the_work_their_keys_share(tmp_path, monkeypatch):
    from solutions.lec01_codesign import answers

    if "fork" not in __import__("multiprocessing").get_all_start_methods():
        pytest.skip("workers inherit the parent's state only when forked")
    monkeypatch.setattr(key_cache, "store_root", lambda: tmp_path / "store")
    log = tmp_path / "computed_by"
    shared = answers.end_to_end

    @lru_cache(maxsize=1)
    def recorded():
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
        return shared()

    load_assignment(NAME).key_for(params_for(NAME, "shared-0"))   # the store holds the lecture's key and one
    monkeypatch.setattr(answers, "end_to_end", recorded)          # ... nothing of the shared work is in memory
    _variant_key.cache_clear()
    log.write_text("", encoding="utf-8")

    def keys_only(name, folder, **_):   # what a worker of the batch needs of the keys
        return len(load_assignment(name).key_for(params_for(name, Path(folder).name)))

    monkeypatch.setattr(executors, "prepare_process", lambda job, fork_server: None)
    monkeypatch.setattr(executors, "grade_submission", keys_only)
    students = [executors.Submission(tmp_path / f"shared-{i}") for i in range(1, 5)]
    finished = []
    executors.ProcessPool(2).grade_all(executors.Job(NAME, Limits(), "none"), students,
                                       lambda student, result, error: finished.append((student, result, error)),
                                       lambda: None)
    assert sorted(s for s, _, _ in finished) == [s.name for s in students]
    assert all(error is None and result for _, result, error in finished), finished
    computed_by = log.read_text(encoding="utf-8").split()
    assert computed_by == [str(os.getpid())], f"the shared work was done by {computed_by}, not once by the parent"
