"""Every long-running process a test (or a benchmark) starts: in a process group of its own, and
ended with that whole group however the run ends.

- The test's own code ends it (`end`), as before.
- pytest is interrupted (Ctrl-C) or told to stop (SIGTERM, SIGHUP: a CI timeout, a closed
  terminal): the handlers installed by `end_all_on_exit` end every group still registered, then
  the run stops as it would have.
- pytest is killed outright (SIGKILL): the kernel sends the group's leader SIGTERM
  (PR_SET_PDEATHSIG), and the leader ends what it started (jupyter-lab its kernels, a dask worker
  its sandboxes).
A group of its own is what keeps a terminal's Ctrl-C from reaching the process directly, hence
the handlers.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import subprocess
import sys

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
    """Ends the process's whole group: `sig`, then SIGKILL after `grace` seconds."""
    _STARTED.pop(proc.pid, None)
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


def end_all() -> None:
    for proc in list(_STARTED.values()):
        end(proc, grace=5.0)


def _on_signal(signum, frame):
    end_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


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

