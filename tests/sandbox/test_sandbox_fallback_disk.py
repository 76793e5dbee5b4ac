"""The uid fallback's writable copy of the submission and its HOME sit in the grader's temporary
folder, not on bubblewrap's capped tmpfs: RLIMIT_FSIZE caps each file, but nothing capped how many
files a student writes there, so one submission could fill the grader's disk. Now the total is
bounded in every configuration of the fallback: a capped tmpfs under the copy and HOME where the
worker can make a mount namespace, a watchdog that measures them (and the uid's files in the shared
scratch folders) where it cannot; the result records which."""

from __future__ import annotations

import os
import time
from dataclasses import replace

import pytest
from sandbox_helpers import FAST, needs_rlimits

from autograder.sandbox import SandboxError, disk_budget, leftovers, open_files, uid_fallback

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="only a root grader gives up its uid")
pytestmark = [needs_root, needs_rlimits]

RL = dict(isolation="rlimits")
# A small per-file cap keeps the overflow cheap: the student writes 40 files of half a MB each,
# every one under the 1 MB file cap, 20 MB in all against a budget of 1 MB.
SMALL = replace(FAST, file_bytes=1024**2)
PIECE, PIECES = 512 * 1024, 40
BUDGET = disk_budget.budget_bytes(SMALL)   # what one sandbox may write in all: one scratch tmpfs's worth

FILLER = {"codesign.py": """
    import os, time

    def fill(folders, pieces, size, pause):
        # Writes `pieces` files of `size` bytes, in turn into each folder; how many bytes went in,
        # and the error that stopped it (0: none).
        written = 0
        for piece in range(pieces):
            path = os.path.join(folders[piece % len(folders)], f"fill-{piece}")
            try:
                with open(path, "wb") as handle:
                    handle.write(b"x" * size)
            except OSError as exc:
                return written, exc.errno
            written += size
            time.sleep(pause)
        return written, 0

    def home():
        return os.environ["HOME"], os.getcwd()

    held = []

    def hold_deleted(folder, pieces, size, pause):
        # Files written, deleted and kept open: no folder lists them, the disk still holds them.
        for piece in range(pieces):
            path = os.path.join(folder, f"held-{piece}")
            handle = open(path, "wb")
            held.append(handle)
            try:
                handle.write(b"x" * size)
                handle.flush()
            except OSError as exc:
                return piece, exc.errno
            os.unlink(path)
            time.sleep(pause)
        return pieces, 0

    def hold_deleted_hidden(folder, pieces, size, pause):
        # The same, from a process that made itself non-dumpable: its /proc entries belong to root
        # and its open files can be read only with CAP_SYS_PTRACE (a container's root has none).
        import ctypes
        if ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) != 0:   # PR_SET_DUMPABLE
            return -1, ctypes.get_errno()
        return hold_deleted(folder, pieces, size, pause)

    def dumpable():
        import ctypes
        return ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)   # PR_GET_DUMPABLE

    def rewrite(name, times, size, pause):
        # An honest cache: one file written again and again, never more than `size` at once.
        for _ in range(times):
            with open(name, "wb") as handle:
                handle.write(b"x" * size)
            time.sleep(pause)
        os.remove(name)
        return times
"""}


@pytest.fixture(params=["private scratch", "no mount namespace"])
def scratch(request, monkeypatch):
    """The fallback where the platform allows the worker a mount namespace, and where it does not
    (a container's default profile)."""
    monkeypatch.setattr(uid_fallback, "PRIVATE_SCRATCH", request.param == "private scratch")
    return request.param


def _bytes_below(path) -> int:
    """What the files and folders below `path` take on the host's disk, as root sees them."""
    total = 0
    for folder, dirs, files in os.walk(path):
        for name in dirs + files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except OSError:
                pass
    return total


def test_a_submission_cannot_fill_the_graders_disk_through_its_folder_and_home(sandbox, scratch):
    """40 files of half a MB, each under the 1 MB file cap, into the working folder and HOME:
    every one went to the grader's disk before. Now the student gets at most the budget, and
    the host's copy of the sandbox grows by no more than the budget and the watchdog's overshoot."""
    box = sandbox(FILLER, limits=SMALL, **RL)
    home, cwd = box.call("codesign", "home").value
    before = _bytes_below(box._resources.root)
    # A pause between files keeps the writer going past one of the watchdog's readings.
    outcome = box.call("codesign", "fill", ([cwd, home], PIECES, PIECE, 0.03), timeout=10)
    grown = _bytes_below(box._resources.root) - before
    budget = BUDGET
    if outcome.status == "ok":   # refused by the tmpfs: the student's write failed
        written, err = outcome.value
        assert err != 0 and written <= budget, outcome
    else:                        # stopped by the watchdog, which says why
        assert outcome.status == "crashed", outcome
        assert f"{budget / 1024**2:g} MB" in outcome.exc_message, outcome
    assert grown <= budget + PIECE * 2, f"the sandbox's folder grew by {grown} bytes"
    assert box.disk_cap == ("tmpfs" if scratch == "private scratch" else "watchdog")


