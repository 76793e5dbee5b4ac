"""`gradescope_run`: grade the one submission of a Gradescope container.

run_autograder starts `python -m autograder.gradescope` from /autograder/source, a shim over this.
It copies the student's files into a one-student class folder, grades it with the library's
`grade` (the same hidden tests, sandbox and limits as a local batch), and writes
/autograder/results/results.json. The isolation is the best the container offers (bubblewrap,
else the uid fallback: `container_isolation`) unless the bundle fixed one. It fails closed: if
grading does not complete, the result gives no credit and tells the student so in one short
line (exit status 2 when the grader refused, e.g. no isolation works here; 1 when it failed);
why, with what to do, goes to Gradescope's staff-only log and the result's extra_data, never to
the student.
"""

from __future__ import annotations

import json
import signal
import sys
import tempfile
import threading
import time
import traceback
from contextlib import contextmanager
from pathlib import Path

from autograder.api.grading import Refused, grade
from autograder.atomic import atomic_write_text
from autograder.engine.outputs import json_text
from autograder.engine.variants import has_variants
from autograder.gradescope.container import (BEST, DEFAULT_TIMEOUT, STUDENT, GradingFailed, GradingRefused,
                                             container_isolation, protect_secrets)
from autograder.gradescope.lateness import submission_times, write_timestamp
from autograder.gradescope.results import FALLBACK_LOG, failure_results, fallback_note, final_results
from autograder.gradescope.schema import check_results
from autograder.gradescope.submission import UploadTooLarge, collect_submission, submission_student, submitter_count


def _auto_points(assignment: str) -> float:
    """The automatically graded points (a failure result shows them as lost, never 0 of 0)."""
    from autograder.engine.registry import load_config
    from autograder.engine.vocabulary import AUTOMATIC_KINDS

    try:
        config = load_config(assignment)
    except Exception:  # noqa: BLE001 - the failure result must still be written
        return 1.0
    return sum(item.points for item in config.items_of(*AUTOMATIC_KINDS)) or 1.0


class _Expired(BaseException):
    """The backstop's time is up. A BaseException, so a grading step that absorbs `Exception` (one
    item's unexpected error, a hypothesis error) cannot turn it into one lost item and grade on."""


# After the first expiry the timer keeps firing this often, in case a step absorbed it anyway.
_REFIRE_SECONDS = 2.0


