"""Can a submission make the grader believe the machine starved it? A call stopped for "load"
is retried, then refused as "machine overloaded": no result, graded again on the next run. If
student code can bring that about on its own, it is never graded. Without a cgroup the sandbox's
time is read from its live processes (clock.tree_meter), which is what these attacks aim at."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sandbox_helpers import FAST, needs_rlimits

from autograder.sandbox import cgroups

CROWD = {"codesign.py": """
    import hashlib, os, signal, threading, time

    def _spin_starting(start_one, every):
        # the call itself keeps spinning, and starts one more worker every `every` s
        due = time.monotonic()
        while True:
            now = time.monotonic()
            if now >= due:
                due = now + every
                start_one()

    def crowd_and_vanish(live, life):
        # `live` children, each spinning `life` s of wall time, crowd the call off the sandbox's
        # CPU; each exits (reaped by the kernel) with its CPU time before a reading can keep it
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        def start_one():
            try:
                pid = os.fork()
            except OSError:
                return
            if pid == 0:
                stop = time.monotonic() + life
                while time.monotonic() < stop:
                    pass
                os._exit(0)
        _spin_starting(start_one, life / live)

    def threads_that_vanish(live, life):
        # as crowd_and_vanish with threads: hashing releases the GIL, so `live` of them are
        # runnable at once; each thread's own count goes with it when it ends
        data = b"x" * (1 << 20)
        def work():
            stop = time.monotonic() + life
            while time.monotonic() < stop:
                hashlib.sha256(data).digest()
        def start_one():
            try:
                threading.Thread(target=work, daemon=True).start()
            except RuntimeError:
                pass
        _spin_starting(start_one, life / live)

    def spawn_as_they_end(live, loops):
        # as crowd_and_vanish, the children small shells each counting to `loops`, reaped by
        # the kernel; one started as soon as one ended (posix_spawn: next to no time of the call's)
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        script = "i=0; while [ $i -lt %d ]; do i=$((i+1)); done" % loops
        pids = []
        while True:
            pids = [pid for pid in pids if _alive(pid)]
            while len(pids) < live:
                try:
                    pids.append(os.posix_spawn("/bin/sh", ["sh", "-c", script], {}))
                except OSError:
                    break

    def _alive(pid):
        try:
            os.kill(pid, 0)
            return True
        except OSError:
            return False

    def spin_beside_daemons(count):
        # daemons (double fork) spin outside the worker's process tree; the call spins beside them
        for _ in range(count):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    while True:
                        pass
                os._exit(0)
            os.wait()
        while True:
            pass
"""}


@pytest.mark.parametrize("isolation", ["bubblewrap", pytest.param("rlimits", marks=needs_rlimits)])
def test_a_call_crowded_by_its_own_short_lived_children_is_not_load(sandbox, isolation, monkeypatch):
    """The call spins while 16 children, each alive 80 ms, crowd it off its CPU: it got a
    sixteenth of the CPU, waited the rest, and the children's time left with them. 'load' at
    the guard, twice, 'machine overloaded' on every run. The wait is the sandbox's own."""
    monkeypatch.setattr(cgroups, "create", lambda limits: None)
    box = sandbox(CROWD, limits=replace(FAST, call_timeout=0.5), isolation=isolation)
    assert box.quotas == "rlimits"
    outcome = box.call("codesign", "crowd_and_vanish", (16, 0.08))
    assert outcome.status == "timeout" and outcome.timeout_cause == "cpu", outcome


@pytest.mark.parametrize("isolation", ["bubblewrap", pytest.param("rlimits", marks=needs_rlimits)])
def test_a_call_crowded_by_its_own_threads_that_ended_is_not_load(sandbox, isolation, monkeypatch):
    """Threads that ended took their CPU time out of the per-thread readings: 20 hashing
    threads of 0.3 s each crowded the call off its CPU, 'load' at the guard. A process's own
    count keeps its dead threads' time."""
    monkeypatch.setattr(cgroups, "create", lambda limits: None)
    box = sandbox(CROWD, limits=replace(FAST, call_timeout=0.5), isolation=isolation)
    outcome = box.call("codesign", "threads_that_vanish", (20, 0.3))
    assert outcome.status == "timeout" and outcome.timeout_cause == "cpu", outcome


