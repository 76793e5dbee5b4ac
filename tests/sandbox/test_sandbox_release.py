"""Closing a uid-fallback sandbox: every process of its uid is ended before its folder is removed,
so nothing still running as that uid can refill the folder while it goes (resources.release)."""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path

import pytest

from autograder.sandbox import resources as sandbox_resources
from autograder.sandbox.resources import SandboxResources as _Resources
from autograder.sandbox.workdir import remove_tree as real_remove_tree
from autograder.sandbox.uids import claim_uid, release_uid

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a process of another uid is started as root")


def _writer(folder: Path, uid: int) -> int:
    """A process of `uid` that no worker knows of (the worker already gone), adding folders to
    `folder` as fast as it can."""
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(folder)   # as a worker is: its folder is its working directory
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            index = 0
            while True:
                index += 1
                try:
                    os.mkdir(f"busy-{index}")
                except OSError:
                    pass
        finally:
            os._exit(1)
    return pid


def _processes_of(uid: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid:
                pids.append(int(entry))
        except FileNotFoundError:
            pass
    return [pid for pid in pids if not _zombie(pid)]


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_release_ends_the_uids_processes_before_it_removes_the_folder(monkeypatch):
    """Before: the folder was removed while a left process of the uid still ran (and could add to
    it meanwhile); after: no process of the uid runs by the time the folder is removed, and the
    folder goes."""
    running_at_removal = []

    def remove_tree(path):
        running_at_removal.extend(_processes_of(uid))
        if running_at_removal:   # the old order: removing would race the writer (without end)
            os.kill(writer, signal.SIGKILL)
        real_remove_tree(path)

    monkeypatch.setattr(sandbox_resources, "remove_tree", remove_tree)
    root = Path(tempfile.mkdtemp(prefix="cs349e-sandbox-"))   # the grader's, mode 0700
    uid = claim_uid()
    workdir = root / "submission"
    workdir.mkdir()
    os.chown(workdir, uid, uid)   # handed over, as hand_over does
    resources = _Resources(root)
    resources.uid, resources.sweep_uid = uid, True
    writer = _writer(workdir, uid)
    try:
        while len(os.listdir(workdir)) < 50:   # it is writing
            pass
        resources.release()
        assert running_at_removal == [] and not os.path.lexists(root)
        assert os.waitpid(writer, 0)[1] != 0   # ended by release, not by this test
    finally:
        try:
            os.kill(writer, signal.SIGKILL)
            os.waitpid(writer, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        release_uid(uid)
