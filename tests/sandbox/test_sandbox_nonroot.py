"""A non-root instructor (the usual way nbgrader is run): bubblewrap runs unprivileged, no cgroup
can be made, and every output says so ("bubblewrap + rlimits"); no user namespace can be made
inside that sandbox either. Run as uid 65534 in tests/nonroot_machine.py's machine."""

from __future__ import annotations

import csv
import io
import json
import pwd
import shutil

import pytest
from nonroot_machine import PYTHON, USER, nonroot_problem, run_as_user

from autograder.engine.registry import load_config
from engine.corpus import ASSIGNMENT, EXAMPLES_DIR

pytestmark = pytest.mark.skipif(nonroot_problem() is not None, reason=f"no non-root machine: {nonroot_problem()}")
USER_NAME = pwd.getpwuid(USER).pw_name


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
    _assert_says_what_is_missing_and_how_to_get_it(summary)


def _assert_says_what_is_missing_and_how_to_get_it(summary: str) -> None:
    """The README's `systemd-run --user --scope …` fails on a login without a user manager
    ("Failed to connect to bus: No medium found"); the grader's summary says what the run lacked
    and what to ask root for on this machine."""
    (line,) = [line for line in summary.splitlines() if line.startswith("quotas: rlimits only")]
    assert "no cgroup per sandbox (" in line
    for lost in ("memory is capped per process, not for the whole sandbox", "CPU share is not held",
                 "CPU time is counted per process"):
        assert lost in line, line
    how = line.split("to get them back: ", 1)[1]
    if not cgroup2_mounted():
        assert "grade as root, or on a machine with cgroup v2" in how, line
    elif shutil.which("systemd-run") is None:
        assert "(systemd-run is not installed)" in how and "loginctl enable-linger" in how, line
    else:   # this user has no systemd user manager: what systemd-run said, and the two ways out
        said = run_as_user("systemd-run", "--user", "--scope", "--quiet", "true").stderr.split()
        assert f"`systemd-run --user` failed: {' '.join(said)}"[:60] in how, line
        assert f"`loginctl enable-linger {USER_NAME}`" in how and "cgroup v2 subtree" in how, line
        assert "docs/grading.md" in how, line


def cgroup2_mounted() -> bool:
    with open("/proc/self/mounts", encoding="utf-8") as mounts:
        return any(line.split()[2] == "cgroup2" for line in mounts)


def test_no_user_namespace_inside_a_non_root_sandbox():
    """Here bubblewrap itself made a user namespace for the sandbox: --disable-userns and the
    worker's filter keep student code from making another one."""
    run = run_as_user(PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                      "tests/sandbox/test_sandbox_lockdown.py", "-k", "started and (no_user_namespace or side_door)")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "2 passed" in run.stdout, run.stdout[-2000:]
