"""Removes what a sandbox's uid left on the host: how the uid fallback keeps one student's files
from the next.

Without bubblewrap the worker shares the host's /tmp, /var/tmp, /dev/shm (memory), /run/lock,
/dev/mqueue and any other world-writable folder of the system (Ubuntu's /var/crash), and the IPC
namespace: a mode-0600 file or a shared-memory segment outlives the
sandbox, and whoever is given its uid next could read it. Once every process of the uid has been
ended (reaper.kill_uid), `remove_all_of(uid)` deletes each such entry the uid owns, in those
folders and at any depth below them wherever the uid could have written: a folder others may write
to, or one whose POSIX ACL lets a named user or group write (the only folders an unprivileged uid
without groups can write into), reached through folders it could enter (another user's 0755 folder
in /tmp may hold a 0777 one). The SysV segments, semaphores and queues it owns or created
(their owner is the one thing about them it may change), and its
POSIX message queues: those live in the kernel whether or not /dev/mqueue is mounted, so where it
is not, a child of the grader mounts the IPC namespace's queue folder privately to find them. What
it could not remove, or would not (its file in a folder closed to it since: nothing is removed
from a folder the uid may not write to), is returned: the uid is then never given out again
(uids.retire).

Runs in the root grader; nothing is followed through a link (every step is relative to an open
folder, opened with O_NOFOLLOW), and no process of the uid is left to race it.
"""

from __future__ import annotations

import ctypes
import errno
import itertools
import os
import stat
import struct
import time
from functools import partial

from .workdir import remove_entry

# The host folders every uid may write to; the uid fallback's worker covers them with a private
# tmpfs of its own where the platform allows a mount namespace (uid_fallback.py, lockdown.py), and
# the grader removes what its uid left in them in any case.
SHARED_SCRATCH = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
SHARED_FOLDERS = (*SHARED_SCRATCH, "/dev/mqueue")
# Where a system keeps other folders every uid may write into (Ubuntu's /var/crash is 1777): each
# world-writable folder below one of these, on its filesystem, is swept too.
_OPEN_FOLDER_PARENTS = ("/", "/var", "/var/lib", "/var/spool", "/var/cache", "/run", "/dev", "/opt", "/srv")
_MAX_SWEPT = 1_000_000   # entries one remove_all_of looks at below the open folders: past it, not clean
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_WRITE, _ENTER = 0o2, 0o1   # what a uid may do in a folder (a mode's bits for others)
# A folder's POSIX access ACL: u32 version 2, then (u16 tag, u16 perm, u32 id) per entry.
_ACL_XATTR = "system.posix_acl_access"
_ACL_USER, _ACL_GROUP, _ACL_MASK = 0x02, 0x08, 0x10
_IPC_RMID = 0
_MQUEUE = "/dev/mqueue"
_CLONE_NEWNS, _MS_REC, _MS_PRIVATE = 0x00020000, 0x4000, 1 << 18
# /proc/sysvipc table -> (its id column, the call that removes one)
_SYSV = {"shm": ("shmid", "shmctl"), "sem": ("semid", "semctl"), "msg": ("msqid", "msgctl")}


def world_writable_folders() -> tuple[str, ...]:
    """The machine's other folders every uid, or a named one through an ACL, may write into
    (SHARED_FOLDERS aside), at any depth below _OPEN_FOLDER_PARENTS on their own filesystems (PHP's
    /var/lib/php/sessions is two levels down). The walk costs about a second per 50 000 folders, so
    its answer is kept for _LAYOUT_SECONDS (a folder a student's uid makes is inside one already
    found and swept anyway); the parents themselves are looked at again at each sweep, where a
    package makes its folder."""
    return _open_folders()[0]


def _open_folders() -> tuple[tuple[str, ...], str | None]:
    """(world_writable_folders(), why the walk may have missed some, or None)."""
    now = time.monotonic()
    if _layout and now - _layout[0] < _LAYOUT_SECONDS:
        return tuple(sorted({*_layout[1], *_directly_below_parents()})), _layout[2]   # a package's new one, at once
    found: set[str] = set()
    walked: set[int] = set()
    complete = True
    for parent in _OPEN_FOLDER_PARENTS:
        try:
            device = os.stat(parent, follow_symlinks=False).st_dev
        except OSError:
            continue
        if device not in walked:
            walked.add(device)
            complete = _find_open_folders(parent, device, found) and complete
    problem = None if complete else f"the walk of the machine's folders stopped after {_MAX_WALKED} of them"
    _layout[:] = [now, tuple(sorted(found)), problem]
    return _layout[1], problem


def _directly_below_parents() -> set[str]:
    """The world-writable folders directly in one of _OPEN_FOLDER_PARENTS, looked for at each sweep."""
    return {path for parent in _OPEN_FOLDER_PARENTS for path, info in _subfolders(parent)
            if _others_may(info, partial(_path_acl, path)) & _WRITE and path not in SHARED_FOLDERS}


