"""Ends every process of a sandbox's uid: how the uid fallback finds what student code left behind.

Without bubblewrap there is no pid namespace to tear down: a student's process can leave the
worker's session and process group, its environment is its own to rewrite (execve), and a cgroup
is not always there. Its uid it cannot change (no_new_privs, no capabilities: lockdown.py), and
the uid is the sandbox's own (uids.py), so "every process of that uid" is exactly the sandbox.

`kill_uid` ends them now (the grader closing or restarting a worker). `watch` hands the uid to a
small watcher process outside the grader, which ends them if the grader dies without closing its
sandboxes (SIGKILL, out of memory); `unwatch` takes it back once the grader has done it itself.

Runs as `python -S -I reaper.py` for the watcher: standard library only.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

_ROUNDS = 1000   # kill(-1) sweeps; a fork bomb's children started meanwhile are caught next round
_lock = threading.Lock()
_watcher: tuple[int, subprocess.Popen] | None = None   # (owner pid, process)


def kill_uid(uid: int) -> None:
    """SIGKILLs every process whose real or saved uid is `uid` (never root's or a shared one)."""
    if uid <= 0:
        raise ValueError(f"refusing to kill every process of uid {uid}")
    pid = os.fork()
    if pid == 0:
        # As that uid, kill(-1) reaches exactly its processes (all but this one), atomically per
        # sweep, wherever they went.
        code = 1
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            for _ in range(_ROUNDS):
                try:
                    os.kill(-1, signal.SIGKILL)
                except ProcessLookupError:
                    code = 0
                    break
        finally:
            os._exit(code)
    os.waitpid(pid, 0)


def watch(uid: int) -> None:
    """From now on `uid`'s processes die with this grader, however it ends."""
    _tell(f"+{uid}\n")


def unwatch(uid: int) -> None:
    _tell(f"-{uid}\n")


def _tell(line: str) -> None:
    global _watcher
    with _lock:
        if _watcher is None or _watcher[0] != os.getpid() or _watcher[1].poll() is not None:
            # One watcher per grader process (a batch's forked graders start their own). Its own
            # session: a signal to the grader's process group does not take it along.
            proc = subprocess.Popen([sys.executable, "-S", "-I", os.path.abspath(__file__)],
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, cwd="/",
                                    start_new_session=True, close_fds=True)
            _watcher = (os.getpid(), proc)
        stdin = _watcher[1].stdin
        stdin.write(line.encode())
        stdin.flush()


def _watch() -> None:
    """The watcher: keeps the uids it is told about; when the grader's end of the pipe closes
    (the grader exited or died), ends every process of the uids still held."""
    held: set[int] = set()
    for line in sys.stdin.buffer:
        sign, uid = line[:1], int(line[1:])
        (held.add if sign == b"+" else held.discard)(uid)
    for uid in sorted(held):
        kill_uid(uid)


if __name__ == "__main__":
    _watch()
