"""Host uids for workers started by root: one of its own for every open Sandbox.

Two sandboxes must never share a uid: RLIMIT_NPROC counts every process of a uid machine-wide
(one submission's fork storm would starve another's notebook), and a uid may signal its own
processes and write its own files. A root grader's sandbox gets

    FIRST_UID + grader pid * SLOTS + slot

Pids are unique among running processes, so concurrent graders (`grade -j N`) draw from disjoint
ranges; the slot tells apart the Sandboxes one process holds open at once (a restarted worker
keeps its Sandbox's uid). Slots rotate: a released uid is the last of the range to be given again,
so one student's uid goes to the next student only after SLOTS - 1 others (and, under the uid
fallback, only once leftovers.py removed every file it owned, and swept it again on a fresh walk
of the machine's world-writable folders just before it is given again; a uid whose files could
not all be removed is retired for the life of the process). 0x70000000-0x7FFFFFFF is the range systemd leaves unused (below are
container ranges, above 2**31 tools break), and it holds exactly PID_LIMIT * SLOTS uids.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import time

SHARED_UID = 65534           # "nobody": used only where no uid of its own can be given
FIRST_UID = 0x7000_0000
SLOTS = 64                   # Sandboxes one grader process may hold open at once
PID_LIMIT = 1 << 22          # the kernel's largest pid_max

_lock = threading.Lock()
_claimed: set[int] = set()
_retired: set[int] = set()
_released: dict[int, float] = {}   # uid -> when this process last gave it back (time.monotonic)
_next_slot = 0   # where the search for a free slot starts: slots rotate


def claim_uid(before_reuse=None) -> int:
    """A uid (also used as gid) no other sandbox on this machine runs as now. Falls back to the
    shared uid 65534, with a warning, where none can be given; `release_uid` gives it back.
    `before_reuse(uid, released_at)`, where given, is asked before a uid this process gave out
    before is given again (the uid fallback sweeps it once more, on a fresh walk of the machine:
    leftovers.swept_again); False retires that uid and the next one is tried."""
    pid = os.getpid()
    first = FIRST_UID + pid * SLOTS
    if pid >= PID_LIMIT or not _mapped(first, SLOTS):
        _warn_shared("this process's uid range is not mapped in its user namespace")
        return SHARED_UID
    busy = running_uids()   # leftovers of an earlier process that had this pid
    global _next_slot
    for _ in range(SLOTS):
        with _lock:
            uid = next((first + (_next_slot + step) % SLOTS for step in range(SLOTS)
                        if first + (_next_slot + step) % SLOTS not in _claimed | busy | _retired), None)
            if uid is None:
                break
            _claimed.add(uid)
            _next_slot = (uid - first + 1) % SLOTS
            released_at = _released.get(uid)
        if released_at is None or before_reuse is None or before_reuse(uid, released_at):
            return uid
        retire_uid(uid)        # something of it may remain: never given out again by this process
    _warn_shared(f"this process already holds {SLOTS} sandboxes open or retired their uids")
    return SHARED_UID


def release_uid(uid: int) -> None:
    with _lock:
        _claimed.discard(uid)
        _released[uid] = time.monotonic()


def retire_uid(uid: int) -> None:
    """Never gives `uid` out again in this process (it may still own files somewhere)."""
    with _lock:
        _retired.add(uid)
        _claimed.discard(uid)


def running_uids() -> set[int]:
    """Real uids of all running processes."""
    uids = set()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                uids.add(entry.stat().st_uid)
            except OSError:
                pass
    return uids


@functools.cache
def _mapped(first: int, count: int) -> bool:
    """Whether uids and gids first..first+count-1 exist in this user namespace (a container
    with a narrow mapping cannot switch to them)."""
    for table in ("/proc/self/uid_map", "/proc/self/gid_map"):
        try:
            with open(table, encoding="ascii") as handle:
                ranges = [tuple(map(int, line.split())) for line in handle if line.strip()]
        except (OSError, ValueError):
            return False
        if not any(inside <= first and first + count <= inside + length
                   for inside, _outside, length in ranges):
            return False
    return True


@functools.cache
def _warn_shared(why: str) -> None:
    print(f"WARNING: sandboxes share uid {SHARED_UID} because {why}: one submission's processes "
          f"count against another's process limit.", file=sys.stderr, flush=True)
