"""Quotas per sandbox, not per process: memory and processes of the whole sandbox are capped,
timeouts count the sandbox's own CPU time (a sleeping call is told from a starved one), and one
wall-clock ceiling ends a submission whatever its pattern of hangs and restarts."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest
from sandbox_helpers import FAST, FORK_SPIN_SLEEP, needs_rlimits

from autograder.sandbox import Call, cgroups

needs_cgroups = pytest.mark.skipif(cgroups.support() is not None,
                                   reason=f"no per-sandbox cgroup here: {cgroups.support()}")

HOSTILE = {
    "codesign.py": """
        import os, select, time
        import numpy as np

        def hold_memory(children, mb):
            # how many of `children` processes hold `mb` MB each at once
            read_end, write_end = os.pipe()
            pids = []
            for _ in range(children):
                pid = os.fork()
                if pid == 0:
                    try:
                        block = np.ones(mb * 2**20 // 8)
                    except MemoryError:
                        os._exit(1)
                    os.write(write_end, b"x")
                    time.sleep(60)
                    os._exit(0)
                pids.append(pid)
            os.close(write_end)
            holding, dead, stop = 0, set(), time.monotonic() + 20
            while holding + len(dead) < children and time.monotonic() < stop:
                dead |= {pid for pid in pids if pid not in dead and os.waitpid(pid, os.WNOHANG) != (0, 0)}
                ready, _, _ = select.select([read_end], [], [], 0.2)
                if ready:
                    holding += len(os.read(read_end, 64))
            return holding

    """ + FORK_SPIN_SLEEP + """
        def hog(children, seconds):
            pids = []
            for _ in range(children):
                pid = os.fork()
                if pid == 0:
                    stop = time.monotonic() + seconds
                    while time.monotonic() < stop:
                        pass
                    os._exit(0)
                pids.append(pid)
            for pid in pids:
                os.waitpid(pid, 0)
            return children
    """,
    "slow_import.py": """
        import time
        time.sleep(1.5)

        def hang(*args):
            while True:
                time.sleep(1)
    """,
}


@needs_cgroups
def test_memory_is_capped_for_the_whole_sandbox(sandbox):
    limit = 1024**3
    box = sandbox(HOSTILE, limits=replace(FAST, memory_bytes=limit, call_timeout=30.0))
    assert box.quotas.startswith("cgroup")
    outcome = box.call("codesign", "hold_memory", (8, 300))   # 2.4 GB asked for, in 8 processes
    peak = box._resources.cgroup.peak_memory_bytes()
    assert peak is not None and peak <= limit + 2**20
    assert outcome.status != "ok" or outcome.value < 8


def test_processes_are_capped_per_sandbox(sandbox):
    box = sandbox(HOSTILE, limits=replace(FAST, max_processes=16))
    outcome = box.call("codesign", "fork_bomb")
    assert outcome.status == "ok", outcome
    assert outcome.value < 16


@needs_cgroups
def test_timeouts_count_cpu_time_and_tell_sleeping_from_computing(sandbox):
    box = sandbox(HOSTILE, limits=replace(FAST, call_timeout=1.0))
    assert box.call("codesign", "spin", (0.3,)).status == "ok"
    spinning = box.call("codesign", "spin", (30,))
    assert spinning.status == "timeout" and spinning.timeout_cause == "cpu"
    sleeping = box.call("codesign", "sleep", (30,))
    assert sleeping.status == "timeout" and sleeping.timeout_cause == "blocked"


@needs_cgroups
def test_a_starved_call_is_not_charged(sandbox):
    """A busy neighbour sandbox (a hog with 15 spinning processes) cannot make an honest call
    that needs 0.6 s of CPU miss its 1 s limit: time waiting for a CPU is not the student's."""
    hog = sandbox(HOSTILE, limits=replace(FAST, call_timeout=60.0, cpu_share=2.0))
    honest = sandbox(HOSTILE, limits=replace(FAST, call_timeout=1.0))
    assert honest.call("codesign", "spin", (0.01,)).status == "ok"   # imported before the hog starts
    thread = threading.Thread(target=hog.call, args=("codesign", "hog", (15, 6.0)))
    thread.start()
    try:
        outcomes = honest.call_many([Call("codesign", "spin", (0.6,)) for _ in range(3)])
    finally:
        thread.join()
    assert [o.status for o in outcomes] == ["ok"] * 3


def test_one_ceiling_ends_the_submission_whatever_it_does(sandbox):
    """Slow import, every call hangs, every restart re-imports: the ceiling still holds."""
    limits = replace(FAST, call_timeout=1.0, import_timeout=2.0, submission_timeout=6.0)
    box = sandbox(HOSTILE, limits=limits)
    outcomes = box.call_many([Call("slow_import", "hang", (i,)) for i in range(20)])
    notebook = box.run_notebook("missing.ipynb", [])
    # 20 hanging calls would take 20 call timeouts; the submission's deadline ended them (not a
    # wall-clock assertion: the cause says which limit stopped the last one)
    assert {o.status for o in outcomes} == {"timeout"}
    assert outcomes[-1].timeout_cause == "deadline"
    assert notebook.status == "timeout"


def test_without_a_cgroup_rlimits_still_cap_processes_and_time(sandbox, monkeypatch):
    """Where no cgroup can be made, the sandbox says so and falls back to per-process limits."""
    monkeypatch.setattr(cgroups, "create", lambda limits: None)
    box = sandbox(HOSTILE, limits=replace(FAST, max_processes=16, call_timeout=1.0))
    assert box.quotas == "rlimits"
    assert box.call("codesign", "fork_bomb").value < 16
    spinning = box.call("codesign", "spin", (30,))
    assert spinning.status == "timeout" and spinning.timeout_cause in ("cpu", "load")
    sleeping = box.call("codesign", "sleep", (30,))
    assert sleeping.status == "timeout" and sleeping.timeout_cause == "blocked"


SHORT_LIVED_CHILDREN = {"codesign.py": """
    import os, signal, time

    def children_one_after_another():
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # reaped by the kernel: no parent's cutime keeps their time
        while True:
            pid = os.fork()
            if pid == 0:
                start = time.process_time()
                while time.process_time() - start < 0.1:
                    pass
                os._exit(0)
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
"""}


@pytest.mark.parametrize("isolation", ["bubblewrap", pytest.param("rlimits", marks=needs_rlimits)])
def test_without_a_cgroup_time_spent_in_children_that_exited_is_still_the_calls(sandbox, isolation, monkeypatch):
    """Without a cgroup the sandbox's time is read from its live processes. A call that forks
    child after child, each spinning 0.1 s and gone before the next reading, was always runnable
    with next to no CPU time seen: at the guard (10 x its timeout) 'load', 'machine overloaded'
    on every run, never graded (bubblewrap without a delegated cgroup, the usual instructor's
    box). Unseen time is the call's own: its CPU timeout."""
    monkeypatch.setattr(cgroups, "create", lambda limits: None)
    box = sandbox(SHORT_LIVED_CHILDREN, limits=replace(FAST, call_timeout=0.5), isolation=isolation)
    assert box.quotas == "rlimits"
    outcome = box.call("codesign", "children_one_after_another")
    assert outcome.status == "timeout" and outcome.timeout_cause == "cpu", outcome
