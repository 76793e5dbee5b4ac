"""Every long-running process a test (or a benchmark) starts: in a process group of its own, and
ended with that whole group however the run ends.

- The test's own code ends it (`end`), as before.
- pytest is interrupted (Ctrl-C, SIGINT) or told to stop (SIGTERM, SIGHUP: a CI timeout, a
  closed terminal): the handlers installed by `end_all_on_exit` end every group still registered,
  then the run unwinds as after Ctrl-C (each `finally` and fixture teardown runs).
- pytest is killed outright (SIGKILL): the kernel sends the group's leader SIGTERM
  (PR_SET_PDEATHSIG), and the leader ends what it started (jupyter-lab its kernels, a dask worker
  its sandboxes).
- Whatever else the run started (most tests run the kit's commands with a plain
  `subprocess.run`): when pytest is stopped, or exits with something still running, every
  process still below it in the process tree is ended too. tests/conftest.py installs this for
  the whole suite; a pytest outside it gets it with `-p process_groups`.
A group of its own is what keeps a terminal's Ctrl-C from reaching the process directly, hence
the handlers.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import subprocess
import time

_PR_SET_PDEATHSIG = 1
_STARTED: dict[int, subprocess.Popen] = {}
_installed = False


def _die_with_parent() -> None:  # runs in the child, after setsid
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def start(args, **popen_args) -> subprocess.Popen:
    """subprocess.Popen(args, **popen_args) in a new session (its own process group), registered so
    that it is ended with the run."""
    end_all_on_exit()
    proc = subprocess.Popen(args, start_new_session=True, preexec_fn=_die_with_parent, **popen_args)
    _STARTED[proc.pid] = proc
    return proc


def end(proc: subprocess.Popen, sig: int = signal.SIGTERM, grace: float = 15.0) -> None:
    """Ends the process's whole group: `sig`, then SIGKILL after `grace` seconds. Named semaphores
    the group held and no one else holds are removed: a group killed outright leaves its own in
    /dev/shm (a dask worker's six, its resource tracker killed with it)."""
    _STARTED.pop(proc.pid, None)
    semaphores = shm_mapped_by(_group(proc.pid))
    try:
        _end_group(proc, sig, grace)
    finally:
        _remove_unheld(semaphores, proc.pid)


def _end_group(proc: subprocess.Popen, sig: int, grace: float) -> None:
    for signum in (sig, signal.SIGKILL):
        try:
            os.killpg(proc.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    try:   # the leader may be gone while others in its group live on
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _group(pgid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getpgid(int(entry)) == pgid:
                    found.append(int(entry))
            except OSError:
                pass
    return found


def shm_mapped_by(pids) -> set[tuple[int, int, int]]:
    """(major, minor, inode) of every /dev/shm file these processes map. sem_open maps a file under a
    temporary name, then links it to the semaphore's: the maps show the temporary one, deleted, so a
    semaphore is known by its inode."""
    found = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as maps:
                for line in maps:
                    fields = line.split(maxsplit=5)
                    if len(fields) == 6 and fields[5].startswith("/dev/shm/"):
                        major, minor = (int(part, 16) for part in fields[3].split(":"))
                        found.add((major, minor, int(fields[4])))
        except (OSError, ValueError):
            pass
    return found


def _remove_unheld(mapped: set[tuple[int, int, int]], pgid: int, wait: float = 5.0) -> None:
    """Removes the /dev/shm/sem.* files among `mapped` that no process maps any more."""
    if not mapped:
        return
    deadline = time.monotonic() + wait   # a killed process unmaps as it exits
    while any(running(pid) for pid in _group(pgid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    held = shm_mapped_by(int(e) for e in os.listdir("/proc") if e.isdigit())
    try:
        entries = list(os.scandir("/dev/shm"))
    except OSError:
        return
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        key = (os.major(info.st_dev), os.minor(info.st_dev), info.st_ino)
        if entry.name.startswith("sem.") and key in mapped and key not in held:
            try:
                os.unlink(entry.path)
            except OSError:
                pass


def end_all() -> None:
    for proc in list(_STARTED.values()):
        end(proc, grace=5.0)
    end_descendants()


def _descendants() -> list[int]:
    """Every process below this one in the process tree, parents before their children."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                parent = int(stat.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue   # ended while we looked
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def end_descendants(grace: float = 5.0) -> None:
    """SIGTERM to every process below this one (one at a time: a plain child shares pytest's own
    process group), then SIGKILL to those still there after `grace` seconds."""
    pids = _descendants()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + grace
        while sig == signal.SIGTERM and time.monotonic() < deadline:
            pids = [pid for pid in pids if running(pid)]
            if not pids:
                return
            time.sleep(0.1)


def running(pid: int) -> bool:
    """Is `pid` a process that has not yet exited (a zombie counts as ended)?"""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def _on_interrupt(signum, frame):
    # Before pytest unwinds: a plain subprocess.run kills only its direct child on the way out,
    # and that child's own children would leave the tree (to init) before the exit handler looks.
    end_all()
    raise KeyboardInterrupt


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP: the run unwinds as after Ctrl-C, so the `finally` of the test that was
    running (a temporary folder outside tmp_path, an account it made) and the fixtures' teardown
    still run; a second signal ends it at once."""


def _on_signal(signum, frame):
    end_all()
    signal.signal(signum, signal.SIG_DFL)
    raise Stopped(f"stopped by {signal.Signals(signum).name}")


def end_all_on_exit() -> None:
    """Installs, once, the handlers that end every registered group when the run ends."""
    global _installed
    if _installed:
        return
    _installed = True
    atexit.register(end_all)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) in (signal.SIG_DFL, None):
            signal.signal(signum, _on_signal)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_interrupt)


def pytest_configure(config):   # as a plugin (`-p process_groups`) the handlers are there from the start
    end_all_on_exit()