def _subfolders(folder: str) -> list[tuple[str, os.stat_result]]:
    """(path, its own stat) of each folder directly in `folder` (a link is not one); none where
    `folder` or an entry cannot be read."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    found = []
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode):
            found.append((entry.path, info))
    return found


def forget_world_writable_folders() -> None:
    """The next sweep walks the machine again."""
    _layout.clear()


def swept_again(uid: int, released_at: float) -> bool:
    """Before a used uid is given out again (uids.claim_uid's before_reuse): every world-writable
    folder of the machine is looked for afresh, unless the walk kept is younger than the uid's
    release, and the uid's files are removed from them once more. A world-writable folder made
    after the walk kept (a login account's `mkdir -m 0777 ~/drop`) held a sandbox's 0600 file past
    its close, and the uid came back to a later student with the file. True when nothing of it is left."""
    if not _layout or _layout[0] < released_at:
        forget_world_writable_folders()
    left = remove_all_of(uid)
    if left:
        import sys
        print(f"WARNING: sandbox uid {uid} is retired: could not remove what it left ({'; '.join(left[:5])})",
              file=sys.stderr, flush=True)
    return not left


_LAYOUT_SECONDS = 600.0
_layout: list = []          # [when, folders, why it may be incomplete] of the last walk
_MAX_WALKED = 2_000_000     # folders: a bound on one walk, far above a system's


def _find_open_folders(top: str, device: int, found: set[str]) -> bool:
    """Open folders (_others_may: _WRITE) below `top`; a folder of another filesystem is recorded
    when it is open (a tmpfs mounted there) but not entered, nor is an open one (_sweep goes through
    all below it), nor one a uid without groups cannot enter. False where the walk stopped at
    _MAX_WALKED folders."""
    stack, walked = [top], 0
    while stack:
        if walked >= _MAX_WALKED:
            return False
        walked += 1
        for path, info in _subfolders(stack.pop()):
            may = _others_may(info, partial(_path_acl, path))
            if may & _WRITE:
                if path not in SHARED_FOLDERS:
                    found.add(path)
            elif info.st_dev == device and may & _ENTER:
                stack.append(path)   # (a folder others cannot enter hides all below it)
    return True


def _others_may(info: os.stat_result, read_acl) -> int:
    """What a uid that neither owns the folder nor is in its group may do there (_WRITE, _ENTER):
    the mode's bits for others, and what a POSIX ACL (`read_acl()`, its xattr) gives named users
    and groups. With such entries the mode's group bits are the ACL's mask, so where they add
    nothing to others' bits (0755, 0700: most folders) no ACL is read."""
    may = info.st_mode & (_WRITE | _ENTER)
    if (info.st_mode >> 3) & (_WRITE | _ENTER) & ~may:
        try:
            may |= _named_grants(read_acl(), info.st_uid)
        except OSError as exc:
            if exc.errno not in (errno.ENODATA, errno.EOPNOTSUPP):
                may = _WRITE | _ENTER     # unreadable: as if it opened the folder
    return may


def _named_grants(acl: bytes, owner: int) -> int:
    """What a binary POSIX ACL gives named users (the owner aside) and named groups, within its mask."""
    if len(acl) < 4 or (len(acl) - 4) % 8 or struct.unpack_from("<I", acl)[0] != 2:
        return _WRITE | _ENTER            # a form not known here: as if it opened the folder
    named, mask = 0, 0o7
    for tag, perm, ident in struct.iter_unpack("<HHI", acl[4:]):
        if tag == _ACL_GROUP or (tag == _ACL_USER and ident != owner):
            named |= perm
        elif tag == _ACL_MASK:
            mask = perm
    return named & mask & (_WRITE | _ENTER)


def _path_acl(path: str) -> bytes:
    return os.getxattr(path, _ACL_XATTR, follow_symlinks=False)


def _acl_at(dir_fd: int, name: str) -> bytes:
    fd = os.open(name, _DIR, dir_fd=dir_fd)
    try:
        return os.getxattr(fd, _ACL_XATTR)
    finally:
        os.close(fd)


def remove_all_of(uid: int, folders: tuple[str, ...] | None = None) -> list[str]:
    """Deletes every file, folder and SysV object `uid` owns in `folders` (and wherever it could
    write at any depth below them, _sweep); by default SHARED_FOLDERS and every other open folder of
    the system (world_writable_folders). Returns what could not be removed, or may not have been
    looked at (empty when all is gone)."""
    if uid <= 0:
        raise ValueError(f"refusing to remove the files of uid {uid}")
    problems: list[str] = []
    if folders is None:
        found, incomplete = _open_folders()
        folders = (*SHARED_FOLDERS, *found)
        problems += [incomplete] if incomplete else []
    budget = [_MAX_SWEPT]
    for folder in folders:
        try:
            fd = os.open(folder, _DIR)
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"{folder}: {exc.strerror}")
            continue
        try:
            _sweep(fd, folder, uid, problems, budget)
        finally:
            os.close(fd)
    problems += _remove_sysv(uid)
    if _MQUEUE in folders and not _is_mqueue(_MQUEUE):
        problems += _remove_unmounted_mqueues(uid)
    return problems


def _is_mqueue(path: str) -> bool:
    try:
        with open("/proc/self/mounts", encoding="utf-8") as mounts:
            return any(line.split()[1:3] == [path, "mqueue"] for line in mounts)
    except OSError:
        return False


def _remove_unmounted_mqueues(uid: int) -> list[str]:
    """Removes the uid's POSIX message queues through a private mount of this IPC namespace's
    queue folder (made in a child's own mount namespace, over its /tmp: nothing on the host moves)."""
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.unshare(_CLONE_NEWNS) != 0 or libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
                code = 2
            elif libc.mount(b"mqueue", b"/tmp", b"mqueue", 0, None) != 0:
                code = 2
            else:
                left: list[str] = []
                fd = os.open("/tmp", _DIR)
                _sweep(fd, "mqueue", uid, left, [_MAX_SWEPT])
                code = 1 if left else 0
        finally:
            os._exit(code)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if code == 0:
        return []
    if code == 2:
        return [f"POSIX message queues: {_MQUEUE} is not mounted and no private mount of it could be made"]
    return ["POSIX message queues: some could not be removed"]


def _sweep(top: int, where: str, uid: int, problems: list[str], budget: list[int]) -> None:
    """Removes what `uid` owns in the open folder `top` and at any depth below it, in each folder
    it could write to, going through each folder it could enter. One folder is held open per level
    (nothing is followed through a link, no recursion); `budget` ([entries]) is shared by a whole
    remove_all_of, which reports the uid not clean once it is spent."""
    levels = [(top, where, True, _listing(top, where, problems, budget))]
    try:
        while levels:
            fd, path, writable, entries = levels[-1]
            if entries:
                inner = _visit(fd, path, entries.pop(), writable, uid, problems)
                if inner is not None:
                    levels.append((*inner, _listing(inner[0], inner[1], problems, budget)))
                continue
            levels.pop()
            if fd != top:
                os.close(fd)
    finally:
        for fd, *_rest in levels[1:]:
            os.close(fd)


def _listing(fd: int, where: str, problems: list[str], budget: list[int]) -> list[os.DirEntry]:
    """The entries of the folder open as `fd`, taken from `budget`; none once it is spent."""
    if budget[0] < 0:
        return []
    try:
        with os.scandir(fd) as found:
            entries = list(itertools.islice(found, budget[0] + 1))
    except OSError as exc:
        problems.append(f"{where}: {exc.strerror}")
        return []
    budget[0] -= len(entries)
    if budget[0] < 0:
        problems.append(f"{where}: past {_MAX_SWEPT} entries below the swept folders, the rest was not looked at")
        return []
    return entries


def _visit(dir_fd: int, where: str, entry: os.DirEntry, writable: bool, uid: int,
           problems: list[str]) -> tuple[int, str, bool] | None:
    """Removes `entry` where the uid owns it and could have made it; (fd, path, whether the uid
    could write there) of a folder it could enter, to be looked into next; else None."""
    path = f"{where}/{entry.name}"
    try:
        info = entry.stat(follow_symlinks=False)
        if info.st_uid == uid:
            if writable:
                remove_entry(dir_fd, entry.name)   # however deep the uid nested its folders
            else:   # the folder's owner closed it since: nothing is removed there, but it is not clean
                problems.append(f"{path}: the uid's, in a folder closed to it since")
            return None
        if not stat.S_ISDIR(info.st_mode):
            return None
        may = _others_may(info, partial(_acl_at, dir_fd, entry.name))
        if not may & _ENTER:
            return None   # nothing below was within the uid's reach
        return os.open(entry.name, _DIR, dir_fd=dir_fd), path, bool(may & _WRITE)
    except FileNotFoundError:
        return None
    except OSError as exc:
        problems.append(f"{path}: {exc.strerror}")
        return None


def _remove_sysv(uid: int) -> list[str]:
    """Removes the SysV shared-memory segments, semaphore sets and message queues the uid owns or made."""
    problems = []
    libc = ctypes.CDLL(None, use_errno=True)
    for table, (id_name, call) in _SYSV.items():
        try:
            with open(f"/proc/sysvipc/{table}", encoding="ascii") as handle:
                lines = handle.read().splitlines()
        except OSError:
            continue   # no SysV IPC here
        if not lines:
            continue
        columns = lines[0].split()
        # By owner or creator: IPC_SET lets the owner name any uid as the new owner, the creator stays.
        id_column, owner_columns = columns.index(id_name), (columns.index("uid"), columns.index("cuid"))
        for line in lines[1:]:
            row = line.split()
            if len(row) <= max(id_column, *owner_columns) or uid not in (int(row[c]) for c in owner_columns):
                continue
            ident = int(row[id_column])
            args = (ident, 0, _IPC_RMID, None) if table == "sem" else (ident, _IPC_RMID, None)
            if getattr(libc, call)(*args) != 0 and ctypes.get_errno() not in (22, 43):   # EINVAL, EIDRM: gone
                problems.append(f"SysV {table} {ident}: {os.strerror(ctypes.get_errno())}")
    return problems
