"""`nbgrader export` with scores as the gradebook means them, and every cell a spreadsheet shows as text.

nbgrader 0.9.6's CSV export writes the database's float sums as Python prints them (60 + 8.49 of
item scores comes out as 68.49000000000001) and joins its fields with bare commas: a name with a
comma shifts the columns, one with a line break forges a row, and one a student chose in the LMS
(`=HYPERLINK("http:…")`, imported with `nbgrader db student import`) or a student id of a hub
whose students share a uid is a live formula in the instructor's spreadsheet. This exporter
writes nbgrader's rows, columns and scores (rounded to 0.01, as the trusted grader keeps them)
with csv quoting, each text cell through engine.outputs.csv_cell. Configured in
nbgrader_config.py (`c.ExportApp.plugin_class`).

Work handed in after the late policy's last day (grading.toml `[late] accept_days`, after the
student's own due date, extension included) scores nothing: nbgrader charges its penalty at
autograde, on the automatic points alone, before a TA grades the free text, and the solutions
(with what a full-credit free-text answer says) are out by then. Its row keeps the raw score and
charges all of it.
"""

from __future__ import annotations

import csv
import functools

from nbgrader.api import MissingEntry
from nbgrader.plugins.export import CsvExportPlugin

from autograder.engine.outputs import csv_cell, student_cell
from autograder.nbgrader_bridge.flagged import shown

COLUMNS = ("assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
           "raw_score", "late_submission_penalty", "score", "max_score")   # nbgrader's, in its order
SCORE_COLUMNS = COLUMNS[-4:]
DECIMALS = 2


class _Absent:
    """A roster student the gradebook never met (never handed in, or every folder refused): a row
    of nothing, never a missing row (a blank in the LMS leaves the assignment out of her grade)."""

    def __init__(self, student_id: str):
        self.id, self.last_name, self.first_name, self.email = student_id, None, None, None


def rounded(value) -> str:
    return str(round(float(value), DECIMALS))


class RoundedCsvExportPlugin(CsvExportPlugin):
    """nbgrader's CSV export (same rows, columns and filters), quoted, scores rounded to 0.01."""

    def export(self, gradebook) -> None:
        dest = self.to or "grades.csv"
        students = {str(s) for s in self.student}
        assignments = {str(a) for a in self.assignment}
        self.log.info("Exporting grades to %s", dest)
        with open(dest, "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(COLUMNS)
            known, roster = {student.id for student in gradebook.students}, self._roster()
            absent = [_Absent(student) for student in roster if student not in known]
            off_roster = sorted(known - set(roster)) if roster else []
            if off_roster:
                self.log.warning("%s", shown(f"not on the course roster (roster.txt), exported all the same: "
                                             f"{', '.join(off_roster)} (an LMS name a student changed? a student "
                                             f"missing from the roster?)"))
            for assignment in gradebook.assignments:
                if assignments and assignment.name not in assignments:
                    continue
                for student in [*gradebook.students, *absent]:
                    if students and student.id not in students:
                        continue
                    writer.writerow(self._row(gradebook, assignment, student))

    def _roster(self) -> list[str]:
        """The course roster's students (roster.txt in the course folder), none where there is none."""
        from pathlib import Path

        from autograder.engine.roster import read_roster, roster_path

        root = getattr(getattr(self.parent, "coursedir", None), "root", None)
        return read_roster(roster_path(Path(root))) if root else []

    @staticmethod
    def _row(gradebook, assignment, student) -> list[str]:
        try:
            submission = gradebook.find_submission(assignment.name, student.id)
        except MissingEntry:   # nothing handed in: zero, as nbgrader writes it
            timestamp, raw, penalty = "", 0.0, 0.0
        else:
            timestamp, raw, penalty = submission.timestamp, submission.score, submission.late_submission_penalty
            if _past_last_day(assignment.name, submission.total_seconds_late):
                penalty = raw
        before = [assignment.name, assignment.duedate, timestamp]
        after = [student.last_name, student.first_name, student.email]
        scores = [raw, penalty, max(0.0, raw - penalty), assignment.max_score]
        # the id as grades.csv shows it: a cell no other id gives (csv_cell would make "alice" + BEL "alice")
        return ([csv_cell("" if value is None else value) for value in before] + [student_cell(student.id)]
                + [csv_cell("" if value is None else value) for value in after] + [rounded(s) for s in scores])


def _past_last_day(assignment: str, seconds_late: float) -> bool:
    """Handed in after the late policy's last day (an assignment with no grading.toml here: never)."""
    policy = _late_policy(assignment)
    return policy is not None and seconds_late > 0 and policy.past_last_day(seconds_late)


@functools.lru_cache(maxsize=None)
def _late_policy(assignment: str):
    from autograder.engine.lateness import load_policy
    from autograder.engine.registry import ASSIGNMENTS_DIR, load_config

    if "/" in assignment or not (ASSIGNMENTS_DIR / assignment / "grading.toml").is_file():
        return None
    return load_policy(load_config(assignment))   # a broken policy stops the export, as it stops autograde