@pytest.mark.parametrize("isolation", ["bubblewrap", pytest.param("rlimits", marks=needs_rlimits)])
def test_a_call_crowded_by_children_the_kernel_reaped_is_not_load(sandbox, isolation, monkeypatch):
    """Children reaped unwaited for take their CPU time with them, from any count: the call
    spun beside 22 shells, each started when one ended, with 0.2 s of CPU time seen in 5 s.
    More of the sandbox's tasks runnable than its CPUs is its own crowd: never 'load'."""
    monkeypatch.setattr(cgroups, "create", lambda limits: None)
    box = sandbox(CROWD, limits=replace(FAST, call_timeout=0.5), isolation=isolation)
    outcome = box.call("codesign", "spawn_as_they_end", (22, 30000))
    assert outcome.status == "timeout" and outcome.timeout_cause == "cpu", outcome


@needs_rlimits
def test_a_call_beside_its_own_daemons_is_not_load(sandbox, monkeypatch):
    """The uid fallback has no pid namespace: a double-forked daemon leaves the worker's process
    tree, and its CPU time is nowhere in the tree's readings. Spinning beside a dozen of them,
    the call waited for a CPU the whole time with little CPU time: 'load'."""
    monkeypatch.setattr(cgroups, "create", lambda limits: None)
    box = sandbox(CROWD, limits=replace(FAST, call_timeout=0.5), isolation="rlimits")
    assert box.quotas == "rlimits"
    outcome = box.call("codesign", "spin_beside_daemons", (12,))
    assert outcome.status == "timeout" and outcome.timeout_cause == "cpu", outcome


def judged_until_stopped(seconds: float, sees_exited: bool, reading) -> str:
    """Runs a clock.Budget over simulated time; `reading(now, judged)` is the sandbox's meter at
    `now`, `judged` telling whether the clock judges then (rather than only reading)."""
    from autograder.sandbox import clock

    moment = {}

    def meter():
        return reading(moment["now"], moment["judged"])
    setattr(meter, clock.SEES_EXITED, sees_exited)
    budget = clock.Budget(seconds, meter, ceiling=float("inf"))
    while True:
        moment["now"] = now = budget.wake_at()
        moment["judged"] = now >= budget._wake   # the attacker knows when (clock.py's own rule)
        cause = budget.check(now)
        if cause is not None:
            return cause


@pytest.mark.parametrize("sees_exited", [True, False])
def test_a_sandbox_runnable_only_when_the_clock_judges_it_is_not_starved(sees_exited):
    """The clock judges a request at times a submission can work out (one timeout in, then each
    time its CPU time so far would run out) and calls it blocked only when it is neither busy half
    the time nor runnable at that moment. A submission asleep but for a moment around each of
    those times (a cgroup counts every CPU second it spent: 0.05 s a moment) reached the guard
    and was 'load': never graded. Its readings at random times find it asleep."""
    spent = []

    def reading(now, judged):
        if judged:
            spent.append(0.05)
        return sum(spent), 0.0, judged, False

    assert judged_until_stopped(2.0, sees_exited, reading) in ("blocked", "cpu")


@pytest.mark.parametrize("sees_exited", [True, False])
def test_honest_work_a_busy_machine_keeps_from_its_cpu_is_still_load(sees_exited):
    """The other side: runnable at every reading, waiting for a CPU all but 5 % of the time."""
    import time

    start = time.monotonic()

    def reading(now, judged):
        return 0.05 * (now - start), 0.95 * (now - start), True, False

    assert judged_until_stopped(2.0, sees_exited, reading) == "load"


def test_one_reading_that_catches_no_task_runnable_does_not_make_spinning_children_blocked():
    """Without a cgroup, a call forking child after child (each spinning, gone unwaited for before
    the next reading) shows next to no CPU time, so the clock's 'blocked' rests on whether a task
    is runnable at that moment. Listing the processes races their exits: one judgment in ten
    that read the parent asleep in waitpid and the child already gone called it 'blocked' (a
    spinning call told it was sleeping; seen once on a loaded CI machine). A moment is confirmed
    by the next readings before it says 'blocked'."""
    judgments = []

    def reading(now, judged):
        if judged:
            judgments.append(now)
        return 0.0, 0.0, len(judgments) != 2, False

    assert judged_until_stopped(0.5, False, reading) == "cpu"


def test_a_sleeping_call_is_still_blocked_soon_after_its_timeout():
    import time

    start = time.monotonic()
    stopped = {}

    def reading(now, judged):
        stopped["at"] = now
        return 0.0, 0.0, False, False

    for sees_exited in (True, False):
        assert judged_until_stopped(0.5, sees_exited, reading) == "blocked"
        assert stopped["at"] - start < 0.5 + 0.2
