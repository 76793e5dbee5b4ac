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

from autograder.sandbox import uid_fallback
from autograder.sandbox.workdir import MAX_ENTRIES

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="only a root grader gives up its uid")
pytestmark = [needs_root, needs_rlimits]

RL = dict(isolation="rlimits")
# A small per-file cap keeps the overflow cheap: the student writes 40 files of half a MB each,
# every one under the 1 MB file cap, 20 MB in all against a budget of 1 MB.
SMALL = replace(FAST, file_bytes=1024**2)
PIECE, PIECES = 512 * 1024, 40
BUDGET = SMALL.file_bytes   # what one sandbox may write in all: one scratch tmpfs's worth

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
    assert getattr(box, "disk_cap", None) == ("tmpfs" if scratch == "private scratch" else "watchdog")


def test_a_submission_stopped_for_its_writes_stays_stopped(sandbox, scratch):
    """A call that wrote past the budget faster than the watchdog reads may end first; the next
    call finds the sandbox stopped with the reason, and does not get a fresh start to write again."""
    box = sandbox(FILLER, limits=SMALL, **RL)
    home, cwd = box.call("codesign", "home").value
    first = box.call("codesign", "fill", ([cwd, home], PIECES, PIECE, 0.0), timeout=10)
    if scratch == "private scratch":
        assert first.status == "ok" and first.value[1] != 0, first
        return
    time.sleep(1.0)   # past the watchdog's next reading
    later = box.call("codesign", "home", timeout=10)
    stopped = first if first.status != "ok" else later
    assert stopped.status == "crashed" and "MB" in stopped.exc_message, (first, later)
    assert box.call("codesign", "home").status == "crashed"


def test_many_empty_files_are_bounded_too(sandbox, scratch):
    """Entries cost the disk's inodes even when empty: past the entry budget the student is refused
    (tmpfs) or stopped (watchdog)."""
    box = sandbox(FILLER, limits=SMALL, **RL)
    home, cwd = box.call("codesign", "home").value
    entries = MAX_ENTRIES   # as many as a submission may hold
    outcome = box.call("codesign", "fill", ([cwd, home], entries * 3, 0, 0.0001), timeout=20)
    if outcome.status == "ok":
        assert outcome.value[1] != 0 and outcome.value[0] == 0, outcome
    else:
        assert outcome.status == "crashed" and "文件" in outcome.exc_message, outcome
