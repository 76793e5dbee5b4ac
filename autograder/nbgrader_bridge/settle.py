"""Settle a student nbgrader cannot autograde: the pinned trusted score goes into the gradebook.

`nbgrader autograde` stops on a notebook it cannot parse (nbformat's NotJSONError) and leaves every
automatic grade of that student empty; `reconcile` then reports "nbgrader 0 vs trusted 1.02 … (its
autograde failed?)" and `nbgrader export` would write 0. The trusted grader did grade what the
student handed in (its functions; no answer of an unreadable notebook), and pregrade pinned it.
`python -m autograder reconcile <assignment> --settle <student> --reason "…"` writes that pinned
score into each automatic grade cell of the student's gradebook submission, as autograde would
have, and records the settlement (who, when, why, the scores) in
.pinned_results/<assignment>/settled.json. Only a student whose automatic grades are all empty is
settled: a gradebook score nbgrader did write is never overwritten here.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

from autograder.engine.results import SubmissionResult
from autograder.nbgrader_bridge.course import Course, CourseError
from autograder.nbgrader_bridge.gradebook import open_gradebook
from autograder.nbgrader_bridge.pinned import pinned_folder

SETTLED_FILE = "settled.json"


class SettleError(CourseError):
    """The student cannot be settled (named in the message, with what to do instead)."""


def settled_path(course: Course, assignment: str):
    return pinned_folder(course, assignment) / SETTLED_FILE


def read_settled(course: Course, assignment: str) -> dict[str, dict]:
    path = settled_path(course, assignment)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def settle(course: Course, assignment: str, student: str, result: SubmissionResult, auto_items: list[str],
           reason: str) -> dict[str, float]:
    """Write `result`'s scores of `auto_items` into `student`'s empty automatic grades; record why."""
    if not reason.strip():
        raise SettleError(f"{student}: say why with --reason (it is recorded with the scores)")
    scores = {item.id: item.score for item in result.items if item.id in auto_items}
    with open_gradebook(course) as gradebook:
        from nbgrader.api import MissingEntry

        try:
            submission = gradebook.find_submission(assignment, student)
        except MissingEntry:
            raise SettleError(f"{student}: no submission of {assignment} in the gradebook: run `nbgrader autograde "
                              f"{assignment}` first (it records the submission even when it cannot grade it)") from None
        grades = {grade.name: grade for notebook in submission.notebooks for grade in notebook.grades}
        written = [grades[item].auto_score for item in auto_items if item in grades]
        if any(score is not None for score in written):
            raise SettleError(f"{student}: nbgrader did autograde this submission; reconcile's line names what "
                              "differs (settle is only for a student whose automatic grades are all empty)")
        for item, score in scores.items():
            if item in grades:
                grades[item].auto_score = score
        gradebook.db.commit()
    settled = read_settled(course, assignment)
    settled[student] = {"reason": reason.strip(), "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                        "fingerprint": result.fingerprint, "scores": scores}
    path = settled_path(course, assignment)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settled, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return scores
