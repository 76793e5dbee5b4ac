"""Does `nbgrader export` write the scores as the gradebook means them (68.49, not
68.49000000000001), with the course's configuration choosing the kit's exporter, and names with
commas (nbgrader does not quote them) left alone?"""

import csv
import os
import sys

from nbgrader.api import Gradebook
from nbgrader.plugins.export import CsvExportPlugin
from traitlets.config.loader import PyFileConfigLoader

from autograder.nbgrader_bridge.export import RoundedCsvExportPlugin
from process_state import process_state_restored
from test_nbgrader_config import ROOT

SCORES = [60.0, 0.99, 7.5]   # sum() gives 68.49000000000001, as the database's sum does


def _gradebook(tmp_path, monkeypatch) -> str:
    # nbgrader creates the database with its `alembic` command, found on PATH (as nbgrader_config.py sets it)
    monkeypatch.setenv("PATH", os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment("lec01_codesign")
        gb.add_notebook("handout", "lec01_codesign")
        for i, points in enumerate(SCORES):
            gb.add_grade_cell(f"q{i}", "handout", "lec01_codesign", max_score=points, cell_type="code")
        gb.add_student("alice", last_name="Smith, Jr.", first_name="Alice")
        gb.add_submission("lec01_codesign", "alice")
        for i, points in enumerate(SCORES):
            grade = gb.find_grade(f"q{i}", "handout", "lec01_codesign", "alice")
            grade.manual_score = points
        gb.db.commit()
    return url


def _export(plugin_class, url, dest):
    with Gradebook(url) as gb:
        plugin_class(to=str(dest)).export(gb)
    return dest.read_text()


def test_the_scores_are_rounded_to_hundredths(tmp_path, monkeypatch):
    url = _gradebook(tmp_path, monkeypatch)
    assert sum(SCORES) != 68.49 and "68.49000000000001" in _export(CsvExportPlugin, url, tmp_path / "plain.csv")
    text = _export(RoundedCsvExportPlugin, url, tmp_path / "grades.csv")
    assert "68.49000000000001" not in text
    line = text.splitlines()[1]
    assert line.endswith(",68.49,0.0,68.49,68.49") and "Smith, Jr." in line
    assert list(csv.reader([text.splitlines()[0]]))[0][-4:] == ["raw_score", "late_submission_penalty", "score",
                                                                  "max_score"]


def test_the_course_configuration_uses_it():
    with process_state_restored():
        config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    assert config.ExportApp.plugin_class == "autograder.nbgrader_bridge.export.RoundedCsvExportPlugin"


# What students choose in an LMS reaches the roster (`nbgrader db student import`), and on a hub
# whose students share a uid a student id is any inbound folder name.
HOSTILE_NAMES = {"student_id": '=HYPERLINK("http:evil.example")', "last_name": "Doe\n=1+1,x,x,x,x,x,x,x,x,x,x",
                 "first_name": "@SUM(1+1)", "email": "+cmd|x!A0"}


def test_nothing_a_student_named_is_a_formula_or_moves_a_column_in_grades_csv(tmp_path, monkeypatch):
    """Before: nbgrader's rows joined with bare commas: the id was a live HYPERLINK, the name's line
    break forged a row of its own, its commas moved the scores."""
    url = _gradebook(tmp_path, monkeypatch)
    with Gradebook(url) as gb:
        gb.add_student(HOSTILE_NAMES["student_id"], **{k: v for k, v in HOSTILE_NAMES.items() if k != "student_id"})
        gb.add_submission("lec01_codesign", HOSTILE_NAMES["student_id"])
    text = _export(RoundedCsvExportPlugin, url, tmp_path / "grades.csv")
    rows = list(csv.reader(text.splitlines(keepends=True)))
    assert len(rows) == 3 and all(len(row) == 11 for row in rows), rows
    assert not [cell for row in rows for cell in row if cell[:1] in ("=", "+", "-", "@")], rows
    hostile = next(row for row in rows if "HYPERLINK" in row[3])
    assert hostile[-4:] == ["0.0", "0.0", "0.0", "68.49"]
    assert next(row for row in rows if row[3] == "alice")[-4:] == ["68.49", "0.0", "68.49", "68.49"]


def test_work_handed_in_after_the_last_day_scores_nothing_in_the_export(tmp_path, monkeypatch):
    """The solutions go out after the late policy's last day (accept_days), with what a full-credit
    answer to each free-text question says. nbgrader's penalty is charged at autograde, on the
    automatic points alone, before a TA grades the free text: a student handing in after the release
    copied those answers and kept the TA's points in the export. The policy's last day holds for the
    whole score; a student's extension moves it."""
    from datetime import datetime, timedelta

    from autograder.engine.lateness import DAY, load_policy
    from autograder.engine.registry import load_config

    last_day = load_policy(load_config("lec01_codesign")).open_seconds()
    url = _gradebook(tmp_path, monkeypatch)
    due = datetime(2030, 1, 31, 15, 59)
    with Gradebook(url) as gb:
        gb.update_or_create_assignment("lec01_codesign", duedate=due)
        gb.add_student("bob")
        for student, extension in (("bob", None), ("alice", timedelta(days=3))):
            submission = gb.update_or_create_submission("lec01_codesign", student)
            submission.timestamp = due + timedelta(seconds=last_day + DAY)
            submission.extension = extension
            grades = [gb.find_grade(f"q{i}", "handout", "lec01_codesign", student) for i in range(len(SCORES))]
            grades[0].auto_score, grades[0].manual_score = SCORES[0], None   # graded by autograde
            for grade, points in zip(grades[1:], SCORES[1:]):
                grade.manual_score = points                                   # the TA's, after it
            # what nbgrader's AssignLatePenalties charged at autograde: all it could, the automatic points
            gb.find_submission_notebook("handout", "lec01_codesign", student).late_submission_penalty = SCORES[0]
        gb.db.commit()
    rows = {row[3]: row for row in csv.reader(_export(RoundedCsvExportPlugin, url, tmp_path / "g.csv").splitlines())}
    assert rows["bob"][-4:] == ["68.49", "68.49", "0.0", "68.49"], rows["bob"]
    assert rows["alice"][-4:] == ["68.49", "60.0", "8.49", "68.49"], rows["alice"]   # her extension: in time
