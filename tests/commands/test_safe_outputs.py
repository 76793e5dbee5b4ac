"""`grade` on a class whose student id is a spreadsheet formula and whose code prints control
characters: grades.csv shows the id as text, feedback and results.json carry no control bytes."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from autograder.engine.registry import REPO_ROOT
from engine.corpus import ASSIGNMENT

FORMULA_ID = '=HYPERLINK("http:evil.example","x")'
NOISY = '''
import sys


def round_e4m3(x):
    sys.stdout.write("nul:\\x00 bell:\\x07 esc:\\x1b[2J del:\\x7f cr:\\r end\\n")
    return x
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("safe")
    (base / "subs" / FORMULA_ID).mkdir(parents=True)
    (base / "subs" / FORMULA_ID / "codesign.py").write_text(NOISY, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, str(base / "subs"),
                          "--out", str(base / "out")], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return base / "out"


def test_a_formula_student_id_is_text_in_grades_csv(graded):
    raw = (graded / "grades.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(raw.splitlines()))
    assert rows[1][0] == "'" + FORMULA_ID
    assert "\n=" not in raw and ",=" not in raw


def test_control_characters_are_stripped_from_feedback_and_results(graded):
    feedback = next((graded / "feedback").glob("*.md")).read_text(encoding="utf-8")
    results = next((graded / "results").glob("*.json")).read_text(encoding="utf-8")
    assert "nul: bell: esc:[2J del: cr: end" in feedback
    assert "nul: bell: esc:[2J del: cr: end" in json.loads(results)["tests"][0]["output"]
    for text in (feedback, results):
        assert not [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f]
    assert "\\u0000" not in results and "\\u001b" not in results


def test_the_line_naming_students_the_grader_failed_on_shows_their_names_as_text(capsys, monkeypatch):
    """A folder named with a line break and a terminal escape that the grader failed on was named
    raw in the batch's last line on stderr: a forged line, an OSC title sequence on the terminal."""
    from pathlib import Path
    from types import SimpleNamespace

    import autograder.views.console_view as view
    from autograder.commands import report_batch

    monkeypatch.setattr(view, "print_summary", lambda report, out: None)
    status = report_batch("grade", SimpleNamespace(failed=[("dnl\n\x1b]0;pwned\x07x", "boom")]), Path("out"))
    err = capsys.readouterr().err
    assert status == 1 and "\x1b" not in err and "\x07" not in err and err.count("\n") == 1, repr(err)
    assert "dnl\\x0a" in err


@pytest.mark.parametrize("timestamp", [None, "not a time"])
def test_the_late_work_warning_shows_a_folder_name_as_text(tmp_path, capsys, timestamp):
    """grade --due warns of a student with no (or an unreadable) submission time, naming the folder
    up to three times: the name went raw to the terminal (an OSC 52 clipboard write, a forged line)."""
    from datetime import datetime, timezone

    from autograder.engine.lateness import LatePolicy, stamp
    from autograder.engine.results import SubmissionResult

    name = "x\x1b]52;c;AAAA\x07\nFORGED"
    (tmp_path / name).mkdir()
    if timestamp:
        (tmp_path / name / "timestamp.txt").write_text(timestamp, encoding="utf-8")
    result = SubmissionResult(student=name, score=1.0, max_score=2.0, items=(), isolation="bubblewrap", seconds=1.0)
    stamp(result, tmp_path / name, datetime(2030, 1, 1, tzinfo=timezone.utc), LatePolicy(10.0, 50.0, 0.0))
    err = capsys.readouterr().err
    assert err and "\x1b" not in err and "\x07" not in err and "\nFORGED" not in err, repr(err)


def test_nbgraders_export_shows_a_student_id_as_grades_csv_does():
    """An id with a control character (imported with `nbgrader db student import`) was exported as
    csv_cell cleans it, "alice" + BEL as "alice": a row that passes for alice's."""
    from types import SimpleNamespace

    from nbgrader.api import MissingEntry

    from autograder.engine.outputs import student_cell
    from autograder.nbgrader_bridge.export import RoundedCsvExportPlugin

    def missing(*args):
        raise MissingEntry

    gradebook = SimpleNamespace(find_submission=missing)
    assignment = SimpleNamespace(name="lec01_codesign", duedate=None, max_score=144.0)
    student = SimpleNamespace(id="alice\x07", last_name="", first_name="", email="")
    row = RoundedCsvExportPlugin._row(gradebook, assignment, student)
    assert row[3] == student_cell("alice\x07") != "alice"


def test_nbgraders_export_shows_a_bidi_override_in_a_students_name_as_an_escape():
    """A name the student chose in the LMS (`nbgrader db student import`) holding U+202E reversed
    the rest of its cell in a spreadsheet, and the line in `cat grades.csv`: `\u202eecilA` read as
    "Alice". Every CSV cell shows invisible characters as escapes, as student_cell always did."""
    from types import SimpleNamespace

    from nbgrader.api import MissingEntry

    from autograder.nbgrader_bridge.export import RoundedCsvExportPlugin

    def missing(*args):
        raise MissingEntry

    gradebook = SimpleNamespace(find_submission=missing)
    assignment = SimpleNamespace(name="lec01_codesign", duedate=None, max_score=144.0)
    student = SimpleNamespace(id="bob", last_name="\u202eecilA", first_name="b\u200bob", email="b\u2066@x")
    row = RoundedCsvExportPlugin._row(gradebook, assignment, student)
    assert row[4:7] == ["\\u202eecilA", "b\\u200bob", "b\\u2066@x"], row
