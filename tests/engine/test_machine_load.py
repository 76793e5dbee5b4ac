"""A slow machine never lowers a score: honest work that only a starved machine kept from
finishing is a grader error (retried by the next `grade` run), never the student's timeout.

The machine is made slow without changing the submission: after the worker started, the
sandbox shares one CPU with two spinning processes at the least CPU weight (`starve`), so the
honest call below, 0.1 s of CPU time, would need tens of seconds of wall time. The wall-clock guard is made short
(clock.GUARD_FACTOR) to keep the test fast; the rules are the same as with the real limits.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from autograder.engine.cases import Call
from autograder.engine.invoke import StudentCode, failure_text
from autograder.sandbox import Limits, MachineOverloaded, Sandbox, clock
from autograder.sandbox import session as sandbox_session

HONEST = '''
import time
from pathlib import Path

def work(cpu_seconds):
    """Computes for `cpu_seconds` of this process's CPU time, then answers."""
    start = time.process_time()
    while time.process_time() - start < cpu_seconds:
        pass
    return 42
'''
LIMITS = Limits(call_timeout=0.5, cell_timeout=0.5)
WORK = 0.1   # CPU seconds: well under the call timeout


def _two_hogs_on_cpu0(group: Path | None = None) -> list[subprocess.Popen]:
    """Two ordinary processes spinning on CPU 0 (in CPU group `group`, if given), once they run."""
    hogs = []
    for _ in range(2):
        hog = subprocess.Popen([sys.executable, "-c", "import os\nos.sched_setaffinity(0, {0})\nwhile True: pass"])
        if group is not None:
            (group / "cgroup.procs").write_text(str(hog.pid))
        hogs.append(hog)
    time.sleep(0.2)
    return hogs


@pytest.fixture
def starve():
    """`starve(box)`: from now on the machine gives the running sandbox almost no CPU time, as
    a busy machine would: its processes are moved to CPU 0, their cgroup's CPU weight is cut to
    the least, and two spinning processes of the test's own keep CPU 0 busy. (Its CPU quota is
    left alone: a sandbox held back by its own quota is the sandbox's doing.)"""
    hogs = []

    def starve_(box: Sandbox) -> None:
        group = box._resources.cgroup
        if group is None:
            pytest.skip("no cgroup for the sandbox here (not root, or no cgroup support)")
        cpu = group.dirs["cpu"]
        weight = cpu / "cpu.weight" if (cpu / "cpu.weight").exists() else cpu / "cpu.shares"
        weight.write_text("1" if weight.name == "cpu.weight" else "2")
        for tid in group.tasks():
            os.sched_setaffinity(tid, {0})
        hogs.extend(_two_hogs_on_cpu0())   # both spinning before the sandbox's next request

    yield starve_
    for hog in hogs:
        hog.kill()
        hog.wait()


@pytest.fixture
def short_guard(monkeypatch):
    monkeypatch.setattr(clock, "GUARD_FACTOR", 3.0)        # 1.5 s of wall time per 0.5 s call
    monkeypatch.setattr(sandbox_session, "LOAD_RETRIES", 0)  # a retry would start a starved worker


def test_an_honest_call_starved_by_the_machine_is_a_grader_error_not_a_lower_score(tmp_path, short_guard, starve):
    (tmp_path / "codesign.py").write_text(HONEST)
    with Sandbox(tmp_path, limits=LIMITS) as box:
        code = StudentCode(box, "codesign", deadline=time.monotonic() + 60)
        assert code.load().ok
        alone = code.call(Call("work", (WORK,)))
        assert alone.outcome.status == "ok" and alone.outcome.value == 42
        starve(box)
        with pytest.raises(MachineOverloaded) as raised:   # the guard ends it, not the work
            reply = code.call(Call("work", (WORK,)))
            # Today: a timeout charged to the student, feedback "死循环，或者实现太慢".
            raise AssertionError(f"graded as the student's: {reply.outcome.status} "
                                 f"({reply.outcome.timeout_cause}): {failure_text(reply.outcome, 'work')}")
        assert "overloaded" in str(raised.value) and "codesign.work" in str(raised.value)


def _notebook(path, *cells: str) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nbformat.write(notebook, str(path))


def test_an_honest_notebook_cell_starved_by_the_machine_is_a_grader_error(tmp_path, starve):
    """The cell timer's guard is GUARD_FACTOR (10) × the cell timeout inside the worker."""
    (tmp_path / "codesign.py").write_text(HONEST)
    _notebook(tmp_path / "handout.ipynb", "from codesign import work", "answer = work(0.1)")
    limits = Limits(cell_timeout=0.3, notebook_timeout=30.0)
    with Sandbox(tmp_path, limits=limits) as box:
        code = StudentCode(box, "codesign", deadline=time.monotonic() + 60)
        alone = code.run_notebook("handout.ipynb", ["answer"])
        assert alone.status == "ok" and alone.variables == {"answer": 42} and not alone.cell_errors
        starve(box)
        with pytest.raises(MachineOverloaded) as raised:
            starved = code.run_notebook("handout.ipynb", ["answer"])
            # Today: the cell's CellTimeout is the student's error, and `answer` is missing.
            raise AssertionError(f"graded as the student's: {starved.status}, {starved.cell_errors}")
        assert "handout.ipynb" in str(raised.value)


FORGED_OVERLOAD = ("import gc\n"
                   "for _run in gc.get_objects():\n"
                   "    if type(_run).__name__ == 'NotebookRun':\n"
                   "        _run.overloaded = True\n")


@pytest.mark.overload_is_a_failure   # a skip on "machine overloaded" would pass it when the grader is wrong
def test_a_notebook_that_sleeps_and_says_it_was_starved_is_graded_not_a_grader_error(tmp_path):
    """A cell sleeps 2 s (using no CPU time), the last one sets the notebook run's `overloaded`
    flag: the sandbox's CPU time was well under its share over the notebook's wall time, which was
    all the parent asked, so every run was 'machine overloaded' ('the grader failed on 1
    student(s): oscar; re-run to retry them'): a 4-line cell kept a student from ever being
    graded. Starved is on a CPU or waiting for one, not asleep."""
    _notebook(tmp_path / "handout.ipynb", "import time\ntime.sleep(2)", "answer = 42", FORGED_OVERLOAD)
    with Sandbox(tmp_path, limits=Limits(cell_timeout=5.0, notebook_timeout=30.0)) as box:
        if box._resources.cgroup.cpu_seconds() is None:
            pytest.skip("no cgroup for the sandbox here: no overload is believed without one")
        outcome = StudentCode(box, "codesign", deadline=time.monotonic() + 60).run_notebook(
            "handout.ipynb", ["answer"])
    assert not outcome.overloaded and outcome.variables == {"answer": 42}


# A busy machine may rightly stop an attempt; the grader calling the submission's own spin an
# overload on every attempt is the failure this test exists to catch.
OWN_SPIN_ATTEMPTS = 3


@pytest.mark.overload_is_a_failure   # a skip on "machine overloaded" would pass it when the grader is wrong
def test_a_notebook_spinning_through_its_own_cpu_share_is_still_its_own_timeout(tmp_path):
    """Four spinning processes keep the sandbox's cell waiting for a CPU of its own quota: that
    is the submission's doing, judged as before (the cell's timeout, the rest still runs)."""
    spin = ("import os, time\n"
            "for _ in range(4):\n"
            "    if os.fork() == 0:\n"
            "        while True: pass\n"
            "while True: pass\n")
    _notebook(tmp_path / "handout.ipynb", spin, "answer = 42")
    limits = Limits(cell_timeout=0.3, notebook_timeout=30.0, cpu_share=0.5)
    refusals = []
    for _ in range(OWN_SPIN_ATTEMPTS):
        with Sandbox(tmp_path, limits=limits) as box:
            if box._resources.cgroup is None:
                pytest.skip("no cgroup for the sandbox here")
            try:
                outcome = StudentCode(box, "codesign", deadline=time.monotonic() + 60).run_notebook(
                    "handout.ipynb", ["answer"])
            except MachineOverloaded as refused:
                refusals.append(str(refused).replace("machine overloaded", "refused as overloaded"))
                continue
        break
    else:
        pytest.fail(f"the submission's own spin was called the machine's load {OWN_SPIN_ATTEMPTS} times: {refusals}")
    assert not outcome.overloaded
    assert outcome.variables == {"answer": 42}
    assert [name for _, name, _ in outcome.cell_errors] == ["CellTimeout"]


def test_a_submissions_call_time_passing_on_a_starved_machine_is_a_grader_error(tmp_path, short_guard, starve):
    """Each honest call (5 ms of CPU time) takes a starved machine a large part of a second, so
    the submission's 1.5 s for its calls passes after a few of them (or one call's own guard
    does: a grader error either way)."""
    (tmp_path / "codesign.py").write_text(HONEST)
    with Sandbox(tmp_path, limits=LIMITS) as box:
        code = StudentCode(box, "codesign", deadline=time.monotonic() + 60)
        assert code.load().ok
        starve(box)
        code = StudentCode(box, "codesign", deadline=time.monotonic() + 1.5)
        with pytest.raises(MachineOverloaded) as raised:
            replies = code.call_many([Call("work", (0.005,)) for _ in range(8)])
            # Today: the calls after the deadline are skipped, and fail.
            raise AssertionError(f"graded as the student's: {[r.skipped or r.outcome.status for r in replies]}")
        assert "machine overloaded" in str(raised.value)


def test_a_notebooks_time_passing_on_a_starved_machine_is_a_grader_error(tmp_path, starve):
    """Twelve honest cells of 3 ms of CPU time each: the notebook's 1 s passes after a few of
    them on a starved machine."""
    (tmp_path / "codesign.py").write_text(HONEST)
    cells = ["from codesign import work"] + [f"a{i} = work(0.003)" for i in range(12)]
    _notebook(tmp_path / "handout.ipynb", *cells)
    limits = Limits(cell_timeout=5.0, notebook_timeout=1.0)
    with Sandbox(tmp_path, limits=limits) as box:
        code = StudentCode(box, "codesign", deadline=time.monotonic() + 60)
        alone = code.run_notebook("handout.ipynb", ["a11"])
        assert alone.status == "ok" and alone.variables == {"a11": 42}
        starve(box)
        with pytest.raises(MachineOverloaded):
            starved = code.run_notebook("handout.ipynb", ["a11"])
            # Today: "the notebook ran out of time before cell …", and a11 is missing.
            raise AssertionError(f"graded as the student's: {starved.status}, {starved.message}")


# The honest work both priority-lowering modules do after lowering themselves (their `lower`).
LOWERS_THEN_WORKS = '''
def work(cpu_seconds):
    lower()
    start = time.process_time()
    while time.process_time() - start < cpu_seconds:
        pass
    return 42
