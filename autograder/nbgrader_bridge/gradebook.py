"""What nbgrader's gradebook says: an assignment's due date and the score of every grade cell.

The kit's one due-date reader (`grade` without --due, the collect exchange's --before-duedate,
`release_solutions`, release_feedback): through nbgrader's API, at the gradebook nbgrader_config.py
names. A student's extension (`Gradebook.grant_extension`) is kept with her submission's row: her
own due date is the assignment's plus it (`student_due_dates`).

Only ever opens an existing gradebook: nbgrader's Gradebook() silently creates a new, empty one
(and needs the `alembic` command to do so) when the file is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from autograder.nbgrader_bridge.course import CONFIG_FILE, Course, CourseError, load_course


@dataclass(frozen=True)
class CellScore:
    """One grade cell of one student's submission (grade_id == grading.toml item id)."""

    item: str
    auto_score: float | None  # None: nbgrader left it to a human (free text, deleted cell, failed run)
    manual_score: float | None
    max_score: float
    needs_manual_grade: bool

    @property
    def score(self) -> float:
        """What nbgrader counts: the manual score overrides the automatic one."""
        if self.manual_score is not None:
            return self.manual_score
        return self.auto_score or 0.0


@contextmanager
def open_gradebook(course: Course) -> Iterator:
    from nbgrader.api import Gradebook

    path = course.gradebook_file
    if not path.is_file():
        raise CourseError(f"no gradebook at {path}: run `nbgrader generate_assignment` first")
    with Gradebook(course.db_url, course_id=course.course_id) as gradebook:
        yield gradebook


def due_date(course: Course, assignment: str, *, missing_ok: bool = False) -> datetime | None:
    """The due date recorded with `nbgrader db assignment add --duedate=...` (aware, UTC), or None.
    An assignment the gradebook does not list is a CourseError unless `missing_ok` (then None)."""
    from nbgrader.api import MissingEntry
    from sqlalchemy.exc import SQLAlchemyError

    try:
        with open_gradebook(course) as gradebook:
            try:
                recorded = gradebook.find_assignment(assignment).duedate
            except MissingEntry:
                if missing_ok:
                    return None
                raise CourseError(f"assignment {assignment!r} is not in the gradebook "
                                  f"{course.gradebook_file}") from None
    except SQLAlchemyError as err:
        raise CourseError(f"cannot read the due date of {assignment!r} from the gradebook "
                          f"{course.gradebook_file}: {type(err).__name__}") from None
    # nbgrader stores due dates as naive UTC
    return None if recorded is None else recorded.replace(tzinfo=timezone.utc)


def student_extensions(course: Course, assignment: str) -> dict[str, timedelta]:
    """student -> her extension of this assignment, for every student the gradebook gives one."""
    from sqlalchemy.exc import SQLAlchemyError

    try:
        with open_gradebook(course) as gradebook:
            return {submission.student_id: submission.extension
                    for submission in gradebook.assignment_submissions(assignment) if submission.extension}
    except SQLAlchemyError as err:
        raise CourseError(f"cannot read the extensions of {assignment!r} from the gradebook "
                          f"{course.gradebook_file}: {type(err).__name__}") from None


def student_due_dates(course: Course, assignment: str, due: datetime | None) -> dict[str, datetime]:
    """student -> her own due date (aware, UTC: `due`, the assignment's as due_date read it, plus her
    extension), for every student with an extension; none without a recorded due date."""
    return {} if due is None else {student: due + extension
                                   for student, extension in student_extensions(course, assignment).items()}


def course_due_date(root: Path, assignment: str) -> datetime | None:
    """The due date in the gradebook of the nbgrader course at `root`, for a caller whose due date
    is optional: None where there is no course config, no gradebook yet, or the assignment is not
    in it; CourseError where the gradebook exists but cannot be read (never a silent "no due
    date": that would drop every late penalty)."""
    if not (Path(root) / CONFIG_FILE).is_file():
        return None
    course = load_course(root)
    if not course.gradebook_file.is_file():
        return None
    return due_date(course, assignment, missing_ok=True)


def course_extensions(root: Path, assignment: str) -> dict[str, timedelta]:
    """The extensions in the gradebook of the nbgrader course at `root`, where there is one (as
    course_due_date finds it); none otherwise."""
    if not (Path(root) / CONFIG_FILE).is_file():
        return {}
    course = load_course(root)
    if not course.gradebook_file.is_file() or due_date(course, assignment, missing_ok=True) is None:
        return {}
    return student_extensions(course, assignment)


def cell_scores(course: Course, assignment: str) -> dict[str, dict[str, CellScore]]:
    """student -> grade_id -> CellScore, for every submission nbgrader knows of."""
    with open_gradebook(course) as gradebook:
        scores: dict[str, dict[str, CellScore]] = {}
        for submission in gradebook.assignment_submissions(assignment):
            cells = scores.setdefault(submission.student_id, {})
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    cells[grade.name] = CellScore(
                        item=grade.name, auto_score=grade.auto_score, manual_score=grade.manual_score,
                        max_score=float(grade.max_score), needs_manual_grade=bool(grade.needs_manual_grade))
        return scores
