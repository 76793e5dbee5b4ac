"""A student's extension (nbgrader's `Gradebook.grant_extension`, kept in the gradebook with her
submission) moves her own due date: nothing that waits for the due date may go out before hers.
Run with nbgrader's own `db` commands and the kit's CLI on a copy of the course."""

import os
import sys
from datetime import datetime, timedelta, timezone

import pytest
from nbgrader.api import Gradebook

from autograder.engine.lateness import DAY, load_policy
from autograder.engine.registry import load_config
from course_copy import copy_course, run

ASSIGNMENT = "lec01_codesign"
POLICY = load_policy(load_config(ASSIGNMENT))
STUDENT, EXTENDED = "alice", "erin"


def nbgrader(root, *args):
    done = run(root, "-m", "nbgrader", *args)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.fixture
def course(tmp_path):
    """A course whose due date and late-work window have passed for everyone but EXTENDED, whose
    extension (two days past the class's last day) is still open."""
    root = copy_course(tmp_path / "course")
    (root / "roster.txt").write_text(f"{STUDENT}\n{EXTENDED}\n", encoding="utf-8")
    last_day = POLICY.open_seconds() / DAY
    due = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(days=last_day + 1)
    nbgrader(root, "db", "assignment", "add", ASSIGNMENT, f"--duedate={due.isoformat()}")
    for student in (STUDENT, EXTENDED):
        nbgrader(root, "db", "student", "add", student)
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), path])   # nbgrader's alembic
    try:
        with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
            gb.update_or_create_submission(ASSIGNMENT, EXTENDED)
            gb.grant_extension(ASSIGNMENT, EXTENDED, days=last_day + 3)
    finally:
        os.environ["PATH"] = path
    return root


def test_solutions_wait_for_the_last_extension(course):
    """The gate once read the class's due date alone: a student whose extension was still open
    fetched the released solutions and handed them in on time for her own due date."""
    done = run(course, "-m", "autograder", "release-solutions", ASSIGNMENT)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert EXTENDED in done.stderr and "extension" in done.stderr, done.stderr
    assert not (course / "released_solutions").exists()


def test_a_roster_student_the_gradebook_never_met_is_exported_with_nothing(course):
    """nbgrader exports the gradebook's students: one who never handed in (or whose every folder collect
    refused) was no row at all, a blank in the LMS, which leaves the assignment out of her grade."""
    import csv

    (course / "roster.txt").write_text(f"{STUDENT}\n{EXTENDED}\nzed\n", encoding="utf-8")
    nbgrader(course, "export", "--to", "grades.csv")
    with open(course / "grades.csv", encoding="utf-8") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {STUDENT, EXTENDED, "zed"}, rows
    assert (rows["zed"]["raw_score"], rows["zed"]["score"]) == ("0.0", "0.0")
    assert rows["zed"]["max_score"] == rows[STUDENT]["max_score"]


def test_a_gradebook_student_off_the_roster_is_named_by_the_export(course):
    """zip_collect takes a student from the LMS's file name, and autograde adds whoever it grades: a
    name off the roster (a display name a student changed in the LMS) was a silent row of its own."""
    nbgrader(course, "db", "student", "add", "mallory")
    done = nbgrader(course, "export", "--to", "grades.csv")
    assert "mallory" in done.stderr and "roster" in done.stderr, done.stderr[-2000:]
