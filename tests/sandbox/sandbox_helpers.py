"""Helpers for the sandbox tests: tiny (often hostile) submissions written into tmp_path."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from autograder.sandbox import Limits, rlimits_problem

# Skip the bubblewrap tests only where bwrap is not installed. Installed but broken (no user
# namespaces, a hidden interpreter) is a failure to see, not a skip: CI must test the sandbox.
BWRAP_MISSING = shutil.which("bwrap") is None
needs_bwrap = pytest.mark.skipif(BWRAP_MISSING, reason="bubblewrap (bwrap) is not installed")
# The explicit rlimits fallback refuses where it cannot keep the project private (here: Python
# under a 0700 /root); the tests marked so then run inside tests/rlimits_machine.py's machine and
# report here (fallback_in_machine.py).
RLIMITS_PROBLEM = rlimits_problem()
needs_rlimits = pytest.mark.needs_rlimits_fallback
# Short limits keep the hostile cases fast; the defaults are exercised by the happy paths.
FAST = Limits(call_timeout=2.0, import_timeout=3.0, cell_timeout=1.0, notebook_timeout=6.0,
              max_processes=24)


# Student code the quota tests share (joined to a submission's source, which imports os and time):
# a fork bomb that stops where the sandbox refuses a process, CPU spent, and time slept.
FORK_SPIN_SLEEP = """
        def fork_bomb():
            started = 0
            while started < 200:
                try:
                    pid = os.fork()
                except OSError:
                    return started
                if pid == 0:
                    time.sleep(60)
                    os._exit(0)
                started += 1
            return started

        def spin(seconds):
            start = time.process_time()
            while time.process_time() - start < seconds:
                pass
            return seconds

        def sleep(seconds):
            time.sleep(seconds)
            return seconds
"""


def write_files(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return folder


def notebook_json(*cells: str) -> str:
    """A minimal nbformat-4 notebook whose code cells hold `cells` (a cell starting with "#md "
    becomes a markdown cell)."""
    out = []
    for source in cells:
        source = textwrap.dedent(source)
        if source.startswith("#md "):
            out.append({"cell_type": "markdown", "metadata": {}, "source": source[4:]})
        else:
            out.append({"cell_type": "code", "metadata": {}, "execution_count": None,
                        "outputs": [], "source": source.splitlines(keepends=True)})
    return json.dumps({"cells": out, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def processes_with(marker: str) -> list[int]:
    """Host pids whose command line contains `marker`."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                    if marker.encode() in handle.read() and running(int(entry.name)):
                        found.append(int(entry.name))
            except OSError:
                pass
    return found


def running(pid: int) -> bool:
    """Whether `pid` exists and is not a zombie (reaping orphans is init's business)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def zombie_children() -> list[int]:
    """Our own children that died but were never reaped."""
    zombies = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] == "Z" and int(fields[1]) == os.getpid():
                zombies.append(int(entry.name))
    return zombies


def wait_for_fork_server(timeout: float = 60.0) -> None:
    """Starts the fork server if needed and waits until it forks workers; skips where workers
    are never forked (not root, no cgroups)."""
    from autograder.sandbox import forkserver_client
    from autograder.sandbox.cgroups import support
    if os.geteuid() != 0 or support() is not None or BWRAP_MISSING:
        pytest.skip("workers are forked from the fork server only by a root grader with cgroups")
    status = forkserver_client.prepare("bubblewrap", wait=timeout)
    assert status == "ready", f"the fork server is not ready: {status}"


def call_in_worker_of_kind(sandbox, source: dict[str, str], function: str, *, forked: bool):
    """A sandbox of `source` whose worker is forked from the fork server or started (asserted:
    a test about both kinds says so only if each worker really is of its kind), and what
    `codesign.<function>()` returned in it."""
    from autograder.sandbox import forkserver_client
    forkserver_client.ENABLED = forked
    if forked:
        wait_for_fork_server()
    box = sandbox(source)
    outcome = box.call("codesign", function)
    assert outcome.status == "ok", outcome
    assert box._resources.worker.forked is forked
    return box, outcome.value
