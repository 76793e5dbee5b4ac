"""Where `grade` takes the due date from when none is given: the course's nbgrader gradebook,
found as nbgrader finds it (nbgrader_config.py's CourseDirectory.db_url), read through nbgrader's
API, the one due-date reader the kit has. A gradebook that cannot be read refuses the run: grading
on as if no due date were set would drop every late penalty without a word."""

import os
import sys
from datetime import datetime, timezone

import pytest
from nbgrader.api import Gradebook

from autograder.api import grading
from autograder.engine import registry

ASSIGNMENT = "lec01_codesign"
DUE = datetime(2030, 2, 1, 10, 30, tzinfo=timezone.utc)


def _course(root, db_path=None):
    """A course root whose nbgrader_config.py names `db_path` as its gradebook (None: the default)."""
    (root / "assignments").mkdir(parents=True)
    line = f"c.CourseDirectory.db_url = 'sqlite:///{db_path}'\n" if db_path else ""
    (root / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.root = {str(root)!r}\n{line}")
    return root


def _gradebook(path, due):
    bin_dir = os.path.dirname(sys.executable)   # nbgrader runs `alembic` to create a gradebook
    old_path = os.environ.get("PATH", "")
    os.environ["PATH"] = os.pathsep.join([bin_dir, old_path])
    try:
        with Gradebook(f"sqlite:///{path}") as gb:
            gb.add_assignment(ASSIGNMENT, duedate=due.replace(tzinfo=None))   # nbgrader stores naive UTC
    finally:
        os.environ["PATH"] = old_path


def _due_given_to_the_batch(root, monkeypatch, tmp_path):
    """What `grade` hands the batch as the due date for a course at `root` (nothing is graded)."""
    seen = {}
    monkeypatch.setattr(registry, "ASSIGNMENTS_DIR", root / "assignments")
    monkeypatch.setattr(grading, "check_isolation", lambda isolation: None)
    monkeypatch.setattr(grading, "grade_batch", lambda *args, **kwargs: seen.setdefault("due", kwargs["due"]))
    (tmp_path / "submissions").mkdir()
    grading.grade(assignment=ASSIGNMENT, submissions=tmp_path / "submissions", out=tmp_path / "out")
    return seen["due"]


def test_the_due_date_comes_from_the_gradebook_nbgrader_config_names(tmp_path, monkeypatch):
    elsewhere = tmp_path / "db" / "course.db"
    elsewhere.parent.mkdir()
    _gradebook(elsewhere, DUE)
    root = _course(tmp_path / "course", elsewhere)
    assert _due_given_to_the_batch(root, monkeypatch, tmp_path) == DUE


def test_the_default_gradebook_in_the_course_root_is_read(tmp_path, monkeypatch):
    root = _course(tmp_path / "course")
    _gradebook(root / "gradebook.db", DUE)
    assert _due_given_to_the_batch(root, monkeypatch, tmp_path) == DUE


def test_without_a_gradebook_there_is_no_due_date(tmp_path, monkeypatch):
    assert _due_given_to_the_batch(_course(tmp_path / "course"), monkeypatch, tmp_path) is None


def test_an_unreadable_gradebook_refuses_the_run(tmp_path, monkeypatch):
    root = _course(tmp_path / "course")
    (root / "gradebook.db").write_bytes(b"not a database, " * 64)
    with pytest.raises(grading.Refused, match="gradebook"):
        _due_given_to_the_batch(root, monkeypatch, tmp_path)


def test_collect_before_the_due_date_reads_the_same_gradebook(tmp_path):
    """`nbgrader collect --before-duedate` chooses by the due date of the gradebook its course
    directory names, through the same reader; no gradebook, or an assignment not in it: none."""
    from types import SimpleNamespace

    from autograder.nbgrader_bridge.exchange import GuardedExchangeCollect

    def due_for(db_path, assignment=ASSIGNMENT):
        coursedir = SimpleNamespace(root=str(tmp_path), course_id="cs349e", db_url=f"sqlite:///{db_path}",
                                    submitted_directory="submitted", assignment_id=assignment)
        return GuardedExchangeCollect._due_date(SimpleNamespace(coursedir=coursedir))

    elsewhere = tmp_path / "db" / "course.db"
    elsewhere.parent.mkdir()
    _gradebook(elsewhere, DUE)
    assert due_for(elsewhere) == DUE
    assert due_for(elsewhere, "another_assignment") is None
    assert due_for(tmp_path / "missing.db") is None
