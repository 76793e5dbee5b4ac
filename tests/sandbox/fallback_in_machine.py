"""The explicit rlimits fallback's tests run where the fallback can work, and report here.

The fallback refuses unless an unprivileged uid can run the grader's Python and the project is
closed to other users. A development checkout or CI (Python under a 0700 /root, a project other
users can read) refuses, rightly, and the production rules stay as they are. Rather than skip
there, every test marked `needs_rlimits` (sandbox_helpers) runs inside the machine
tests/rlimits_machine.py makes on this one (root, this Python reachable by every uid, the project
closed): one pytest there per test file, each test's own reports brought back and reported here
as they were there (passed, failed with its traceback, skipped with its reason). Inside the
machine a refusal of the fallback fails the test: the machine exists to let it work.

Only where the machine cannot be made either (not root, no bubblewrap) are these tests skipped,
with both reasons.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from rlimits_machine import PROJECT_INSIDE, PYTHON, ROOT, machine_problem, run_in_machine

from autograder.sandbox import rlimits_problem

MARKER = "needs_rlimits_fallback"
# Set inside the machine: where each test's reports go, and that this run is the machine's.
OUTCOMES_ENV = "CS349E_FALLBACK_OUTCOMES"
# One test file's tests in the machine; the outer test that starts them waits this long.
MACHINE_TIMEOUT = 1500


def inside_machine() -> bool:
    return bool(os.environ.get(OUTCOMES_ENV))


def where_to_run() -> str | None:
    """"here" where the fallback works, "machine" where it runs in the machine, or None (skip)."""
    if rlimits_problem() is None or inside_machine():
        return "here"
    return "machine" if machine_problem() is None else None


def skip_reason() -> str:
    return f"the fallback refuses here: {rlimits_problem()}; and no machine for it: {machine_problem()}"


def marked(item) -> bool:
    return item.get_closest_marker(MARKER) is not None


class MachineRuns:
    """The machine's pytest runs of this session, one per test file, started when the first of
    its marked tests comes up, and the reports each brought back."""

    def __init__(self, config):
        self.config = config
        self.pending: dict[Path, list[str]] = {}      # test file -> node ids still to run there
        self.reports: dict[str, list] = {}            # node id -> its reports from the machine
        self.failures: dict[Path, str] = {}           # test file -> why its run gave no reports

    def plan(self, items) -> None:
        for item in items:
            if marked(item):
                self.pending.setdefault(item.path, []).append(item.nodeid)
                # The first test of a file waits for all of the file's tests in the machine.
                item.add_marker(pytest.mark.timeout(MACHINE_TIMEOUT + 60))

    def run_protocol(self, item, nextitem) -> bool:
        """Reports `item` from the machine's run of its file (started if needed)."""
        if item.path in self.pending:
            self._run_file(item.path, self.pending.pop(item.path))
        hook = item.ihook
        hook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        reports = self.reports.pop(item.nodeid, None)
        if not reports:
            why = self.failures.get(item.path, "the machine's run did not report this test")
            reports = [pytest.TestReport(item.nodeid, item.location, {}, "failed",
                                         f"not run in the fallback's machine: {why}", "call")]
        for report in reports:
            hook.pytest_runtest_logreport(report=report)
        # What the tests before it set up here and `nextitem` does not need ends now, as after any test.
        torn = pytest.CallInfo.from_call(lambda: item.session._setupstate.teardown_exact(nextitem), "teardown")
        if torn.excinfo is not None:
            hook.pytest_runtest_logreport(report=pytest.TestReport(
                item.nodeid, item.location, {}, "failed", str(torn.excinfo.getrepr()), "teardown"))
        hook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def _run_file(self, path: Path, nodeids: list[str]) -> None:
        folder = Path(tempfile.mkdtemp(prefix="fallback-outcomes-"))
        outcomes = folder / "outcomes.jsonl"
        try:
            run = run_in_machine(PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", *nodeids,
                                 binds=(folder,), timeout=MACHINE_TIMEOUT, env={OUTCOMES_ENV: str(outcomes)})
            lines = outcomes.read_text(encoding="utf-8").splitlines() if outcomes.exists() else []
            for line in lines:
                report = self.config.hook.pytest_report_from_serializable(config=self.config, data=json.loads(line))
                self.reports.setdefault(report.nodeid, []).append(_as_here(report))
            self.failures[path] = (f"pytest in the machine exited {run.returncode}:\n"
                                   f"{run.stdout[-3000:]}{run.stderr[-2000:]}")
        except Exception as exc:   # a timeout or a machine that would not start: each test fails with it
            self.failures[path] = f"{type(exc).__name__}: {exc}"
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def _as_here(report):
    """A report from the machine as pytest makes one here: a skip's (path, line, reason) a tuple
    again (JSON made it a list), its path the checkout's, not the machine's."""
    if report.skipped and isinstance(report.longrepr, list):
        path, line, reason = report.longrepr
        inside = Path(path)
        if inside.is_relative_to(PROJECT_INSIDE):
            path = str(ROOT / inside.relative_to(PROJECT_INSIDE))
        report.longrepr = (path, line, reason)
    return report


def record(config, report) -> None:
    """Inside the machine: one report of a test, for the run outside."""
    data = config.hook.pytest_report_to_serializable(config=config, report=report)
    with open(os.environ[OUTCOMES_ENV], "a", encoding="utf-8") as out:
        out.write(json.dumps(data) + "\n")
