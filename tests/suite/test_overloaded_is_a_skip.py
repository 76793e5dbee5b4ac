"""Does a test that meets the grader's "machine overloaded" refusal show up as a skip with the
grader's reason (and the run exit 0), while a real failure still fails?"""

import subprocess
import sys
import textwrap

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
