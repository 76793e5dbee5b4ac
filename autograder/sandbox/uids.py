"""Host uids for workers started by root: one of its own for every open Sandbox.

Two sandboxes must never share a uid: RLIMIT_NPROC counts every process of a uid machine-wide
(one submission's fork storm would starve another's notebook), and a uid may signal its own
processes and write its own files. Nor may anyone know a sandbox's uid in advance: a login
account that could work it out (it was FIRST_UID + grader pid * 64 + slot, and pids are public)
opened a 0700 folder of its own to that uid alone (a POSIX ACL entry user:<uid>:rwx) before
grading, and collected what the sandbox left there. A root grader's sandbox gets a uid drawn with
`secrets` from the COUNT uids at FIRST_UID (0x70000000-0x7FFFFFFF, the range systemd leaves
unused: below are container ranges, above 2**31 tools break), kept for the Sandbox's whole life
(a restarted worker keeps it).

A drawn uid is claimed in this process (_claimed) and, for every grader process of this user on
the machine (`grade -j N` forks them), by a lock on its byte of one file in the private claims
folder (placement.claims_folder; the lock ends with its process); a uid a process runs as is
skipped too. Where that file cannot be used, only this process's claims and the running
processes keep concurrent graders apart (1 draw in 2**28 meets an open sandbox's uid). A uid this
process gave out before is given again only after the uid fallback swept it again on a fresh walk
of the machine (leftovers.swept_again); a uid whose files could not all be removed is retired for
the life of the process (and its lock held till then).
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import secrets
import sys
import threading
import time

from . import placement

SHARED_UID = 65534           # "nobody": used only where no uid of its own can be given
FIRST_UID = 0x7000_0000
COUNT = 1 << 28              # uids to draw from: FIRST_UID + COUNT - 1 is 2**31 - 1
_DRAWS = 64                  # draws that meet a taken uid before claim_uid gives up

_lock = threading.Lock()
_claimed: set[int] = set()
_retired: set[int] = set()
_released: dict[int, float] = {}   # uid -> when this process last gave it back (time.monotonic)


def claim_uid(before_reuse=None) -> int:
    """A uid (also used as gid) no other sandbox on this machine runs as now. Falls back to the
    shared uid 65534, with a warning, where none can be given; `release_uid` gives it back.
    `before_reuse(uid, released_at)`, where given, is asked before a uid this process gave out
    before is given again (the uid fallback sweeps it once more, on a fresh walk of the machine:
    leftovers.swept_again); False retires that uid and another is drawn."""
    if not _mapped(FIRST_UID, COUNT):
        _warn_shared("the sandbox uid range is not mapped in its user namespace")
        return SHARED_UID
    busy = running_uids()   # another grader's sandbox, or what an ended grader left running
    for _ in range(_DRAWS):
        uid = FIRST_UID + _draw()
        with _lock:
            if uid in _claimed or uid in busy or uid in _retired or not _lock_for_all(uid):
                continue
            _claimed.add(uid)
            released_at = _released.get(uid)
        if released_at is None or before_reuse is None or before_reuse(uid, released_at):
            return uid
        retire_uid(uid)        # something of it may remain: never given out again by this process
    _warn_shared(f"{_DRAWS} uids drawn in a row were taken or retired")
    return SHARED_UID


def _draw() -> int:
    return secrets.randbelow(COUNT)


def _lock_for_all(uid: int) -> bool:
    """Claims `uid` for every grader process of this user; False where another one holds it."""
    fd = _claims_file()
    if fd is None:
        return True
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, uid - FIRST_UID)
    except OSError as exc:
        return exc.errno not in (errno.EACCES, errno.EAGAIN)   # (another error: this process's claims only)
    return True


def _unlock_for_all(uid: int) -> None:
    fd = _claims_file()
    if fd is not None:
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, uid - FIRST_UID)


@functools.cache
def _claims_file() -> int | None:
    """The descriptor of the claims file: one byte per uid, locked, never written, never closed
    (closing any descriptor of it would end all of this process's locks)."""
    folder, _why = placement.claims_folder()
    if folder is None:
        return None
    try:
        return os.open(folder / "uids", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return None


def release_uid(uid: int) -> None:
    with _lock:
        _claimed.discard(uid)
        _released[uid] = time.monotonic()
        if uid not in _retired:
            _unlock_for_all(uid)


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
