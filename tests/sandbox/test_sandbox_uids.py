"""Sandboxes started by root never share a host uid, so one cannot starve or touch another."""

from __future__ import annotations

import os
import textwrap
import threading
import time
from dataclasses import replace

import pytest
from sandbox_helpers import FAST, needs_bwrap, notebook_json

from autograder.sandbox import uids
from autograder.sandbox.launcher import processes_of

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="only a root grader switches host uids")

HOARDER = {"codesign.py": """
    import os, time

    def identity():
        return os.getuid(), os.getgid(), os.getpid()

    def hoard(seconds):
        # Forks until the process limit says no (EAGAIN), keeps them all alive, then reaps them.
        children = []
        try:
            while True:
                pid = os.fork()
                if pid == 0:
                    time.sleep(seconds)
                    os._exit(0)
                children.append(pid)
        except OSError as exc:
            errno = exc.errno
        for pid in children:
            os.waitpid(pid, 0)
        return len(children), errno

    def leave(seconds):
        # Forks until EAGAIN and returns at once: the children hold the limit for `seconds`.
        count = 0
        try:
            while True:
                if os.fork() == 0:
                    time.sleep(seconds)
                    os._exit(0)
                count += 1
        except OSError:
            return count
"""}

FORKING_NOTEBOOK = notebook_json("""
    import os
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    forked = True
""")


# -- uid allocation ----------------------------------------------------------------------------

def _draws(monkeypatch, *offsets):
    """The next draws of uids.claim_uid are FIRST_UID + each of `offsets`, then random again."""
    queue = list(offsets)
    drawn = uids._draw
    monkeypatch.setattr(uids, "_draw", lambda: queue.pop(0) if queue else drawn())


def test_claimed_uids_are_distinct_in_the_range_and_not_the_graders_pid():
    """Can anyone work out a sandbox's uid in advance? It was FIRST_UID + grader pid * 64 + slot,
    and the grader's pid is visible to every login account, which could then open a folder of its
    own to that uid alone (an ACL entry) before grading. Now each is drawn at random from 2**28."""
    pid_range = range(uids.FIRST_UID + os.getpid() * 64, uids.FIRST_UID + os.getpid() * 64 + 64)
    claimed = [uids.claim_uid() for _ in range(8)]
    try:
        assert not all(uid in pid_range for uid in claimed), claimed
        assert len({uid >> 20 for uid in claimed}) > 1, claimed      # spread over the range
        assert len(set(claimed)) == 8
        assert all(uids.FIRST_UID <= uid < uids.FIRST_UID + uids.COUNT for uid in claimed)
    finally:
        for uid in claimed:
            uids.release_uid(uid)


def test_a_uid_that_is_held_runs_processes_or_is_retired_is_drawn_again(monkeypatch):
    """Is a drawn uid another open sandbox holds, one a process still runs as, or a retired one
    ever given? Each makes claim_uid draw again."""
    held = uids.claim_uid()
    try:
        first = uids.FIRST_UID
        monkeypatch.setattr(uids, "running_uids", lambda: {first + 1})
        monkeypatch.setattr(uids, "_retired", {first + 2})
        _draws(monkeypatch, held - first, 1, 2, 3)
        uid = uids.claim_uid()
        uids.release_uid(uid)
        assert uid == first + 3
    finally:
        uids.release_uid(held)


def test_a_uid_this_process_gave_out_before_is_swept_before_it_is_given_again(monkeypatch):
    """A uid drawn again by the process that released it is given only where before_reuse (the
    fallback's fresh sweep) says nothing of it is left; otherwise it is retired and another drawn."""
    first = uids.FIRST_UID
    _draws(monkeypatch, 40, 40, 41)
    uids.release_uid(uids.claim_uid())
    asked = []
    uid = uids.claim_uid(lambda used, released_at: asked.append(used) or False)
    uids.release_uid(uid)
    assert asked == [first + 40] and uid == first + 41
    assert first + 40 in uids._retired


def test_two_grader_processes_never_hold_the_same_uid(monkeypatch):
    """Do concurrent graders (`grade -j 2` forks them) keep apart when they draw the same uid? One
    process's claims were in its memory only, and its pid kept the ranges apart; the claim now
    also holds a lock every grader process on the machine sees."""
    _draws(monkeypatch, 77, 78)                     # both processes draw 77 first
    go, answer = os.pipe(), os.pipe()
    child = os.fork()
    if child == 0:                                  # a grader forked before either claimed
        try:
            os.read(go[0], 1)
            os.write(answer[1], str(uids.claim_uid()).encode())
        finally:
            os._exit(0)
    held = uids.claim_uid()
    try:
        os.write(go[1], b"x")
        got = int(os.read(answer[0], 64) or b"0")
    finally:
        os.waitpid(child, 0)
        uids.release_uid(held)
        for fd in (*go, *answer):
            os.close(fd)
    assert held == uids.FIRST_UID + 77 and got == uids.FIRST_UID + 78


def test_without_a_mapped_range_sandboxes_fall_back_to_the_shared_uid(monkeypatch, capsys):
    monkeypatch.setattr(uids, "_mapped", lambda first, count: False)
    uids._warn_shared.cache_clear()
    assert uids.claim_uid() == uids.SHARED_UID
    assert "share uid 65534" in capsys.readouterr().err
    uids._warn_shared.cache_clear()


def test_the_whole_range_fits_below_two_to_the_31():
    assert uids.FIRST_UID + uids.COUNT - 1 <= 2**31 - 1
    assert uids.FIRST_UID > 65534


# -- under bubblewrap, as root -------------------------------------------------------------------