@contextmanager
def _backstop(timeout: float):
    """Gradescope kills the container at its own timeout; this ends grading first, as a failure
    the student is told of (only where a timer signal can reach this thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    armed = [True]

    def expired(signum, frame):
        if armed[0]:
            raise _Expired(f"grading did not finish within {timeout:.0f} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, timeout, _REFIRE_SECONDS)
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _grade_class(assignment: str, submissions: Path, out: Path, timeout: float, isolation: str,
                 due, student_ids) -> None:
    from autograder.engine.lateness import parse_time

    print(f"grading {assignment} with isolation {isolation}", flush=True)
    try:
        due = parse_time(due, "the submission's due date") if due else None
        with _backstop(timeout):
            report = grade(assignment=assignment, submissions=submissions, out=out, jobs=1, force=True,
                           isolation=isolation, due=due, student_ids=student_ids)
    except Refused as err:
        raise GradingRefused(str(err)) from None
    except _Expired as err:
        raise GradingFailed(str(err)) from None
    from autograder.views.console_view import print_summary

    print_summary(report, out)   # for the staff's log
    for student, error in report.failed:
        raise GradingFailed(f"the grader failed on {student}:\n{error[-1500:]}")


def grade_upload(assignment: str, root: Path, visibility: str, timeout: float, isolation: str = BEST) -> dict:
    """Grade root/submission/ and return Gradescope's results (not yet written)."""
    from autograder.engine.registry import ConfigError, load_config

    try:
        config = load_config(assignment)
    except ConfigError as err:
        raise GradingFailed(f"configuration error: {err}") from None
    protect_secrets(assignment, root)
    isolation, bubblewrap_missing = container_isolation(isolation)
    if bubblewrap_missing:
        print(f"NOTE: bubblewrap cannot run in this container ({bubblewrap_missing}); this submission "
              f"is graded with the uid fallback (isolation rlimits), automatically: the container "
              f"grades one submission only.", flush=True)
    with tempfile.TemporaryDirectory(prefix="cs349e-gradescope-") as tmp:
        submissions, out = Path(tmp) / "submissions", Path(tmp) / "out"
        collected = collect_submission(root / "submission", config.student_files, submissions / STUDENT)
        print(f"student files found: {collected.found or 'none'}; missing: {list(collected.missing) or 'none'}")
        created_at, due = submission_times(root)   # the late policy of grading.toml
        write_timestamp(submissions / STUDENT, created_at)
        ids = None
        student = submission_student(root)   # the variant of an assignment with per-student variants
        if student is None and has_variants(assignment):
            # the folder's name here is the runner's own, not a student's: grading it would use a
            # variant nobody was given
            raise GradingFailed("submission_metadata.json names no submitter (users[0].sid or email): "
                                f"{assignment} has per-student variants and cannot be graded without the student's id")
        members = submitter_count(root)
        if members > 1 and has_variants(assignment):
            # a member who uploads may add classmates: graded in one member's variant, her work was
            # scored against a classmate's parameters, and Gradescope gives every member that score
            raise GradingFailed(f"a group submission of {members} students: {assignment} has per-student variants, "
                                "so no one variant grades it; grade each student's own upload (turn groups off)")
        if student is not None:
            ids = {STUDENT: (student[0], student[1])}
        print(f"student id: {student[0]!r} ({student[1]})" if student else "student id: none in the metadata")
        _grade_class(assignment, submissions, out, timeout, isolation, due, ids)
        engine_file = out / "results" / f"{STUDENT}.json"
        try:
            engine = json.loads(engine_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise GradingFailed(f"the grader wrote no usable result for the submission ({err})") from None
    results = final_results(engine, visibility=visibility, missing=collected.missing,
                            automatic_fallback=bubblewrap_missing)
    if fallback_note(engine.get("extra_data", {}).get("submission", {}).get("isolation")) and not bubblewrap_missing:
        print(FALLBACK_LOG, flush=True)
    return results


def gradescope_run(*, assignment: str, root: Path = Path("/autograder"), visibility: str = "after_published",
                   timeout: float = DEFAULT_TIMEOUT, isolation: str = BEST) -> int:
    """Grades root/submission/ and writes root/results/results.json, whatever happens; returns
    the exit status (0 graded, 1 failed, 2 refused)."""
    started = time.perf_counter()
    status = 0
    try:
        results = grade_upload(assignment, root, visibility, timeout, isolation)
        check_results(results)
    except UploadTooLarge as err:
        print(f"grading failed: {err}", file=sys.stderr, flush=True)
        results, status = failure_results(str(err), max_score=_auto_points(assignment),
                                          message=err.student_message), 1
    except GradingRefused as err:
        print(f"grading refused: {err}", file=sys.stderr, flush=True)
        results, status = failure_results(str(err), max_score=_auto_points(assignment)), 2
    except (GradingFailed, ValueError) as err:
        print(f"grading failed: {err}", file=sys.stderr, flush=True)
        results, status = failure_results(str(err), max_score=_auto_points(assignment)), 1
    except (Exception, SystemExit) as err:  # noqa: BLE001 - fail closed: a results.json whatever broke
        reason = f"{type(err).__name__}: {err}\n{traceback.format_exc()[-1500:]}"
        print(f"grading failed unexpectedly: {reason}", file=sys.stderr, flush=True)
        results, status = failure_results(reason, max_score=_auto_points(assignment)), 1
    results["execution_time"] = round(time.perf_counter() - started, 2)
    # Gradescope's harness reads it after this process ends: on disk, whole, readable
    atomic_write_text(root / "results" / "results.json", json_text(results, indent=1) + "\n", permissions=0o644)
    print(f"wrote {root / 'results' / 'results.json'}: score {results['score']}", flush=True)
    return status
