"""The Gradescope runner now grades in its own process, with the answer keys and the solutions
imported (the key of the student's variant is computed there): is any of that inherited by the
worker student code runs in? A worker must start from a fresh interpreter image, never from a
fork of the grader, and must not read the grader's memory through /proc."""

from __future__ import annotations

import os

import pytest
from sandbox_helpers import needs_rlimits

import solutions.lec01_codesign.answers  # noqa: F401 - the grader holds the keys, as the runner does

PROBE = {
    "codesign.py": """
        import os, sys

        def inherited():
            return sorted(m for m in sys.modules if m.split(".")[0] in ("solutions", "autograder", "pytest"))

        def grader_memory(pid):
            read = []
            for path in (f"/proc/{pid}/mem", f"/proc/{pid}/environ", f"/proc/{pid}/maps"):
                try:
                    with open(path, "rb") as f:
                        read.append((path, len(f.read(64))))
                except OSError as err:
                    read.append((path, type(err).__name__))
            return read
    """,
}


@pytest.mark.parametrize("isolation", ["bubblewrap", pytest.param("rlimits", marks=needs_rlimits)])
def test_a_worker_inherits_nothing_of_the_grader_that_holds_the_keys(sandbox, isolation):
    box = sandbox(PROBE, isolation=isolation)
    assert box.call("codesign", "inherited", ()).value == []
    for path, got in box.call("codesign", "grader_memory", (os.getpid(),)).value:
        assert not isinstance(got, int), f"{path} of the grader was readable: {got} bytes"
