"""The explicit rlimits fallback, tested where it can work: this machine keeps Python under a
0700 /root and the project world-readable, so the fallback rightly refuses here; the sandbox's
rlimits tests then run inside the machine tests/rlimits_machine.py makes (root, Python reachable
by other uids, the project closed), with the production rules unchanged."""

from __future__ import annotations

import json
import os

import pytest
from rlimits_machine import MACHINE_ENV, PYTHON, machine_problem, run_in_machine
from sandbox_helpers import RLIMITS_PROBLEM

RLIMITS_TESTS = ("tests/sandbox/test_sandbox_rlimits.py", "tests/sandbox/test_sandbox_launcher.py",
                 "tests/sandbox/test_sandbox_isolation.py", "tests/sandbox/test_sandbox_lockdown.py",
                 "tests/sandbox/test_sandbox_placement.py", "tests/sandbox/test_sandbox_kernel_surface.py")


@pytest.mark.skipif(RLIMITS_PROBLEM is None, reason="the fallback works here: its tests already ran")
@pytest.mark.skipif(machine_problem() is not None, reason=f"no machine for the fallback: {machine_problem()}")
def test_the_fallback_tests_pass_where_the_fallback_can_keep_the_project_private():
    run = run_in_machine(PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
                         "-k", "rlimits or fallback", *RLIMITS_TESTS, timeout=600)
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "the fallback refuses here" not in run.stdout, run.stdout[-3000:]


@pytest.mark.skipif(machine_problem() is not None, reason=f"no machine for the fallback: {machine_problem()}")
def test_the_machine_runs_with_a_fixed_environment_not_the_hosts(monkeypatch):
    monkeypatch.setenv("PATH", f"/host-only-folder:{os.environ.get('PATH', '/usr/bin')}")
    monkeypatch.setenv("CS349E_HOST_ONLY", "1")
    run = run_in_machine(PYTHON, "-c", "import json, os; print(json.dumps(dict(os.environ)))")
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert "/host-only-folder" not in seen["PATH"] and "CS349E_HOST_ONLY" not in seen, seen
    assert set(seen) - {"PWD", "SHLVL", "_"} == set(MACHINE_ENV), seen