def test_a_submission_stopped_for_its_writes_stays_stopped(sandbox, scratch):
    """A call that wrote past the budget faster than the watchdog reads may end first; the next
    call finds the sandbox stopped with the reason, and does not get a fresh start to write again."""
    box = sandbox(FILLER, limits=SMALL, **RL)
    home, cwd = box.call("codesign", "home").value
    first = box.call("codesign", "fill", ([cwd, home], PIECES, PIECE, 0.0), timeout=10)
    if scratch == "private scratch":
        assert first.status == "ok" and first.value[1] != 0, first
        return
    time.sleep(disk_budget.SAMPLE_SECONDS * 2)   # past the watchdog's next reading
    later = box.call("codesign", "home", timeout=10)
    stopped = first if first.status != "ok" else later
    assert stopped.status == "crashed" and "MB" in stopped.exc_message, (first, later)
    assert box.call("codesign", "home").status == "crashed"


def test_many_empty_files_are_bounded_too(sandbox, scratch):
    """Entries cost the disk's inodes even when empty: past the entry budget the student is refused
    (tmpfs) or stopped (watchdog)."""
    box = sandbox(FILLER, limits=SMALL, **RL)
    home, cwd = box.call("codesign", "home").value
    entries = disk_budget.BUDGET_ENTRIES
    outcome = box.call("codesign", "fill", ([cwd, home], entries * 3, 0, 0.0001), timeout=20)
    if outcome.status == "ok":
        assert outcome.value[1] != 0 and outcome.value[0] == 0, outcome
    else:
        assert outcome.status == "crashed" and "文件" in outcome.exc_message, outcome


@pytest.mark.parametrize("holder", ["hold_deleted", "hold_deleted_hidden"])
def test_files_deleted_but_held_open_count_too(sandbox, scratch, holder):
    """A file written, deleted and kept open is in no folder, yet holds its blocks: 8 such files of
    half a MB go past the 1 MB budget. `hold_deleted_hidden` holds them from a process that made
    itself non-dumpable (prctl, one call): kernels that give such a process's /proc folder to root
    hid it from a search by that folder's owner; the watchdog finds the uid's processes by their
    uids (/proc/<pid>/status), and the grader here has CAP_SYS_PTRACE to read their files (without
    it: test_disk_budget_without_ptrace.py)."""
    box = sandbox(FILLER, limits=SMALL, **RL)
    home, cwd = box.call("codesign", "home").value
    outcome = box.call("codesign", holder, (home, 8, PIECE, 0.05), timeout=10)
    if scratch == "private scratch":
        assert outcome.status == "ok" and outcome.value[1] != 0, outcome
    else:
        assert outcome.status == "crashed" and "MB" in outcome.exc_message, outcome


def test_an_honest_submission_that_rewrites_its_files_is_not_stopped(sandbox, scratch):
    """What counts is what is on the disk at each reading, not what was ever written: a file of
    0.6 MB written 30 times over several readings (18 MB in all) stays within a 1 MB budget, and
    the submission's own files (however large) are not the student's writes."""
    box = sandbox({**FILLER, "data.bin": "x" * (3 * 1024**2)}, limits=SMALL, **RL)
    outcome = box.call("codesign", "rewrite", ("cache.bin", 30, 600 * 1024, 0.04), timeout=10)
    assert outcome.status == "ok" and outcome.value == 30, outcome
    time.sleep(disk_budget.SAMPLE_SECONDS * 2)
    assert box.call("codesign", "home").status == "ok"
    assert box.disk_cap == ("tmpfs" if scratch == "private scratch" else "watchdog")


def test_without_a_mount_namespace_the_machines_other_open_folders_count_too(sandbox, monkeypatch, open_system_folder):
    """In a container every world-writable folder of the machine is the grader's disk: what the
    uid writes there counts against its budget as what it writes in /tmp does."""
    monkeypatch.setattr(uid_fallback, "PRIVATE_SCRATCH", False)
    box = sandbox(FILLER, limits=SMALL, **RL)
    assert box.call("codesign", "home").status == "ok"
    outcome = box.call("codesign", "fill", ([str(open_system_folder)], PIECES, PIECE, 0.03), timeout=10)
    assert outcome.status == "crashed" and "MB" in outcome.exc_message, outcome
    assert box.disk_cap == "watchdog"


