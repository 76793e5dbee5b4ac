"""Memory a sandbox holds outside its address space. RLIMIT_AS bounds what a process maps; where
no cgroup holds the sandbox (the uid fallback in a container or without cgroups, bubblewrap for
a grader with no group of its own) it was the only bound, and two kinds of memory pass it by: a
memfd's pages (`os.memfd_create`, written with `os.write`, never mapped) and a SysV segment's
pages once detached. One call of the uid fallback held 3 GB in memfds and 2 GB in detached
segments under a 2 GB limit, and `memfd_secret` files, mapped 1 MB at a time under a 1 MB
RLIMIT_MEMLOCK, as much again; each could have gone on until the machine ran out of memory, the
grader and the classmates' sandboxes with it. Tried from a module and from a notebook cell."""

from __future__ import annotations

import errno

import pytest
from sandbox_helpers import FAST, needs_bwrap, needs_rlimits, notebook_json

HOLDER = """
import ctypes, mmap, os

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
CHUNK = 1 << 20

def memfd_held(megabytes):
    # files of memory, each written (never mapped) up to the file size limit
    held, fds = 0, []
    try:
        while held < megabytes:
            fd = os.memfd_create("answers")
            fds.append(fd)
            for _ in range(32):
                os.write(fd, b"x" * CHUNK)
                held += 1
    except OSError as exc:
        return [held, exc.errno]
    return [held, 0]

def secret_held(megabytes):
    # memfd_secret files, each written through 1 MB windows: RLIMIT_MEMLOCK bounds what is
    # mapped at once, not what the files keep
    libc.syscall.restype = ctypes.c_long
    held, fds = 0, []
    try:
        while held < megabytes:
            fd = libc.syscall(447, 0)
            if fd < 0:
                return [held, ctypes.get_errno()]
            fds.append(fd)
            os.ftruncate(fd, 32 * CHUNK)
            for piece in range(32):
                with mmap.mmap(fd, CHUNK, offset=piece * CHUNK) as window:
                    window.write(b"x" * CHUNK)
                held += 1
    except OSError as exc:
        return [held, exc.errno]
    return [held, 0]

def segments_held(megabytes):
    # SysV segments, each touched while attached and then detached: out of the address space
    held, size = 0, 32 * CHUNK
    while held < megabytes:
        ident = libc.shmget(0, size, 0o1000 | 0o600)          # IPC_PRIVATE, IPC_CREAT
        if ident < 0:
            return [held, ctypes.get_errno()]
        address = libc.shmat(ident, None, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            return [held, ctypes.get_errno()]
        ctypes.memset(address, 1, size)
        libc.shmdt(address)
        held += 32
    return [held, 0]
"""
# Past the 2 GB memory limit: the sandbox must stop well before.
ASKED_MB = 2304


def _refused(found) -> None:
    held, err = found
    assert held == 0 and err == errno.EPERM, found


@needs_bwrap
def test_a_sandbox_cannot_hold_memory_in_memfds(sandbox, worker_start):
    box = sandbox({"codesign.py": HOLDER,
                   "handout.ipynb": notebook_json(HOLDER, f"found = memfd_held({ASKED_MB})",
                                                  f"secret = secret_held({ASKED_MB})")})
    outcome = box.call("codesign", "memfd_held", (ASKED_MB,))
    assert outcome.status == "ok", outcome
    _refused(outcome.value)
    outcome = box.call("codesign", "secret_held", (ASKED_MB,))
    assert outcome.status == "ok", outcome
    _refused(outcome.value)
    notebook = box.run_notebook("handout.ipynb", ["found", "secret"])
    assert notebook.status == "ok" and not notebook.cell_errors, notebook
    _refused(notebook.variables["found"])
    _refused(notebook.variables["secret"])


@needs_rlimits
def test_the_rlimits_fallback_holds_no_memory_in_memfds_or_detached_segments(sandbox):
    box = sandbox({"codesign.py": HOLDER,
                   "handout.ipynb": notebook_json(HOLDER, f"found = memfd_held({ASKED_MB})",
                                                  f"secret = secret_held({ASKED_MB})",
                                                  f"segments = segments_held({ASKED_MB})")},
                  isolation="rlimits")
    outcome = box.call("codesign", "memfd_held", (ASKED_MB,))
    assert outcome.status == "ok", outcome
    _refused(outcome.value)
    outcome = box.call("codesign", "secret_held", (ASKED_MB,))
    assert outcome.status == "ok", outcome
    _refused(outcome.value)
    outcome = box.call("codesign", "segments_held", (ASKED_MB,))
    assert outcome.status == "ok", outcome
    held, err = outcome.value
    # the sandbox's own IPC namespace holds at most the file size limit of segments in all
    assert held * (1 << 20) <= FAST.file_bytes and err in (errno.ENOSPC, errno.EINVAL, errno.ENOMEM), outcome.value
    notebook = box.run_notebook("handout.ipynb", ["found", "secret", "segments"])
    assert notebook.status == "ok" and not notebook.cell_errors, notebook
    _refused(notebook.variables["found"])
    _refused(notebook.variables["secret"])
    assert notebook.variables["segments"][0] * (1 << 20) <= FAST.file_bytes, notebook.variables


@needs_bwrap
def test_without_a_cgroup_bubblewrap_holds_no_detached_segments(sandbox, monkeypatch):
    """Bubblewrap's IPC namespace keeps the kernel's default bound on SysV shared memory, which is
    none, and the worker cannot set another there (/proc/sys is read-only): where no cgroup holds
    the sandbox (a grader with no group of its own), one call kept 512 MB of detached segments
    under a 256 MB limit. There a segment is refused; with a cgroup the group is charged for it."""
    from dataclasses import replace

    from autograder.sandbox import cgroups
    monkeypatch.setattr(cgroups, "create", lambda limits: None)   # no group could be made
    box = sandbox({"codesign.py": HOLDER, "handout.ipynb": notebook_json(HOLDER, "segments = segments_held(512)")},
                  limits=replace(FAST, memory_bytes=256 * 1024**2))
    outcome = box.call("codesign", "segments_held", (512,))
    assert outcome.status == "ok", outcome
    _refused(outcome.value)
    notebook = box.run_notebook("handout.ipynb", ["segments"])
    assert notebook.status == "ok" and not notebook.cell_errors, notebook
    _refused(notebook.variables["segments"])
