"""Every CSV an instructor opens in a spreadsheet shows a student-chosen folder or file name the
way grades.csv does (engine.outputs.student_cell): never a formula or a link, and never the same
cell as another name (a zero-width or bidi character, a control character, a leading quote)."""

from __future__ import annotations

import csv
import io

from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.views.answer_matches import AnswerReport, CopyFlag, report_csv
from autograder.engine.outputs import student_cell
from autograder.nbgrader_bridge.flagged import read_rows, write_collect_flags
from autograder.nbgrader_bridge.inbound import Flag
from autograder.similarity.compare import Pair, write_pairs_csv

# what a student can name an inbound folder or a zip's entry (a folder name has no "/" nor NUL)
NAMES = st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), min_size=1, max_size=30)
HOSTILE = ["'=HYPERLINK(\"http://evil.example\",\"alice\")", "alice\u200b", "\u202eecila", "alice\x07",
           "'+1", "-2+3", "@SUM(A1)", "\t=1"]


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


@settings(max_examples=60, deadline=None)
@given(NAMES, NAMES)
def test_the_similarity_pairs_csv_shows_folder_names_as_grades_csv_does(tmp_path_factory, a, b):
    path = tmp_path_factory.mktemp("pairs") / "pairs.csv"
    write_pairs_csv(path, [Pair(a, b, 0.9, 0.8, 120)], threshold=0.5)
    row = _rows(path.read_text(encoding="utf-8"))[1]
    assert row[1:3] == [student_cell(a), student_cell(b)]


def test_hostile_folder_names_in_the_similarity_csv(tmp_path):
    path = tmp_path / "pairs.csv"
    write_pairs_csv(path, [Pair(name, "bob", 0.9, 0.8, 120) for name in HOSTILE], threshold=0.5)
    cells = [row[1] for row in _rows(path.read_text(encoding="utf-8"))[1:]]
    assert cells == [student_cell(name) for name in HOSTILE]
    assert len(set(cells)) == len(HOSTILE) and "alice" not in cells


@settings(max_examples=60, deadline=None)
@given(NAMES, NAMES)
def test_the_copied_answers_csv_shows_folder_names_as_grades_csv_does(student, source):
    report = AnswerReport("lec01_codesign", (student, source), ("q1",), 1,
                          (CopyFlag(student, source, ("q1",), 0, 1),), ())
    row = _rows(report_csv(report))[1]
    assert row[:2] == [student_cell(student), student_cell(source)]


@settings(max_examples=40, deadline=None)
@given(NAMES, NAMES, NAMES)
def test_the_collect_flagged_list_shows_names_as_grades_csv_does_and_keeps_earlier_rows(tmp_path_factory,
                                                                                       student, inbound, file):
    path = tmp_path_factory.mktemp("flagged") / "lec01_codesign.csv"
    first = Flag(student, inbound, file, "not collected", "why")
    write_collect_flags(path, [first])
    write_collect_flags(path, [Flag("bob", "bob+x", "", "not collected", "why")], keep=lambda row: True)
    rows = read_rows(path)
    assert [(r["student"], r["inbound"], r["file"]) for r in rows[:1]] == \
        [(student_cell(student), student_cell(inbound), student_cell(file))]
    assert len(rows) == 2   # an earlier row is kept as written, not escaped again


@settings(max_examples=40, deadline=None)
@given(NAMES, NAMES)
def test_zip_collects_flagged_list_shows_names_as_grades_csv_does(tmp_path_factory, student, lms_file):
    """The LMS download's file names carry the student's own upload name (and its folder the id)."""
    from autograder.nbgrader_bridge.flagged import write_zip_flags

    path = tmp_path_factory.mktemp("zip") / "flagged.csv"
    write_zip_flags(path, [(student, lms_file, "not an archive")])
    rows = read_rows(path)
    assert [(r["student"], r["lms_file"]) for r in rows] == [(student_cell(student), student_cell(lms_file))]
