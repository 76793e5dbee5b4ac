"""A test the machine's load stopped is not a failure: pytest reports it as a skip with the reason.

The grader refuses to record a result when a wall-clock guard stopped honest work while its
sandbox had used less CPU time than its budget (`MachineOverloaded`: "machine overloaded: ...").
On a shared machine any test that grades may meet that refusal. Such a test is reported as
skipped, with the grader's own message as the reason, whether the refusal was raised in the
test's process or printed by a command the test ran (and shown in the assertion's message).
Nothing is retried by the hook: the same fixtures may not allow a second run; run the test again.
A fixture that grades a whole class retries as an instructor would (`grade_until_recorded`).

A test that exists to check the grader does NOT call something an overload is marked
`overload_is_a_failure`: the refusal is then its failure, never a skip (a skip would pass it
exactly when the grader is wrong); such a test retries a busy machine's refusals itself.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import pytest

MARK = "machine overloaded"
NOT_A_SKIP = "overload_is_a_failure"


def overloaded_reason(text: str) -> str | None:
    """The grader's refusal line in `text`, or None: the last one, since a traceback quotes the
    `raise` line that builds the message (its "{what}" unfilled) before the message itself."""
    for line in reversed(text.splitlines()):
        at = line.find(MARK)
        if at >= 0:
            return line[at:].strip()[:300]
    return None


def grade_until_recorded(grade: Callable, tries: int = 3):
    """`grade()` (a grade_batch into one out folder: a fixture's whole class), run again as the
    grader tells an instructor to when a busy machine made it refuse to record a student ("machine
    overloaded"): each re-run grades only those. The last run's report is returned, its `graded`
    every student graded in any run; other grader errors are kept."""
    graded: list[str] = []
    for _ in range(tries):
        report = grade()
        graded += report.graded
        if not any(overloaded_reason(error) for _, error in report.failed):
            break
    return dataclasses.replace(report, graded=tuple(sorted(graded)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" or not report.failed or call.excinfo is None:
        return
    if item.get_closest_marker(NOT_A_SKIP) is not None:
        return
    from autograder.sandbox import MachineOverloaded

    if call.excinfo.errisinstance(MachineOverloaded):
        reason = overloaded_reason(str(call.excinfo.value)) or MARK
    else:
        reason = overloaded_reason(call.excinfo.exconly())
    if reason is None:
        return
    path, lineno, _ = item.reportinfo()
    report.outcome = "skipped"
    report.longrepr = (str(path), (lineno or 0) + 1, f"Skipped: the grader refused on a busy machine, "
                                                      f"not a failure (run it again): {reason}")
