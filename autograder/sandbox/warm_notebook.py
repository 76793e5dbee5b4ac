"""A notebook child forked when the worker starts, with the plotting libraries already imported.

Importing pyplot costs ~0.3 s of every notebook. The worker forks this child before any student
code runs; the child imports the libraries (nothing to do where the worker came from the fork
server, which imported them once for every sandbox: forkserver.py) while the worker serves the
function tests (on another core, or while the worker waits for the parent), then waits for the
notebook request and runs it exactly as the worker's own forked child would. It holds no student
state: the student's module is not imported yet when it is forked, so the notebook never sees what
the function tests did to it. Used only when the submission has a notebook and the grader asks
for it (SANDBOX_WARM_NOTEBOOK=1). Runs inside the sandbox; standard library only.
"""

import glob
import importlib
import json
import os
import struct

ENV = "SANDBOX_WARM_NOTEBOOK"
# Imported ahead of any student code, here and in the fork server: what handout notebooks use
# (numpy, plots, the kit's rich tables). A library that is not installed is skipped.
LIBRARIES = ("numpy", "matplotlib.pyplot", "rich.console", "rich.table")
_LENGTH = struct.Struct("!I")


class WarmChild:
    """The parent's handle: the child's pid, where to send the request, where the reply comes."""

    def __init__(self, pid: int, control_fd: int, reply_fd: int):
        self.pid, self.control_fd, self.reply_fd = pid, control_fd, reply_fd

    @classmethod
    def start(cls, run):
        """Forks the child, or returns None (not asked for, no notebook, or fork refused).
        `run(request) -> bytes` is the reply frame the child writes for the notebook request."""
        if os.environ.get(ENV) != "1" or not glob.glob("*.ipynb"):
            return None
        control_read, control_write = os.pipe()
        reply_read, reply_write = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            for fd in (control_read, control_write, reply_read, reply_write):
                os.close(fd)
            return None
        if pid == 0:
            os.close(control_write)
            os.close(reply_read)
            try:
                _quietly(import_libraries)
                request = _read_request(control_read)
                if request is not None:
                    _write_all(reply_write, run(request))
            finally:
                os._exit(0)
        os.close(control_read)
        os.close(reply_write)
        return cls(pid, control_write, reply_read)

    def hand_over(self, request: dict):
        """Sends the notebook request; (pid, fd of the reply) as from a fresh fork, or None if the
        child is gone (the caller forks a fresh child instead)."""
        data = json.dumps(request).encode()
        try:
            _write_all(self.control_fd, _LENGTH.pack(len(data)) + data)
        except OSError:
            self.discard()
            return None
        os.close(self.control_fd)
        return self.pid, self.reply_fd

    def discard(self) -> None:
        """Ends an unused child (its request pipe closes, it exits) and reaps it."""
        for fd in (self.control_fd, self.reply_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def import_libraries() -> None:
    """Imports LIBRARIES; one that fails is left for the notebook to import (and report)."""
    for name in LIBRARIES:
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: BLE001
            pass


def _quietly(action) -> None:
    """Runs `action` with stderr silenced: a library's warning here is not the student's output."""
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        action()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _read_request(fd: int):
    head = _read_exact(fd, _LENGTH.size)
    if head is None:
        return None      # the worker ended without a notebook request
    body = _read_exact(fd, _LENGTH.unpack(head)[0])
    return None if body is None else json.loads(body)


def _read_exact(fd: int, n: int):
    buf = b""
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
