"""Late work through the real nbgrader commands: a Canvas download (on time, and `_LATE`) and an
exchange submission 40 days late; the course's late policy (grading.toml [late]) must show in
`nbgrader export` and in the trusted grader's grades.csv for the late students only. A student
with an extension (nbgrader's `Gradebook.grant_extension`) who handed in after the class's due
date and before her own is on time in both.

Small on purpose (three students, one full-marks submission copied): the whole nbgrader workflow
is tests/nbgrader/test_workflow.py.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import os
import sys

import pytest
from nbgrader.api import Gradebook

from autograder.engine.lateness import load_policy, parse_time, penalty_points
from autograder.engine.registry import load_config
from course_copy import run as run_in

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ASSIGNMENT = "lec01_codesign"
DUE = datetime(2030, 1, 31, 23, 59, tzinfo=timezone(timedelta(hours=8)))
VERY_LATE = timedelta(days=6)   # capped (60 % charged, at most 50 %), before the last day
ON_TIME, CANVAS_LATE, EXCHANGE_VERY_LATE, EXTENDED = "amy", "bob", "cy", "dee"
EXTENSION, EXTENDED_LATE = timedelta(days=5), timedelta(days=3)   # handed in before her own due date
POLICY = load_policy(load_config(ASSIGNMENT))


def run(root: Path, *args: str) -> subprocess.CompletedProcess:
    done = run_in(root, *args)
    assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    return done


@pytest.fixture(scope="module")
def course(tmp_path_factory, released_course, reference_submission):
    root = released_course(tmp_path_factory.mktemp("late-course"))   # generate_assignment ran (conftest.py)
    run(root, "-m", "nbgrader", "db", "assignment", "add", ASSIGNMENT, f"--duedate={DUE.isoformat()}")
    reference = reference_submission
    # A Canvas download: <student>[_LATE]_<user id>_<submission id>_<file>
    archive = root / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    for prefix in (f"{ON_TIME}_1001_2001", f"{CANVAS_LATE}_LATE_1002_2002"):
        for name in ("codesign.py", "handout.ipynb"):
            shutil.copyfile(reference / name, archive / f"{prefix}_{name}")
    zip_collect = run(root, "-m", "nbgrader", "zip_collect", ASSIGNMENT, "--force")
    # The exchange: `nbgrader collect` leaves the student's timestamp.txt next to the files.
    exchange = root / "submitted" / EXCHANGE_VERY_LATE / ASSIGNMENT
    shutil.copytree(reference, exchange)
    stamp = (DUE + VERY_LATE).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    (exchange / "timestamp.txt").write_text(stamp)
    extended = root / "submitted" / EXTENDED / ASSIGNMENT
    shutil.copytree(reference, extended)
    (extended / "timestamp.txt").write_text((DUE + EXTENDED_LATE).astimezone(timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S.%f UTC"))
    grant_extension(root, EXTENDED, EXTENSION)
    run(root, "-m", "autograder", "pregrade", ASSIGNMENT, "-j", "2")
    autograde = run(root, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force")
    run(root, "-m", "nbgrader", "export", "--to", "export.csv")
    run(root, "-m", "autograder", "grade", ASSIGNMENT, "submitted", "--out", "trusted")
    with open(root / "export.csv", encoding="utf-8") as handle:
        exported = {row["student_id"]: row for row in csv.DictReader(handle)}
    with open(root / "trusted" / "grades.csv", encoding="utf-8") as handle:
        trusted = {row["student"]: row for row in csv.DictReader(handle)}
    return root, zip_collect, exported, trusted, autograde


def grant_extension(root: Path, student: str, extension: timedelta) -> None:
    """What an instructor does for an extension: nbgrader's own API (it has no command for it)."""
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), path])   # nbgrader's alembic
    try:
        with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
            gb.update_or_create_student(student)
            gb.update_or_create_submission(ASSIGNMENT, student)
            gb.grant_extension(ASSIGNMENT, student, days=extension.days)
    finally:
        os.environ["PATH"] = path


def test_zip_collect_keeps_canvas_late_marker_as_a_time_just_after_the_due_date(course):
    root, zip_collect, _, _, _ = course
    assert not (root / "submitted" / ON_TIME / ASSIGNMENT / "timestamp.txt").exists()
    stamp = (root / "submitted" / CANVAS_LATE / ASSIGNMENT / "timestamp.txt").read_text()
    assert parse_time(stamp) == DUE + timedelta(seconds=1)          # nbgrader writes naive UTC
    assert "_LATE without a time" in zip_collect.stderr


def test_nbgrader_export_shows_the_policy_penalty_for_the_late_students_only(course):
    _, _, exported, _, _ = course
    raw = {s: float(row["raw_score"]) for s, row in exported.items()}
    assert set(raw) == {ON_TIME, CANVAS_LATE, EXCHANGE_VERY_LATE, EXTENDED} and min(raw.values()) > 0
    assert float(exported[ON_TIME]["late_submission_penalty"]) == 0
    assert float(exported[CANVAS_LATE]["late_submission_penalty"]) == pytest.approx(
        penalty_points(raw[CANVAS_LATE], 1, POLICY))               # one started day
    assert float(exported[EXCHANGE_VERY_LATE]["late_submission_penalty"]) == pytest.approx(
        penalty_points(raw[EXCHANGE_VERY_LATE], VERY_LATE.total_seconds(), POLICY))
    assert POLICY.percent(VERY_LATE.total_seconds()) == POLICY.max_percent      # the cap applies


def test_the_trusted_grades_csv_shows_the_same_penalties(course):
    _, _, exported, trusted, _ = course
    assert trusted[ON_TIME]["late_penalty"] == ""          # no submission time: nothing to judge
    for student in (CANVAS_LATE, EXCHANGE_VERY_LATE):
        assert float(trusted[student]["late_penalty"]) == pytest.approx(
            float(exported[student]["late_submission_penalty"]), abs=0.01)
        assert float(trusted[student]["score"]) == pytest.approx(float(exported[student]["score"]), abs=0.01)


def test_a_student_without_a_submission_time_is_named_by_zip_collect_and_autograde(course):
    """amy's LMS names carry no time: no timestamp.txt, so no penalty could be judged; both say so."""
    _, zip_collect, _, _, autograde = course
    for done in (zip_collect, autograde):
        lines = [line for line in done.stderr.splitlines() if "o submission time known" in line]
        assert any(ON_TIME in line for line in lines), done.stderr[-3000:]
        assert all(CANVAS_LATE not in line and EXCHANGE_VERY_LATE not in line for line in lines)


def test_a_student_handing_in_within_her_extension_is_on_time_in_export_and_grades_csv(course):
    """The trusted grader read the class's due date alone: nbgrader's export gave dee her extension,
    grades.csv and her results charged her three days late (30 % of the automatic points)."""
    root, _, exported, trusted, _ = course
    assert float(exported[EXTENDED]["late_submission_penalty"]) == 0
    assert float(trusted[EXTENDED]["late_penalty"]) == 0, trusted[EXTENDED]
    assert float(trusted[EXTENDED]["score"]) == pytest.approx(float(exported[EXTENDED]["score"]), abs=0.01)
