"""Late work in the trusted grader: the policy of grading.toml, submission times from
timestamp.txt, and the penalty in grades.csv, feedback and results.json for late students only."""

from __future__ import annotations

import csv
import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from overload import grade_until_recorded

from autograder.engine import grade_batch, load_config
from autograder.engine.lateness import (DAY, LatePolicy, assess, load_policy, parse_time, penalty_points, stamp,
                                        submission_time)
from autograder.engine.registry import ConfigError
from autograder.engine.results import SubmissionResult
from autograder.sandbox import bubblewrap_problem

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "lec01_codesign"
ALICE = ROOT / "examples" / ASSIGNMENT / "submissions" / "alice"
DUE = datetime(2030, 1, 31, 15, 59, tzinfo=timezone.utc)
POLICY = load_policy(load_config(ASSIGNMENT))


def test_the_course_policy_is_read_from_grading_toml():
    assert POLICY is not None and POLICY.percent_per_day > 0 and POLICY.max_percent >= POLICY.percent_per_day


@pytest.mark.parametrize("table, problem", [
    ("[late]\npercent_per_day = 10\nmax_percent = 150\n", "max_percent"),
    ("[late]\npercent_per_day = '10'\nmax_percent = 50\n", "percent_per_day"),
    ("[late]\npercent_per_day = 10\nmax_percent = 50\nper_hour = 1\n", "unknown keys ['per_hour']"),
    ("[late]\npercent_per_day = 10\nmax_percent = 50\naccept_days = -1\n", "accept_days"),
    ("[late]\npercent_per_day = 10\nmax_percent = 50\naccept_days = 'a week'\n", "accept_days"),
    ("[late.per_day]\npercent = 1\n", "unknown keys ['per_day']"),
])
def test_a_malformed_policy_is_a_clear_config_error(tmp_path, table, problem):
    folder = tmp_path / ASSIGNMENT
    folder.mkdir()
    source = (ROOT / "assignments" / ASSIGNMENT / "grading.toml").read_text(encoding="utf-8")
    (folder / "grading.toml").write_text(source.split("[late]")[0] + "\n" + table, encoding="utf-8")
    config = load_config(ASSIGNMENT, assignments_dir=tmp_path)
    with pytest.raises(ConfigError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        load_policy(config)


@pytest.mark.parametrize("text", [
    "2030-01-31 15:59:00.000000", "2030-01-31 15:59:00 UTC", "2030-01-31T23:59:00+08:00",
    "2030-01-31T15:59:00Z", "2030-01-31 23:59:00.000000+0800", "2030-01-31T10:59:00-05:00",
])
def test_every_timestamp_form_nbgrader_and_lms_write_is_read_as_utc(text):
    assert parse_time(text) == DUE


def test_a_malformed_timestamp_names_the_file(tmp_path):
    (tmp_path / "timestamp.txt").write_text("yesterday-ish")
    with pytest.raises(ValueError, match="timestamp.txt"):
        submission_time(tmp_path)


@settings(derandomize=True, database=None, max_examples=200)
@given(score=st.floats(0, 100), a=st.floats(0, 60 * DAY), b=st.floats(0, 60 * DAY))
def test_the_penalty_grows_with_lateness_and_stays_within_the_cap_until_the_last_day(score, a, b):
    early, late = sorted((a, b))
    assert 0 <= penalty_points(score, early, POLICY) <= penalty_points(score, late, POLICY)
    if late <= POLICY.open_seconds():
        assert penalty_points(score, late, POLICY) <= round(score * POLICY.max_percent / 100, 2) + 1e-9
    else:   # past the last day late work earns nothing (the solutions may be out)
        assert penalty_points(score, late, POLICY) == score


def test_the_last_day_counts_from_the_end_of_the_grace_period():
    policy = LatePolicy(percent_per_day=10, max_percent=50, grace_minutes=15, accept_days=7)
    last = 900 + 7 * DAY
    assert policy.percent(last) == 50 and policy.percent(last + 1) == 100
    assert LatePolicy(percent_per_day=10, max_percent=50).percent(400 * DAY) == 50   # no last day


def test_started_days_count_whole_and_grace_is_free():
    policy = LatePolicy(percent_per_day=10, max_percent=50, grace_minutes=15)
    assert [policy.days_charged(s) for s in (0, 600, 900, 901, DAY + 900, DAY + 901)] == [0, 0, 0, 1, 1, 2]
    assert policy.percent(30 * DAY) == 50


def test_on_time_is_recorded_with_no_penalty():
    late = assess(91.0, DUE - timedelta(hours=1), DUE, POLICY)
    assert late.seconds_late == 0 and late.penalty == 0 and late.days_charged == 0


def test_no_submission_time_with_a_due_date_is_a_warning_naming_the_student_and_the_fix(tmp_path, capsys):
    """An LMS name without a time leaves no timestamp.txt: the penalty would silently be 0."""
    result = SubmissionResult("amy", 10.0, 20.0, (), "bubblewrap", 1.0, ASSIGNMENT)
    assert stamp(result, tmp_path, DUE, POLICY).late is None
    err = capsys.readouterr().err
    assert "amy: no submission time known" in err and str(tmp_path / "timestamp.txt") in err
    stamp(result, tmp_path, None, POLICY)           # no due date: nothing to judge, nothing to say
    assert capsys.readouterr().err == ""


STUDENTS = {   # student -> submission time relative to the due date (None: no timestamp.txt)
    "ontime": -timedelta(hours=2),
    "late": timedelta(hours=30),          # 2 started days
    "capped": timedelta(days=6),          # 60 %, capped
    "verylate": timedelta(days=40),       # past the last day: nothing
    "nostamp": None,
}


@pytest.fixture(scope="module")
def late_class(tmp_path_factory):
    if bubblewrap_problem():
        pytest.skip(f"bubblewrap unavailable: {bubblewrap_problem()}")
    submissions = tmp_path_factory.mktemp("late-class")
    for student, offset in STUDENTS.items():
        folder = submissions / student / ASSIGNMENT   # nbgrader collect's layout
        shutil.copytree(ALICE, folder)
        notebook = folder / "handout.ipynb"  # alice's work, typed with this student's id: their own variant
        notebook.write_text(notebook.read_text("utf-8").replace('STUDENT_ID = \\"alice\\"', f'STUDENT_ID = \\"{student}\\"'),
                            "utf-8")
        if offset is not None:
            (folder / "timestamp.txt").write_text(f"{(DUE + offset).replace(tzinfo=None)} UTC\n")
    out = tmp_path_factory.mktemp("late-out")
    report = grade_until_recorded(lambda: grade_batch(ASSIGNMENT, submissions, out, jobs=2, due=DUE))
    return submissions, out, report


def _csv(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "grades.csv", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def test_grades_csv_shows_the_penalty_for_late_students_only(late_class):
    _, out, report = late_class
    rows = _csv(out)
    auto = next(r for r in report.results if r.student == "ontime").score
    expected = {s: (penalty_points(auto, max(0.0, o.total_seconds()), POLICY) if o is not None else None)
                for s, o in STUDENTS.items()}
    assert expected["late"] > 0 and expected["capped"] == round(auto * POLICY.max_percent / 100, 2)
    assert expected["verylate"] == auto
    for student, penalty in expected.items():
        row = rows[student]
        assert row["late_penalty"] == ("" if penalty is None else f"{penalty:g}"), student
        assert float(row["score"]) == pytest.approx(auto - (penalty or 0)), student
    assert list(rows["late"])[:5] == ["student", "score", "max_score", "isolation", "late_penalty"]


def test_feedback_and_results_json_state_the_lateness(late_class):
    _, out, _ = late_class
    late_md = (out / "feedback" / "late.md").read_text(encoding="utf-8")
    assert "迟交" in late_md and "按 2 天计" in late_md
    assert "按时提交" in (out / "feedback" / "ontime.md").read_text(encoding="utf-8")
    assert "迟交" not in (out / "feedback" / "nostamp.md").read_text(encoding="utf-8")
    data = json.loads((out / "results" / "capped.json").read_text(encoding="utf-8"))
    late = data["extra_data"]["submission"]["late"]
    assert late["percent"] == POLICY.max_percent and not late["closed"] and data["score"] == pytest.approx(
        data["extra_data"]["submission"]["score"] - late["penalty"])
    data = json.loads((out / "results" / "verylate.json").read_text(encoding="utf-8"))
    assert data["extra_data"]["submission"]["late"]["closed"] and data["score"] == 0
    assert "已过接收迟交作业的最后期限" in (out / "feedback" / "verylate.md").read_text(encoding="utf-8")


def test_a_changed_due_date_is_applied_without_regrading(late_class):
    submissions, out, _ = late_class
    report = grade_batch(ASSIGNMENT, submissions, out, jobs=1, due=DUE + timedelta(days=60))
    assert report.graded == () and set(report.skipped) == set(STUDENTS)
    assert {row["late_penalty"] for s, row in _csv(out).items() if s != "nostamp"} == {"0"}
