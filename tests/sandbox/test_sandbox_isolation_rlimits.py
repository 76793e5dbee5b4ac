"""The explicit rlimits fallback, tested where it can work: this machine keeps Python under a
0700 /root and the project world-readable, so the fallback rightly refuses here; each of the
sandbox's rlimits tests then runs inside the machine tests/rlimits_machine.py makes (root, Python
reachable by other uids, the project closed) and reports here (fallback_in_machine.py), with the
production rules unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from rlimits_machine import MACHINE_ENV, PYTHON, ROOT, machine_problem, run_in_machine
from sandbox_helpers import RLIMITS_PROBLEM

# A quick test of the fallback: it needs the fallback to work, and it is marked so.
FALLBACK_TEST = "tests/sandbox/test_sandbox_launcher.py::test_fallback_warns_loudly_once_per_process"


@pytest.mark.skipif(RLIMITS_PROBLEM is None, reason="the fallback works here: its tests run here")
@pytest.mark.skipif(machine_problem() is not None, reason=f"no machine for the fallback: {machine_problem()}")
def test_a_fallback_test_runs_and_passes_in_a_checkout_where_the_fallback_refuses():
    """Is a test of the fallback run (not skipped) where the fallback refuses, as in CI (Python
    under a 0700 /root), and is its own outcome the one pytest reports?"""
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", FALLBACK_TEST],
                         cwd=ROOT, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-2000:]
    summary = run.stdout.strip().splitlines()[-1]
    assert "1 passed" in summary and "skipped" not in summary, run.stdout[-3000:]
    assert f"PASSED {FALLBACK_TEST}" in run.stdout, run.stdout[-3000:]


@pytest.mark.skipif(machine_problem() is not None, reason=f"no machine for the fallback: {machine_problem()}")
def test_the_machine_runs_with_a_fixed_environment_not_the_hosts(monkeypatch):
    monkeypatch.setenv("PATH", f"/host-only-folder:{os.environ.get('PATH', '/usr/bin')}")
    monkeypatch.setenv("CS349E_HOST_ONLY", "1")
    run = run_in_machine(PYTHON, "-c", "import json, os; print(json.dumps(dict(os.environ)))")
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert "/host-only-folder" not in seen["PATH"] and "CS349E_HOST_ONLY" not in seen, seen
    assert set(seen) - {"PWD", "SHLVL", "_"} == set(MACHINE_ENV), seen
