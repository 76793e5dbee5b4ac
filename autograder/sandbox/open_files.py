"""The files a uid's processes hold open after deleting them (no folder lists them; the disk still
holds their blocks).

They are read through /proc/<pid>/fd, whose links the kernel lets a reader follow only with ptrace
access to the process: CAP_SYS_PTRACE, or the same uid and gid and a dumpable process. A container's
root (Docker's default capabilities) has no CAP_SYS_PTRACE, and reading as root counted nothing
there. Where root is refused, the reading thread takes the process's uid and gid as its filesystem
ids for the read (setfsuid and setfsgid change one thread's credentials only: the grader's other
threads keep root's); the uid fallback's workers are dumpable for this (lockdown.py). A process that
made itself non-dumpable is closed even to its own uid: it is returned as hidden, not counted as
holding nothing.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from contextlib import contextmanager

from .clock import uid_processes

_libc = ctypes.CDLL(None, use_errno=True)


def deleted_but_open(uid: int, devices: set[int]) -> tuple[int, set[int]]:
    """(bytes of the files `uid`'s processes hold open after deleting them on `devices` (a memfd is
    memory, not disk), the processes whose open files the grader may not read)."""
    seen: dict[tuple[int, int], int] = {}
    hidden = set()
    for pid in uid_processes(uid):
        held = _held(pid, devices)
        if held is None:
            held = _held_as_owner(pid, uid, devices)
        if held is None:
            hidden.add(pid)
        else:
            seen.update(held)
    return sum(seen.values()), hidden


def _held_as_owner(pid: int, uid: int, devices: set[int]) -> dict[tuple[int, int], int] | None:
    gid = _real_gid(pid)
    if gid is None:
        return {}   # gone
    with _filesystem_ids(uid, gid):
        return _held(pid, devices)


def _held(pid: int, devices: set[int]) -> dict[tuple[int, int], int] | None:
    """(device, inode) → bytes of each deleted regular file `pid` holds open on `devices`; None
    where the kernel refuses to show them."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except PermissionError:
        return None
    except OSError:
        return {}   # gone
    held = {}
    for fd in fds:
        try:
            info = os.stat(f"/proc/{pid}/fd/{fd}")
        except PermissionError:
            return None
        except OSError:
            continue   # closed meanwhile
        if stat.S_ISREG(info.st_mode) and info.st_nlink == 0 and info.st_dev in devices:
            held[(info.st_dev, info.st_ino)] = info.st_blocks * 512
    return held


def _real_gid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            return int(next(line.split()[1] for line in handle if line.startswith(b"Gid:")))
    except (OSError, StopIteration, ValueError, IndexError):
        return None


@contextmanager
def _filesystem_ids(uid: int, gid: int):
    """This thread reads files as `uid`/`gid` (a grader without CAP_SETUID keeps its own ids)."""
    old_gid = _libc.setfsgid(gid)
    old_uid = _libc.setfsuid(uid)
    try:
        yield
    finally:
        _libc.setfsuid(old_uid)
        _libc.setfsgid(old_gid)
        if _libc.setfsuid(-1) != old_uid or _libc.setfsgid(-1) != old_gid:   # (-1 only reads the ids)
            raise OSError(errno.EPERM, "the grader could not take back its own filesystem ids")
