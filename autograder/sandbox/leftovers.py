"""Removes what a sandbox's uid left on the host: how the uid fallback keeps one student's files
from the next.

Without bubblewrap the worker shares the host's /tmp, /var/tmp, /dev/shm (memory), /run/lock,
/dev/mqueue and any other world-writable folder of the system (Ubuntu's /var/crash), and the IPC
namespace: a mode-0600 file or a shared-memory segment outlives the
sandbox, and whoever is given its uid next could read it. Once every process of the uid has been
ended (reaper.kill_uid), `remove_all_of(uid)` deletes each such entry the uid owns, in those
folders and in every world-writable folder below them (the only other folders an unprivileged uid
without groups can write into there), the SysV segments, semaphores and queues it owns or created
(their owner is the one thing about them it may change), and its
POSIX message queues: those live in the kernel whether or not /dev/mqueue is mounted, so where it
is not, a child of the grader mounts the IPC namespace's queue folder privately to find them. What
it could not remove is returned: the uid is then never given out again (uids.retire).

Runs in the root grader; nothing is followed through a link (every step is relative to an open
folder, opened with O_NOFOLLOW), and no process of the uid is left to race it.
"""

from __future__ import annotations

import ctypes
import os
import stat
import time

from .uid_fallback import SHARED_SCRATCH
from .workdir import remove_entry

SHARED_FOLDERS = (*SHARED_SCRATCH, "/dev/mqueue")
# Where a system keeps other folders every uid may write into (Ubuntu's /var/crash is 1777): each
# world-writable folder below one of these, on its filesystem, is swept too.
_OPEN_FOLDER_PARENTS = ("/", "/var", "/var/lib", "/var/spool", "/var/cache", "/run", "/dev", "/opt", "/srv")
_DEPTH = 8          # world-writable folders below a shared one that are searched
_IPC_RMID = 0
_MQUEUE = "/dev/mqueue"
_CLONE_NEWNS, _MS_REC, _MS_PRIVATE = 0x00020000, 0x4000, 1 << 18
# /proc/sysvipc table -> (its id column, the call that removes one)
_SYSV = {"shm": ("shmid", "shmctl"), "sem": ("semid", "semctl"), "msg": ("msqid", "msgctl")}


def world_writable_folders() -> tuple[str, ...]:
    """The machine's other folders every uid may write into (SHARED_FOLDERS aside), at any depth
    below _OPEN_FOLDER_PARENTS on their own filesystems (PHP's /var/lib/php/sessions is two levels
    down). The walk costs about a second per 50 000 folders, so its answer is kept for
    _LAYOUT_SECONDS (a folder a student's uid makes is inside one already found and swept anyway);
    the parents themselves are looked at again at each sweep, where a package makes its folder."""
    now = time.monotonic()
    if _layout and now - _layout[0] < _LAYOUT_SECONDS:
        return tuple(sorted({*_layout[1], *_directly_below_parents()}))   # a package's new one, at once
    found: set[str] = set()
    walked: set[int] = set()
    for parent in _OPEN_FOLDER_PARENTS:
        try:
            device = os.stat(parent, follow_symlinks=False).st_dev
        except OSError:
            continue
        if device not in walked:
            walked.add(device)
            _find_open_folders(parent, device, found)
    _layout[:] = [now, tuple(sorted(found))]
    return _layout[1]


def _directly_below_parents() -> set[str]:
    """The world-writable folders directly in one of _OPEN_FOLDER_PARENTS, looked for at each sweep."""
    return {path for parent in _OPEN_FOLDER_PARENTS for path, info in _subfolders(parent)
            if info.st_mode & stat.S_IWOTH and path not in SHARED_FOLDERS}


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
_layout: list = []          # [when, folders] of the last walk
_MAX_WALKED = 2_000_000     # folders: a bound on one walk, far above a system's


def _find_open_folders(top: str, device: int, found: set[str]) -> None:
    """World-writable folders below `top`; a folder of another filesystem is recorded when it is
    world-writable (a tmpfs mounted there) but not entered, nor is a world-writable one (its
    insides are swept by _sweep), nor one a uid without groups cannot enter."""
    stack, walked = [top], 0
    while stack and walked < _MAX_WALKED:
        walked += 1
        for path, info in _subfolders(stack.pop()):
            if info.st_mode & stat.S_IWOTH:
                if path not in SHARED_FOLDERS:
                    found.add(path)
            elif info.st_dev == device and info.st_mode & stat.S_IXOTH:
                stack.append(path)   # (a folder others cannot enter hides all below it)


def remove_all_of(uid: int, folders: tuple[str, ...] | None = None) -> list[str]:
    """Deletes every file, folder and SysV object `uid` owns in `folders` (and the world-writable
    folders below them); by default SHARED_FOLDERS and every other world-writable folder of the
    system (world_writable_folders). Returns what could not be removed (empty when all is gone)."""
    if uid <= 0:
        raise ValueError(f"refusing to remove the files of uid {uid}")
    if folders is None:
        folders = (*SHARED_FOLDERS, *world_writable_folders())
    problems: list[str] = []
    for folder in folders:
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"{folder}: {exc.strerror}")
            continue
        try:
            _sweep(fd, folder, uid, problems, _DEPTH)
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
                fd = os.open("/tmp", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
                _sweep(fd, "mqueue", uid, left, 0)
                code = 1 if left else 0
        finally:
            os._exit(code)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if code == 0:
        return []
    if code == 2:
        return [f"POSIX message queues: {_MQUEUE} is not mounted and no private mount of it could be made"]
    return ["POSIX message queues: some could not be removed"]


def _sweep(dir_fd: int, where: str, uid: int, problems: list[str], depth: int) -> None:
    try:
        entries = list(os.scandir(dir_fd))
    except OSError as exc:
        problems.append(f"{where}: {exc.strerror}")
        return
    for entry in entries:
        path = f"{where}/{entry.name}"
        try:
            info = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror}")
            continue
        is_dir = stat.S_ISDIR(info.st_mode)
        try:
            if info.st_uid == uid:
                remove_entry(dir_fd, entry.name)   # however deep the uid nested its folders
            elif is_dir and info.st_mode & stat.S_IWOTH and depth > 0:
                inner = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                                dir_fd=dir_fd)
                try:
                    _sweep(inner, path, uid, problems, depth - 1)
                finally:
                    os.close(inner)
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror}")


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