@needs_root
@needs_bwrap
def test_two_sandboxes_run_concurrently_as_different_uids(sandbox):
    first, second = sandbox(HOARDER), sandbox(HOARDER)
    uid_a, gid_a, _ = first.call("codesign", "identity").value
    uid_b, gid_b, _ = second.call("codesign", "identity").value
    assert uid_a == gid_a == first.host_uid and uid_b == gid_b == second.host_uid
    assert uid_a != uid_b and min(uid_a, uid_b) >= uids.FIRST_UID


@needs_root
@needs_bwrap
def test_a_uid_stays_with_its_sandbox_across_a_restart_and_is_freed_on_close(sandbox, monkeypatch):
    spin = "\ndef spin():\n    while True:\n        pass\n"
    box = sandbox({"codesign.py": textwrap.dedent(HOARDER["codesign.py"]) + spin})
    uid = box.call("codesign", "identity").value[0]
    first_worker = box._resources.worker
    assert box.call("codesign", "spin", timeout=0.3).status == "timeout"
    assert box.call("codesign", "identity").value[0] == uid
    assert box._resources.worker is not first_worker   # it was a fresh worker
    box.close()
    assert processes_of(uid) == 0
    # Free again: drawn once more, it is given out.
    monkeypatch.setattr(uids, "_draw", lambda: uid - uids.FIRST_UID)
    again = uids.claim_uid()
    uids.release_uid(again)
    assert again == uid


@needs_root
@needs_bwrap
def test_a_fork_storm_in_one_sandbox_does_not_starve_another(sandbox):
    """Sandbox A holds every process it may have while sandbox B, started before the storm,
    runs a notebook (itself a fork) that forks again: B is unaffected."""
    limits = replace(FAST, max_processes=16, call_timeout=15.0)
    storm, victim = sandbox(HOARDER, limits=limits), sandbox(
        {**HOARDER, "handout.ipynb": FORKING_NOTEBOOK}, limits=limits)
    assert victim.call("codesign", "identity").status == "ok"   # its worker runs already
    assert storm.call("codesign", "identity").status == "ok"
    result = {}
    hoarding = threading.Thread(target=lambda: result.update(
        outcome=storm.call("codesign", "hoard", (3.0,))))
    hoarding.start()
    try:
        deadline = time.monotonic() + 10
        while processes_of(storm.host_uid) < limits.max_processes and time.monotonic() < deadline:
            time.sleep(0.02)
        assert processes_of(storm.host_uid) == limits.max_processes   # A is at its limit
        notebook = victim.run_notebook("handout.ipynb", ["forked"])
    finally:
        hoarding.join()
    assert notebook.status == "ok" and notebook.cell_errors == (), notebook
    assert notebook.variables == {"forked": True}
    children, errno = result["outcome"].value
    assert (children, errno) == (limits.max_processes - 1, 11)    # the worker + its children; EAGAIN


@needs_root
@needs_bwrap
def test_a_notebook_that_cannot_fork_costs_the_notebook_not_the_worker(sandbox, monkeypatch):
    """The submission uses up its own process limit; the notebook reports it, the worker lives."""
    monkeypatch.setattr("autograder.sandbox.plotting.ENABLED", False)  # no child forked ahead
    limits = replace(FAST, max_processes=8)
    box = sandbox({**HOARDER, "handout.ipynb": FORKING_NOTEBOOK}, limits=limits)
    _, _, worker_pid = box.call("codesign", "identity").value
    assert box.call("codesign", "leave", (2.0,)).value == limits.max_processes - 1
    notebook = box.run_notebook("handout.ipynb", ["forked"])
    assert notebook.status == "crashed" and "could not start" in notebook.message, notebook
    assert box.call("codesign", "identity").value[2] == worker_pid   # the same worker answers


# -- a uid given out again owns nothing ----------------------------------------------------------

LEAVER = {"codesign.py": """
    import os

    def leave(folder):
        path = os.path.join(folder, f"left-by-{os.getuid()}")
        with open(path, "w") as handle:
            handle.write("a previous student's private data")
        os.chmod(path, 0o600)
        return path

    def identity():
        return os.getuid()
"""}


@needs_root
@pytest.mark.needs_rlimits_fallback
def test_a_uid_is_not_given_out_again_while_a_file_it_left_may_remain(sandbox, monkeypatch):
    """Under the uid fallback a sandbox's 0600 file in a world-writable folder made after the
    machine's walk of them (kept 10 minutes; here two levels below /srv, as a login account's
    `mkdir -m 0777 ~/drop` in a home) survived its close, and its uid came back to a later student,
    who then owned it. Now a used uid drawn again is swept again, on a fresh walk, before it is
    given out again (retired if anything of it is left)."""
    import secrets
    import shutil

    first = sandbox(LEAVER, isolation="rlimits")
    first.call("codesign", "identity")
    first.close()                                       # its sweep walked the machine: kept a while
    outer = f"/srv/cs349e-late-{secrets.token_hex(4)}"
    os.makedirs(f"{outer}/drop")
    os.chmod(f"{outer}/drop", 0o777)
    try:
        second = sandbox(LEAVER, isolation="rlimits")
        left = second.call("codesign", "leave", (f"{outer}/drop",)).value
        uid = os.stat(left).st_uid
        second.close()
        drawn = uids._draw
        offsets = [uid - uids.FIRST_UID]                # the draw comes to it
        monkeypatch.setattr(uids, "_draw", lambda: offsets.pop() if offsets else drawn())
        third = sandbox(LEAVER, isolation="rlimits")
        given = third.call("codesign", "identity").value
        assert not os.path.lexists(left) or given != uid, (left, uid, given)
    finally:
        shutil.rmtree(outer, ignore_errors=True)
