"""Fixtures for the sandbox tests: Sandboxes on tiny submissions, all closed after each test."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import fallback_in_machine
import pytest
from sandbox_helpers import BWRAP_MISSING, FAST, wait_for_fork_server, write_files

from autograder.sandbox import Limits, Sandbox, rlimits_problem


# The rlimits fallback's tests run where it works: here, or in the machine (fallback_in_machine.py).
# Planned once the selection is final (after -k, -m and deselection), so only selected tests run.
def pytest_collection_finish(session):
    where = fallback_in_machine.where_to_run()
    if where == "machine":
        session.config.fallback_machine_runs = fallback_in_machine.MachineRuns(session.config)
        session.config.fallback_machine_runs.plan(session.items)
    elif where is None:
        for item in session.items:
            if fallback_in_machine.marked(item):
                item.add_marker(pytest.mark.skip(reason=fallback_in_machine.skip_reason()))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    runs = getattr(item.config, "fallback_machine_runs", None)
    if runs is not None and fallback_in_machine.marked(item):
        return runs.run_protocol(item, nextitem)
    return None


def pytest_runtest_setup(item):
    if fallback_in_machine.inside_machine() and fallback_in_machine.marked(item) and rlimits_problem():
        pytest.fail(f"the fallback refuses even in the machine made for it: {rlimits_problem()}")


def pytest_runtest_logreport(report):
    if fallback_in_machine.inside_machine():
        fallback_in_machine.record(_config, report)


def pytest_configure(config):
    global _config
    _config = config


_config = None


@pytest.fixture
def submission(tmp_path):
    """Writes a submission folder from {name: source} and returns its path."""
    def make(files: dict[str, str], name: str = "student") -> Path:
        return write_files(tmp_path / name, files)
    return make


@pytest.fixture
def sandbox(submission, request):
    """Opens a bubblewrap Sandbox on a submission; closes every one at the end of the test."""
    opened = []
    # How each sandbox's first worker came to be, where it could have been forked (bubblewrap
    # with a cgroup): `worker_start` checks the test got the kind it claims.
    request.node.worker_kinds = kinds = []

    def make(files: dict[str, str], *, limits: Limits = FAST, isolation: str = "bubblewrap",
             overlay=None, env=None, factories=()) -> Sandbox:
        if isolation == "bubblewrap" and BWRAP_MISSING:
            pytest.skip("bubblewrap (bwrap) is not installed")
        box = Sandbox(submission(files, name=f"student{len(opened)}"), overlay=overlay or {},
                      limits=limits, isolation=isolation, env=env, factories=factories)
        opened.append(box)
        if box.isolation == "bubblewrap" and box._resources.cgroup.bounded:
            kinds.append("forked" if box._resources.worker.forked else "started")
        return box

    yield make
    for box in opened:
        box.close()


@pytest.fixture(params=["forked", "started"])
def worker_start(request):
    """Workers forked from the fork server (waited for: it imports in the background), or
    started by bubblewrap as a fresh interpreter; the test's Sandboxes use that start."""
    from autograder.sandbox import forkserver_client
    saved = forkserver_client.ENABLED
    forkserver_client.ENABLED = request.param == "forked"
    if request.param == "forked":
        wait_for_fork_server()
    yield request.param
    forkserver_client.ENABLED = saved
    # A test run "with both" must really have had both: every worker that could be of this kind is.
    kinds = getattr(request.node, "worker_kinds", [])
    assert set(kinds) <= {request.param}, f"asked for {request.param} workers, got {kinds}"


@pytest.fixture
def open_system_folder():
    """A world-writable sticky folder of the system outside /tmp and its kind, as Ubuntu's
    /var/crash (1777) is: made for the test, removed after it."""
    for parent in ("/var/spool", "/var/lib", "/opt", "/srv", "/dev"):   # not /run: covered where scratch is private
        folder = Path(parent) / f"cs349e-open-{os.urandom(4).hex()}"
        try:
            folder.mkdir()
            break
        except OSError:
            continue
    else:
        pytest.skip("no system folder can be made here")
    os.chmod(folder, 0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
