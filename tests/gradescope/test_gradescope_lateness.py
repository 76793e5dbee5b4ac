"""Late work on Gradescope: the upload time and the due date (an extension included) come from
submission_metadata.json; the late policy of grading.toml takes its points off the score."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from autograder.engine.lateness import LatePolicy, penalty_points
from autograder.gradescope.lateness import METADATA, submission_times
from gradescope_container import lay_out, run_autograder

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "lec01_codesign"
GRADING = tomllib.loads((ROOT / "assignments" / ASSIGNMENT / "grading.toml").read_text(encoding="utf-8"))
POLICY = LatePolicy(**{k: float(v) for k, v in GRADING["late"].items()})
AUTO_POINTS = sum(item["points"] for item in GRADING["items"] if item["kind"] != "text")


def metadata(created_at: str, due: str, user_due: str | None = None) -> dict:
    user = {"email": "amy@example.edu", "id": 1, "name": "Amy"}
    if user_due:
        user["assignment"] = {"due_date": user_due}
    return {"id": 7, "created_at": created_at, "assignment": {"due_date": due, "title": "lec01"}, "users": [user]}


def test_upload_time_and_due_date_are_read_as_utc(tmp_path):
    (tmp_path / METADATA).write_text(json.dumps(metadata("2030-02-01T10:00:00.1+08:00", "2030-01-31T23:59:00.000000-08:00")))
    assert submission_times(tmp_path) == ("2030-02-01T02:00:00.100000+00:00", "2030-02-01T07:59:00+00:00")


def test_a_students_extension_overrides_the_assignment_due_date(tmp_path):
    (tmp_path / METADATA).write_text(json.dumps(metadata("2030-02-03T00:00:00Z", "2030-01-31T00:00:00Z",
                                                         user_due="2030-02-07T00:00:00Z")))
    assert submission_times(tmp_path)[1] == "2030-02-07T00:00:00+00:00"


@pytest.mark.parametrize("content", ["", "{", "[]", json.dumps({"created_at": 5, "assignment": "x"})])
def test_missing_or_malformed_metadata_means_no_lateness(tmp_path, content):
    if content:
        (tmp_path / METADATA).write_text(content)
    assert submission_times(tmp_path) == (None, None)


@pytest.mark.skipif(shutil.which("bwrap") is None or os.geteuid() != 0,
                    reason="needs bubblewrap and root to lay out /autograder")
def test_a_late_upload_loses_the_policy_penalty_and_is_told_why(tmp_path):
    reference = tmp_path / "reference"
    done = subprocess.run([sys.executable, "-m", "autograder", "reference", ASSIGNMENT, str(reference)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    bundle = tmp_path / "autograder.zip"
    done = subprocess.run([sys.executable, "-m", "autograder", "gradescope", ASSIGNMENT, "--out", str(bundle)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    root = lay_out(tmp_path / "autograder", bundle, reference)
    (root / METADATA).write_text(json.dumps(metadata("2030-02-02T12:00:00Z", "2030-01-31T23:59:00Z")))
    run = run_autograder(root)
    assert run.results is not None, run.log[-3000:]
    late = run.results["extra_data"]["submission"]["late"]
    seconds = late["seconds_late"]
    assert late["days_charged"] == 2 and seconds == pytest.approx(36 * 3600 + 60)
    assert run.results["score"] == pytest.approx(AUTO_POINTS - penalty_points(AUTO_POINTS, seconds, POLICY))
    assert "迟交" in run.results["output"] and "按 2 天计" in run.results["output"]
    assert sum(t["score"] for t in run.results["tests"]) == pytest.approx(AUTO_POINTS)   # the tests keep their points


def test_a_group_is_due_when_its_earliest_member_is_due(tmp_path):
    """The student who uploads may add classmates: adding one with an extension (listed first, or
    the only member whose entry carries a due date) lent that extension to the whole group, and
    Gradescope gives the group's score to every member. An extension is one student's own: the
    group is due at the earliest of its members' due dates (the assignment's for a member without one)."""
    data = metadata("2030-02-03T00:00:00Z", "2030-01-31T00:00:00Z", user_due="2030-02-07T00:00:00Z")
    data["users"].append({"email": "eve@example.edu", "id": 2, "name": "Eve"})
    (tmp_path / METADATA).write_text(json.dumps(data))
    assert submission_times(tmp_path)[1] == "2030-01-31T00:00:00+00:00"
    data["users"][1]["assignment"] = {"due_date": "2030-02-01T00:00:00Z"}
    (tmp_path / METADATA).write_text(json.dumps(data))
    assert submission_times(tmp_path)[1] == "2030-02-01T00:00:00+00:00"
    data["users"].reverse()
    (tmp_path / METADATA).write_text(json.dumps(data))
    assert submission_times(tmp_path)[1] == "2030-02-01T00:00:00+00:00"
