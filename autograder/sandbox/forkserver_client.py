"""The grader's side of the fork server (forkserver.py): start it once per process, hand it a
sandbox's descriptors, and describe how its worker ended.

Started by `prepare` (a batch, before it forks its graders) and used only where a worker forked
from it ends up exactly as confined as one bubblewrap starts: bubblewrap as root (the worker
switches to its sandbox's own uid) with a cgroup per sandbox (the worker joins it before it
exists, and its CPU time is metered there). Anywhere else, and until the server has finished its
imports, workers start the usual way: a sandbox never waits for it. `ENABLED = False` switches
it off (benchmarks compare both).

Imported by process.py inside its functions: a hidden-test draw imports the sandbox package,
and hypothesis draws from the literal constants of every local module it finds imported.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .forkserver import CHANNEL_FD, FONT_LIST_ENV, NAMESPACES, STATUS  # noqa: F401 - CHANNEL_FD: for process.py

ENABLED = True
_FOLDER = Path(__file__).resolve().parent   # forkserver.py and the worker's files
# What bubblewrap runs in the sandbox instead of the worker: it sends the sandbox's namespaces to
# the fork server's helper once the sandbox is built, then waits until the sandbox is torn down.
_PLACEHOLDER = """\
import os, signal, socket
names = [n for n in {names!r} if os.path.exists("/proc/self/ns/" + n)]
fds = [os.open("/proc/self/ns/" + n, os.O_RDONLY) for n in names]
socket.send_fds(socket.socket(fileno={fd}), [" ".join(names).encode()], fds)
for fd in fds:
    os.close(fd)
os.closerange(0, 3)
while True:
    signal.pause()
"""


class ForkServer:
    """One fork server process and the socket to it."""

    def __init__(self):
        from .worker_plan import _base_env
        from .plotting import shared_font_list
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fonts = shared_font_list()
        self.owner = os.getpid()
        self.problem: str | None = None   # why it cannot be used (refused, or stopped)
        self.dead = False                 # it stopped after starting well: a new one may do
        self._ready = False
        self.preloaded: frozenset[str] = frozenset()   # top-level modules it imported
        self._lock = threading.Lock()
        self._errors = tempfile.TemporaryFile()   # why it exited, if it does
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-s", "-B", "-m", "forkserver", str(theirs.fileno())],
                # What libraries read while imported, as in a sandbox.
                env={**_base_env("/tmp"), "PYTHONPATH": str(_FOLDER), FONT_LIST_ENV: str(fonts or "")},
                cwd="/", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._errors,
                pass_fds=(theirs.fileno(),), start_new_session=True, close_fds=True)
        finally:
            theirs.close()
        self._sock = ours
        atexit.register(self.stop)

    def ready(self) -> bool:
        """True once the server has done its imports (never blocks)."""
        if self._ready or self.problem is not None:
            return self._ready
        if not select.select([self._sock], [], [], 0)[0]:
            return False
        try:
            hello = self._sock.recv(1 << 16, socket.MSG_PEEK)   # left there for forked processes
        except OSError as exc:
            hello = f"unreadable ({exc})".encode()
        if hello.startswith(b"ready "):
            self.preloaded = frozenset(json.loads(hello[6:]))
            self._ready = True
        else:
            self.problem = hello.decode("utf-8", "replace") or "it exited during its imports"
            self.stop()
            self._errors.seek(0)
            last = self._errors.read().decode("utf-8", "replace").strip().splitlines()[-1:]
            self.problem += f" ({last[0][:300]})" if last else ""
        return self._ready

    def spawn(self, request: dict, fds: list[int]) -> bool:
        """Asks for one worker; False if the server is gone (the caller starts the worker itself)."""
        with self._lock:
            try:
                socket.send_fds(self._sock, [json.dumps(request).encode()], fds)
                return True
            except OSError as exc:
                self.problem = f"it stopped answering ({exc.strerror})"
                self.dead = True
                self.stop()
                return False

    def stop(self) -> None:
        self._ready = False
        self.problem = self.problem or "stopped"
        self._sock.close()
        if self.owner != os.getpid():
            return   # a copy inherited by a forked process: the server is its parent's
        if self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()


_server: ForkServer | None = None
_RESTARTS = 3   # a server that keeps dying is not started again in this process


def server_for(plan, cgroup) -> ForkServer | None:
    """The fork server if one was started (`prepare`) and a worker for `plan` may be forked from
    it now, else None."""
    if not ENABLED or _server is None or not plan.backend.forkable(plan) or not cgroup.bounded:
        return None
    if _server.dead:
        _restart()   # for later sandboxes
        return None
    if not _server.ready() or _shadows(Path(plan.cwd), _server.preloaded):
        return None
    return _server


def _shadows(folder: Path, preloaded: frozenset[str]) -> bool:
    """Whether a file or folder of the submission would be importable under the name of a module
    the server preloaded: a started worker would import the student's, a forked one ours."""
    try:
        return any(entry.name.split(".")[0] in preloaded for entry in folder.iterdir())
    except OSError:
        return True


def prepare(isolation: str, wait: float = 0.0) -> str:
    """Starts the fork server where workers for `isolation` would be forked from it, and waits
    up to `wait` seconds for its imports; returns `status()`. Worth it when several submissions
    are graded (a batch): its imports cost what one worker's do. Processes forked afterwards (a
    batch's graders) share it: each request is one message on a socket they all inherit."""
    from . import confinement
    if ENABLED and confinement.isolation_named(isolation).forks_here() and confinement.quotas().per_sandbox:
        if _server is None:
            _start()
        elif _server.dead:
            _restart()
        deadline = time.monotonic() + wait
        while (_server is not None and not _server.ready() and _server.problem is None
               and time.monotonic() < deadline):
            time.sleep(0.02)
    return status()


def _restart() -> None:
    """A new server for one that was killed or crashed, a few times per process at most."""
    global _RESTARTS
    if _RESTARTS > 0:
        _RESTARTS -= 1
        _start()


def _start() -> None:
    global _server, _RESTARTS
    try:
        _server = ForkServer()
    except OSError as exc:
        _RESTARTS = 0
        print(f"note: the sandbox fork server could not start ({exc}); workers start the usual way",
              file=sys.stderr)


def give_up(reason: str) -> None:
    """A worker forked from the server did not start: no more forking in this process (each
    sandbox then starts its worker itself), and the reason is kept for `status()`."""
    global _RESTARTS
    _RESTARTS = 0
    if _server is not None:
        _server.problem = f"a forked worker did not start: {reason}"[:500]
        _server.dead = True
        _server.stop()


def status() -> str:
    """One line for logs and tests: whether workers are being forked from the server."""
    if not ENABLED:
        return "switched off"
    if _server is None:
        return "not started"
    return "ready" if _server.ready() else (_server.problem or "importing")


def placeholder_argv(ns_fd: int) -> list[str]:
    """The command bubblewrap runs in the sandbox while the worker comes from the fork server."""
    return [sys.executable, "-S", "-I", "-c", _PLACEHOLDER.format(names=tuple(NAMESPACES), fd=ns_fd)]


def read_status(fd: int, wait: float) -> int | None:
    """The worker's exit code from the status pipe (negative: killed by that signal), waiting up
    to `wait` seconds; None if the helper did not report one."""
    if not select.select([fd], [], [], wait)[0]:
        return None
    try:
        data = os.read(fd, STATUS.size)
    except OSError:
        return None
    if len(data) != STATUS.size:
        return None
    try:
        return os.waitstatus_to_exitcode(STATUS.unpack(data)[0])
    except ValueError:   # not an exit or a kill: the helper reports only those
        return None
