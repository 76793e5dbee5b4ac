"""Each student's own due date, as nbgrader's gradebook holds it (the assignment's plus her extension,
`Gradebook.grant_extension`), read once for a command; and what collect makes of a folder whose name
is before that date and whose copy finished well after it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime, timezone

from autograder.nbgrader_bridge.course import Course
from autograder.nbgrader_bridge.gradebook import due_date, student_due_dates
from autograder.nbgrader_bridge.inbound import TIME_TAKEN, Flag, Submission


@dataclass(frozen=True)
class DueDates:
    due: datetime | None                                          # the assignment's (aware, UTC)
    extended: dict[str, datetime] = field(default_factory=dict)   # student -> her own, where extended

    def of(self, student: str) -> datetime | None:
        return self.extended.get(student, self.due)


def read_due_dates(course: Course, assignment: str) -> DueDates:
    """None without a gradebook or a recorded due date; CourseError where it cannot be read."""
    if not course.gradebook_file.is_file():
        return DueDates(None)
    due = due_date(course, assignment, missing_ok=True)
    return DueDates(due, student_due_dates(course, assignment, due))


def judged_at_due_date(sub: Submission, due: datetime | None, tolerance: float) -> Submission:
    """`sub` at its change time (and listed) where its name is before `due` but the folder was last
    changed after it, more than `tolerance` seconds after the name: collect's tolerance for submit's
    copy let a student rename a folder handed in late to just before the due date."""
    changed = datetime.fromtimestamp(sub.changed, timezone.utc) if sub.changed != float("inf") else None
    if due is None or changed is None or not sub.time <= due < changed:
        return sub
    if (changed - sub.time).total_seconds() <= tolerance:
        return sub
    flag = Flag(sub.student, sub.path.name, "", TIME_TAKEN,
                f"its name says {sub.time:%Y-%m-%d %H:%M:%S} UTC, before the due date {due:%Y-%m-%d %H:%M:%S} UTC, "
                f"but the folder was last changed (ctime) at {changed:%Y-%m-%d %H:%M:%S} UTC, after it "
                f"(renamed to just before the due date?): the ctime is taken")
    return dataclasses.replace(sub, time=changed, flags=(*sub.flags, flag))