'''

LOWERS_ITSELF = '''
import os, time

def lower():
    """The cheapest ways an unprivileged process lowers its own CPU priority."""
    for step in (lambda: os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0)),
                 lambda: os.setpriority(os.PRIO_PROCESS, 0, 19)):
        try:
            step()
        except OSError:
            pass

lower()   # at import, as a module's top level would
''' + LOWERS_THEN_WORKS


def _call_beside_load(tmp_path, monkeypatch, source: str, share):
    """The reply of `work(WORK)` in a module of `source`, loaded in a sandbox with no cgroup of its
    own, once `share(box)` has put it beside other load."""
    from autograder.sandbox import cgroups
    monkeypatch.setattr(cgroups, "create", lambda limits: None)    # no cgroup of its own
    monkeypatch.setattr(sandbox_session, "LOAD_RETRIES", 0)
    (tmp_path / "codesign.py").write_text(source)
    with Sandbox(tmp_path, limits=LIMITS) as box:
        code = StudentCode(box, "codesign", deadline=time.monotonic() + 60)
        assert code.load().ok
        share(box)
        return code.call(Call("work", (WORK,)))


@pytest.fixture
def shared_cpu():
    """`share(box)`: the sandbox (which has no cgroup of its own here, as on a machine where none
    can be made) shares CPU 0, and one CPU group, with two ordinary spinning processes: other load
    on a grading machine. One group (made by the test, below the root of the cpu hierarchy) is
    what a grader in a systemd slice or a container has; the kernel's per-session autogroups,
    which would keep the sandbox's session apart, apply only in the root group."""
    v1, v2 = Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup")
    if (v1 / "cpu.shares").exists():
        root = v1
    elif (v2 / "cgroup.subtree_control").exists() and "cpu" in (v2 / "cgroup.subtree_control").read_text().split():
        root = v2
    else:
        root = None
    if root is None or not os.access(root, os.W_OK):
        pytest.skip("no writable cpu cgroup hierarchy here (not root?)")
    group = root / f"cs349e-test-shared-{os.getpid()}"
    group.mkdir()
    hogs, moved = [], []

    def share(box: Sandbox) -> None:
        for pid in clock.tree_tasks(box._resources.worker.proc.pid):
            os.sched_setaffinity(pid, {0})
            try:
                (group / "cgroup.procs").write_text(str(pid))
                moved.append(pid)
            except OSError:
                pass   # a thread of a process already moved
        hogs.extend(_two_hogs_on_cpu0(group))

    yield share
    for hog in hogs:
        hog.kill()
        hog.wait()
    for _ in range(50):   # the sandbox's processes are gone once it closed
        for pid in (group / "cgroup.procs").read_text().split():
            try:
                (root / "cgroup.procs").write_text(pid)
            except OSError:
                pass
        try:
            group.rmdir()
            break
        except OSError:
            time.sleep(0.1)


@pytest.mark.overload_is_a_failure   # a skip on "machine overloaded" would pass it when the grader is wrong
def test_a_submission_that_lowers_its_own_priority_is_graded_not_called_starved(tmp_path, monkeypatch, shared_cpu):
    """codesign.py puts itself at SCHED_IDLE (else nice 19), unprivileged, at import and in each
    call. Sharing its CPU with two ordinary processes, honest code gets about a third of it (the
    0.1 s call below ends in about 0.3-0.6 s); at SCHED_IDLE it got almost none (weight 3 against
    1024 each), so the grader saw an honest call kept from a CPU, 'machine overloaded', on every
    run: a grader error that never graded the student. The sandbox may not lower its priority."""
    reply = _call_beside_load(tmp_path, monkeypatch, LOWERS_ITSELF, shared_cpu)
    assert reply.outcome.status == "ok" and reply.outcome.value == 42, reply.outcome


LOWERS_ITS_AUTOGROUP = '''
import ctypes, os, time

