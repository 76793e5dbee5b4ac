"""Does a test that meets the grader's "machine overloaded" refusal show up as a skip with the
grader's reason (and the run exit 0), while a real failure still fails, and a test that exists to
check a refusal is not made fails on it?"""

import os
import subprocess
import sys
import textwrap

import pytest

from core.script_output import REPO

TESTS = textwrap.dedent('''
    import subprocess, sys
    from autograder.sandbox import MachineOverloaded

    def test_raised_in_process():
        raise MachineOverloaded("machine overloaded: notebook handout.ipynb: stopped at 30 s; grade again")

    def test_printed_by_a_command():
        proc = subprocess.run([sys.executable, "-c",
                               "import sys; sys.exit('machine overloaded: codesign.quantize stopped')"],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr

    def test_a_real_failure():
        assert 1 + 1 == 3, "overloaded is not the word of this failure"
''')


def _run(tmp_path, *selection):
    (tmp_path / "test_busy.py").write_text(TESTS)
    (tmp_path / "conftest.py").write_text("from overload import pytest_runtest_makereport  # noqa: F401\n")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                           "-o", f"pythonpath={REPO} {REPO / 'tests'}", *selection],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_a_refusal_is_a_skip_with_the_graders_reason(tmp_path):
    proc = _run(tmp_path, "test_busy.py::test_raised_in_process", "test_busy.py::test_printed_by_a_command")
    # Booleans only: the output quotes the refusal, and a message quoting it would make this test a skip.
    skipped = "2 skipped" in proc.stdout and proc.returncode == 0
    reasons = ("machine overloaded: notebook handout.ipynb: stopped at 30 s" in proc.stdout
               and "machine overloaded: codesign.quantize stopped" in proc.stdout)
    assert skipped
    assert reasons


def test_a_real_failure_still_fails(tmp_path):
    proc = _run(tmp_path, "test_busy.py::test_a_real_failure")
    assert proc.returncode == 1 and "1 failed" in proc.stdout, proc.stdout[-300:]


# Makes the grader call every notebook an overload: what a grader that misjudged a submission's
# own spin as the machine's load would do.
MISJUDGING_GRADER = textwrap.dedent('''
    from autograder.engine import invoke
    from autograder.sandbox import MachineOverloaded

    def pytest_configure(config):
        def misjudged(self, *args, **kwargs):
            raise MachineOverloaded("machine overloaded: notebook handout.ipynb: its own spin, misjudged")
        invoke.StudentCode.run_notebook = misjudged
''')
OWN_TIMEOUT_TEST = "tests/engine/test_machine_load.py::test_a_notebook_spinning_through_its_own_cpu_share_is_still_its_own_timeout"


def test_the_test_of_a_submissions_own_timeout_fails_when_the_grader_calls_it_an_overload(tmp_path):
    """test_machine_load checks that a notebook spinning through its own CPU share is its own
    timeout, not the machine's load: a grader that answers "machine overloaded" there must fail
    that test, not skip it into passing."""
    (tmp_path / "misjudging_grader.py").write_text(MISJUDGING_GRADER)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider",
                           "-p", "misjudging_grader", OWN_TIMEOUT_TEST], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    if "1 skipped" in proc.stdout and "no cgroup for the sandbox here" in proc.stdout:
        pytest.skip("no cgroup for a sandbox here: the test itself skips before it grades")
    failed = proc.returncode == 1 and "1 failed" in proc.stdout
    named = "own spin was called the machine's load 3 times" in proc.stdout
    assert failed, proc.stdout[-1500:].replace("overloaded", "0verloaded")
    assert named, proc.stdout[-1500:].replace("overloaded", "0verloaded")