def test_a_watchdog_that_cannot_measure_stops_the_sandbox_as_the_graders_failure(sandbox, monkeypatch):
    """Unwatched writes are not allowed to go on, so a reading that fails stops the sandbox. The student
    wrote nothing past the budget, though: the call is the grader's error (no result, graded again
    on the next run), never a student's crash told it wrote more than N MB."""
    monkeypatch.setattr(uid_fallback, "PRIVATE_SCRATCH", False)   # the watchdog, not a tmpfs

    def unreadable(self):
        raise OSError(5, "Input/output error")

    box = sandbox(FILLER, limits=SMALL, **RL)
    assert box.call("codesign", "home").status == "ok"
    monkeypatch.setattr(disk_budget.DiskWatch, "written", unreadable)
    time.sleep(disk_budget.SAMPLE_SECONDS * 3)   # past the watchdog's next reading
    with pytest.raises(SandboxError) as stopped:
        box.call("codesign", "home", timeout=10)
    assert "could not measure" in str(stopped.value) and "Input/output error" in str(stopped.value)
    assert "MB" not in str(stopped.value)
    with pytest.raises(SandboxError):
        box.run_notebook("x.ipynb", [])


def test_the_uid_fallbacks_worker_is_dumpable_so_a_graders_reading_as_its_uid_is_let_in(sandbox, scratch):
    """The uid switch makes a process non-dumpable; a grader without CAP_SYS_PTRACE (a container) can
    read a process's open files only as its uid and only while it is dumpable (open_files.py)."""
    box = sandbox(FILLER, limits=SMALL, **RL)
    outcome = box.call("codesign", "dumpable")
    assert outcome.status == "ok" and outcome.value == 1, outcome


def _watchdog_sees_hidden(monkeypatch, readings: list[set[int]]):
    """The watchdog's readings name `readings` (then the last one for good) as closed to the grader."""
    def hidden(uid, devices):
        return 0, readings.pop(0) if len(readings) > 1 else readings[0]

    monkeypatch.setattr(disk_budget, "deleted_but_open", hidden)


def test_a_process_that_hides_its_open_files_stops_the_sandbox_as_the_students_doing(sandbox, monkeypatch):
    """Where the grader has no CAP_SYS_PTRACE, a process that made itself non-dumpable keeps its open
    files from the grader even as its own uid (test_disk_budget_without_ptrace.py): the watchdog
    cannot count them, so it stops the sandbox and tells the student why; a grader's failure it is not."""
    monkeypatch.setattr(uid_fallback, "PRIVATE_SCRATCH", False)   # the watchdog, not a tmpfs
    box = sandbox(FILLER, limits=SMALL, **RL)
    assert box.call("codesign", "home").status == "ok"
    _watchdog_sees_hidden(monkeypatch, [{4242}])
    time.sleep(disk_budget.SAMPLE_SECONDS * 4)   # hidden at two readings or more
    outcome = box.call("codesign", "home", timeout=10)
    assert outcome.status == "crashed" and outcome.exc_message == disk_budget.HIDDEN_TEXT, outcome


def test_a_process_closed_for_one_reading_only_is_not_stopped(sandbox, monkeypatch):
    """A new worker is closed between its uid switch and its prctl: one reading may find it so."""
    monkeypatch.setattr(uid_fallback, "PRIVATE_SCRATCH", False)
    box = sandbox(FILLER, limits=SMALL, **RL)
    assert box.call("codesign", "home").status == "ok"
    _watchdog_sees_hidden(monkeypatch, [{4242}, set()])
    time.sleep(disk_budget.SAMPLE_SECONDS * 4)
    assert box.call("codesign", "home", timeout=10).status == "ok"


def test_with_a_mount_namespace_the_machines_other_open_folders_are_bounded_too(sandbox, open_system_folder):
    """Where the worker covers /tmp, /var/tmp, /dev/shm and /run/lock with tmpfs of its own, the
    machine's other world-writable folders (Ubuntu's /var/crash) stayed the host's disk, measured
    by nothing while the sandbox ran: 40 files of half a MB, each under the file cap, went in
    against a 1 MB budget (at full speed a call fills the grader's disk, and every student graded
    after it loses their result). Now they are covered too: a write there stops at the budget."""
    leftovers.forget_world_writable_folders()   # the walk sees the folder made for this test
    box = sandbox(FILLER, limits=SMALL, **RL)
    outcome = box.call("codesign", "fill", ([str(open_system_folder)], PIECES, PIECE, 0), timeout=10)
    assert box.disk_cap == "tmpfs"
    assert outcome.status == "ok" and outcome.value[0] <= BUDGET and outcome.value[1] != 0, outcome
    assert not any(open_system_folder.iterdir())   # nothing reached the host's folder
