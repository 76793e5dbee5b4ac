"""The uid fallback's own folder (the submission's writable copy and HOME) on a capped tmpfs.

Without bubblewrap the worker writes in its private folder in the grader's temporary folder,
on the grader's disk: RLIMIT_FSIZE caps each file, nothing caps how many. Where the worker can
make a mount namespace (a root server), it covers that folder, still root, with an overlay whose
writes land on a tmpfs of the sandbox's disk budget (bytes and inodes, disk_budget.py): the copy
stays writable as before, a write past the budget fails with ENOSPC, and everything written goes
with the namespace. Where overlayfs refuses, the grader's watchdog bounds the folder instead.

Runs in the worker before the switch (lockdown.py): standard library only, one of the worker's
files (worker_plan.WORKER_FILES).
"""

from __future__ import annotations

import ctypes
import errno
import os

_MS_NOSUID, _MS_NODEV = 0x2, 0x4
_libc = ctypes.CDLL(None, use_errno=True)


def overlay(disk: dict | None) -> bool:
    """Covers disk["folder"] with an overlay whose upper layer is a tmpfs of disk["bytes"] bytes
    and disk["entries"] inodes (needs CAP_SYS_ADMIN, in the worker's own mount namespace); whether
    it was made. Where overlayfs is missing or refuses the folder (ENODEV, EINVAL) nothing is left
    mounted and the grader's watchdog takes over; any other failure ends the worker."""
    if not disk:
        return False
    folder, flags = disk["folder"], os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC
    fds = [os.open(folder, flags)]
    owner = os.fstat(fds[0])
    try:
        _mount("tmpfs", folder, "tmpfs", f"mode=0700,size={int(disk['bytes'])},nr_inodes={int(disk['entries'])}")
        for name in ("upper", "work"):
            os.mkdir(f"{folder}/{name}", 0o700)
            fds.append(os.open(f"{folder}/{name}", flags))
        os.chown(f"{folder}/upper", owner.st_uid, owner.st_gid)   # the merged root: the sandbox's, as before
        try:   # by fd: a folder's name may hold the ',' or ':' the options split on
            _mount("overlay", folder, "overlay",
                   "lowerdir=/proc/self/fd/{},upperdir=/proc/self/fd/{},workdir=/proc/self/fd/{}".format(*fds))
        except OSError as exc:
            if exc.errno not in (errno.ENODEV, errno.EINVAL) or _libc.umount2(folder.encode(), 0) != 0:
                raise
            return False
    finally:
        for fd in fds:
            os.close(fd)
    return True


def _mount(source: str, target: str, fstype: str, data: str) -> None:
    if _libc.mount(source.encode(), target.encode(), fstype.encode(), _MS_NOSUID | _MS_NODEV, data.encode()) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {fstype} on {target}: {os.strerror(err)}")
