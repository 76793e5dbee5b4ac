"""A non-root instructor (the usual way nbgrader is run): bubblewrap runs unprivileged, no cgroup
can be made, and every output says so ("bubblewrap + rlimits"); no user namespace can be made
inside that sandbox either. Run as uid 65534 in tests/nonroot_machine.py's machine."""

from __future__ import annotations

import csv
import io
import json

import pytest
from nonroot_machine import PYTHON, nonroot_problem, run_as_user

from autograder.engine.registry import load_config
from engine.corpus import ASSIGNMENT, EXAMPLES_DIR

pytestmark = pytest.mark.skipif(nonroot_problem() is not None, reason=f"no non-root machine: {nonroot_problem()}")


def test_a_non_root_grader_grades_alike_and_says_it_has_no_cgroup():
    run = run_as_user("/bin/sh", "-c", f"""
        set -e
        mkdir /tmp/subs && cp -r {EXAMPLES_DIR}/alice /tmp/subs/
        {PYTHON} -m autograder grade {ASSIGNMENT} /tmp/subs --out /tmp/out
        echo ===csv; cat /tmp/out/grades.csv
        echo ===json; cat /tmp/out/results/alice.json
        echo ===feedback; head -3 /tmp/out/feedback/alice.md
    """, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    summary, rest = run.stdout.split("===csv\n")
    table, rest = rest.split("===json\n")
    results, feedback = rest.split("===feedback\n")
    (alice,) = list(csv.DictReader(io.StringIO(table)))
    auto = sum(item.points for item in load_config(ASSIGNMENT).items if item.kind != "text")
    assert float(alice["score"]) == auto
    assert (alice["isolation"], alice["quotas"]) == ("bubblewrap", "rlimits")
    assert json.loads(results)["extra_data"]["submission"]["quotas"] == "rlimits"
    assert "资源限制：rlimits" in feedback
    assert "(isolation: bubblewrap + rlimits)" in summary


def test_no_user_namespace_inside_a_non_root_sandbox():
    """Here bubblewrap itself made a user namespace for the sandbox: --disable-userns and the
    worker's filter keep student code from making another one."""
    run = run_as_user(PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                      "tests/sandbox/test_sandbox_lockdown.py", "-k", "started and (no_user_namespace or side_door)")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "2 passed" in run.stdout, run.stdout[-2000:]
