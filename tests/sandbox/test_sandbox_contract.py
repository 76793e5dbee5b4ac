"""The confinement contract, one scenario set over every isolation × quota backend this machine
offers: what each backend promises (its class's properties, never its name) holds for hostile
code in a real sandbox.

    every backend   the sandbox records the confinement that ran it; student code never runs as
                    root, nor as the grader where each sandbox gets a uid of its own; it cannot
                    read the reference (solutions/) nor write beside its own folder; memory beyond
                    the limit is refused and the sandbox carries on; a spinning call ends on CPU
                    time, a sleeping one as blocked; a fork bomb stops below the process limit
    own_network     no listener of the host is reachable
    per_sandbox     the whole sandbox's peak memory stays within the limit

The uid fallback's combinations run where it can work (tests/sandbox/fallback_in_machine.py)."""

from __future__ import annotations

import os
import socket
from dataclasses import replace

import pytest
from sandbox_helpers import FAST, FORK_SPIN_SLEEP, needs_bwrap, needs_rlimits

from autograder.engine.registry import REPO_ROOT
from autograder.sandbox import cgroups, confinement

HOSTILE = {
    "codesign.py": """
        import os, socket, time
        import numpy as np

        def identity():
            return [os.getuid(), os.geteuid()]

        def connect(port):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
            except OSError:
                return "refused"
            return "connected"

        def read(path):
            try:
                with open(path, "rb") as f:
                    return len(f.read(16))
            except OSError:
                return "denied"

        def write(path):
            try:
                with open(path, "w") as f:
                    f.write("x")
            except OSError:
                return "denied"
            return "written"

        def allocate(mb):
            block = np.ones(mb * 2**20 // 8)
            return int(block.size)

    """ + FORK_SPIN_SLEEP,
}
LIMITS = replace(FAST, memory_bytes=1024**3, call_timeout=1.0, max_processes=16)

ISOLATIONS = [pytest.param(confinement.BUBBLEWRAP, marks=needs_bwrap, id="bubblewrap"),
              pytest.param(confinement.UID_FALLBACK, marks=needs_rlimits, id="uid-fallback")]
QUOTAS = ["machine", "none"]   # this machine's backend, and the one where no group can be made


@pytest.fixture(params=QUOTAS)
def quota(request, monkeypatch) -> confinement.Quota:
    """The quota backend the test's sandboxes get."""
    if request.param == "none":
        monkeypatch.setattr(cgroups, "create", lambda limits: None)   # no group could be made
        return confinement.NO_QUOTA
    machine = confinement.quotas()
    if not machine.per_sandbox:
        pytest.skip(f"this machine has no group per sandbox ({machine.problem}): 'none' covers it")
    return machine


@pytest.fixture
def host_listener():
    server = socket.create_server(("127.0.0.1", 0))
    yield server.getsockname()[1]
    server.close()


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_the_confinement_contract(isolation, quota, sandbox, host_listener, tmp_path):
    box = sandbox(HOSTILE, limits=LIMITS, isolation=isolation.name)
    uid, euid = box.call("codesign", "identity").value

    # what ran it is what it records
    assert (box.isolation, box.quotas) == (isolation.name, quota.name)

    # uid
    assert 0 not in (uid, euid)
    if isolation.claims_uid():
        assert os.geteuid() not in (uid, euid)

    # network
    if isolation.own_network:
        assert box.call("codesign", "connect", (host_listener,)).value == "refused"

    # files: the reference is out of reach, and nothing is written beside the student's folder
    reference = next(p for p in sorted((REPO_ROOT / "solutions").rglob("*.py")) if p.stat().st_size)
    assert box.call("codesign", "read", (str(reference),)).value == "denied"
    beside = tmp_path / "written-by-the-student"
    assert box.call("codesign", "write", (str(beside),)).value == "denied" and not beside.exists()

    # memory: refused beyond the limit, and the sandbox carries on
    assert box.call("codesign", "allocate", (1536,)).status != "ok"
    if quota.per_sandbox:
        peak = box._resources.cgroup.peak_memory_bytes()
        assert peak is not None and peak <= LIMITS.memory_bytes + 2**20
    assert box.call("codesign", "allocate", (8,)).status == "ok"

    # cpu: a spinning call ends on CPU time (or, without a group to measure, the machine's load),
    # a sleeping one is told apart
    spinning = box.call("codesign", "spin", (30,))
    causes = ("cpu",) if quota.per_sandbox else ("cpu", "load")
    assert spinning.status == "timeout" and spinning.timeout_cause in causes
    sleeping = box.call("codesign", "sleep", (30,))
    assert sleeping.status == "timeout" and sleeping.timeout_cause == "blocked"

    # processes
    assert box.call("codesign", "fork_bomb").value < LIMITS.max_processes