def lower():
    """Its session's autogroup to nice 19: /proc/self is root's while the process is not
    dumpable (it changed uid), so it first makes itself dumpable again."""
    ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)   # PR_SET_DUMPABLE
    fd = os.open("/proc/self/autogroup", os.O_WRONLY)
    try:
        os.write(fd, b"19")
    finally:
        os.close(fd)
''' + LOWERS_THEN_WORKS


@pytest.fixture
def beside_the_graders_session():
    """`share(box)`: the sandbox (no cgroup of its own) shares CPU 0 with two ordinary spinning
    processes of the test's session: both in the root CPU group, where the kernel schedules
    each session (autogroup) as a group of its own."""
    try:
        enabled = Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        enabled = False
    lines = [line.split(":", 2) for line in Path("/proc/self/cgroup").read_text().splitlines()]
    cpu = [path for _, controllers, path in lines if "cpu" in controllers.split(",")] or \
          [path for number, controllers, path in lines if number == "0" and controllers == ""]
    if not enabled or cpu[:1] != ["/"]:
        pytest.skip("no autogroups for this process here (disabled, or it is in a CPU cgroup)")
    hogs = []

    def share(box: Sandbox) -> None:
        for pid in clock.tree_tasks(box._resources.worker.proc.pid):
            os.sched_setaffinity(pid, {0})
        hogs.extend(_two_hogs_on_cpu0())

    yield share
    for hog in hogs:
        hog.kill()
        hog.wait()


@pytest.mark.overload_is_a_failure   # a skip on "machine overloaded" would pass it when the grader is wrong
def test_a_submission_that_lowers_its_sessions_autogroup_is_graded_not_called_starved(
        tmp_path, monkeypatch, beside_the_graders_session):
    """No system call sets it: the student's call makes itself dumpable and writes 19 to
    /proc/self/autogroup. Without a cgroup of its own its session then got 15/1039 of the CPU
    beside an ordinary process, and the 0.1 s call was 'machine overloaded' after its 5 s guard,
    on every run (the same call at nice 0: 0.3 s). The grader reads the sandbox's priority with
    its time: a sandbox seen below the grader's own is never starved by the machine."""
    reply = _call_beside_load(tmp_path, monkeypatch, LOWERS_ITS_AUTOGROUP, beside_the_graders_session)
    assert reply.outcome.status == "timeout" and reply.outcome.timeout_cause == "cpu", reply.outcome
