"""Is a batch resumable: re-running skips graded students, regrades changed ones, loses nothing
after a kill, and always rebuilds a complete, sorted grades.csv?"""

import gc
import os
import shutil
from dataclasses import replace

import pytest

from autograder.engine import grade_batch, read_results
from autograder.engine.gradebook_rows import GradebookRow
from autograder.engine.outputs import read_result, results_path
from autograder.engine.results import ItemResult, SubmissionResult
from autograder.engine.registry import ConfigError
from engine.conftest import TEST_LIMITS
from engine.corpus import ASSIGNMENT, CORPUS_DIR

# Cheap students (no notebook): a batch of them grades in about a second.
STUDENTS = {"zoe": "partial", "amy": "wrong_types", "kim": "syntax_error"}


@pytest.fixture
def submissions(tmp_path):
    root = tmp_path / "submissions"
    for student, case in STUDENTS.items():
        (root / student).mkdir(parents=True)
        shutil.copyfile(CORPUS_DIR / case / "codesign.py", root / student / "codesign.py")
    return root


def grade(submissions, out, **kwargs):
    return grade_batch(ASSIGNMENT, submissions, out, limits=TEST_LIMITS, **kwargs)


def test_rerun_skips_graded_students_and_regrades_changed_ones(submissions, tmp_path):
    out = tmp_path / "out"
    first = grade(submissions, out)
    assert first.graded == ("amy", "kim", "zoe") and first.skipped == ()

    again = grade(submissions, out)
    assert again.graded == () and sorted(again.skipped) == ["amy", "kim", "zoe"]
    assert again.results == first.results

    (submissions / "amy" / "codesign.py").write_text((CORPUS_DIR / "partial" / "codesign.py").read_text())
    changed = grade(submissions, out)
    assert changed.graded == ("amy",)
    assert changed.results[0].score == next(r for r in first.results if r.student == "zoe").score

    forced = grade(submissions, out, force=True)
    assert forced.graded == ("amy", "kim", "zoe")


def reachable(root) -> list:
    """Every object `root` refers to, directly or not."""
    seen, todo, found = set(), [root], []
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, type):
            continue
        seen.add(id(obj))
        found.append(obj)
        todo += gc.get_referents(obj)
    return found


def test_the_report_keeps_a_gradebook_row_per_student_and_no_result(submissions, tmp_path):
    """Bounded memory: what the summary keeps of a student is a few numbers, not the result (its
    items, feedback and outputs: about 0.2 MB each for lec01)."""
    out = tmp_path / "out"
    report = grade(submissions, out)
    assert [row.student for row in report.results] == ["amy", "kim", "zoe"]
    assert not [o for o in reachable(report) if isinstance(o, (SubmissionResult, ItemResult))]
    assert report.results == tuple(GradebookRow.of(read_result(results_path(out, s))) for s in ("amy", "kim", "zoe"))


def test_grades_csv_is_built_from_each_result_as_the_batch_has_it_without_reading_it_back(submissions, tmp_path,
                                                                                            monkeypatch):
    """Each stored result is read once (by the skip check), each new one not at all: the end of a
    batch of 10,000 does not parse 10,000 results again. A results file no folder stands for any
    more keeps its row, and the file is the one grades_csv makes of every stored result."""
    from autograder.engine import batch, grades_csv, outputs, write_result
    from autograder.engine.registry import load_config

    out = tmp_path / "out"
    grade(submissions, out)
    shutil.rmtree(submissions / "kim")   # graded before, gone from the folder since
    write_result(out, replace(read_result(results_path(out, "kim")), student="lea"))
    shutil.copytree(submissions / "amy", submissions / "bea")   # a new student
    reads = []

    def counted(path):
        reads.append(path.stem)
        return read_result(path)

    monkeypatch.setattr(batch, "read_result", counted)
    monkeypatch.setattr(outputs, "read_result", counted)
    from autograder.engine import grades_sheet
    monkeypatch.setattr(grades_sheet, "read_result", counted)
    report = grade(submissions, out)
    assert report.graded == ("bea",) and sorted(report.skipped) == ["amy", "zoe"]
    assert sorted(reads) == ["amy", "bea", "kim", "lea", "zoe"]   # bea: the skip check finds none
    assert [row.student for row in report.results] == ["amy", "bea", "kim", "lea", "zoe"]
    stored = read_results(out)
    assert (out / "grades.csv").read_text("utf-8") == grades_csv(load_config(ASSIGNMENT), stored)


def test_a_killed_batch_loses_nothing_and_grades_nobody_twice(submissions, tmp_path):
    """After a kill (one result missing, a half-written temporary file left behind), does a re-run
    grade exactly the missing student and produce a complete grades.csv?"""
    out = tmp_path / "out"
    grade(submissions, out)
    results_path(out, "kim").unlink()
    (out / "results" / ".kim.json.abc123.tmp").write_text('{"trunc')
    (out / "grades.csv").unlink()

    resumed = grade(submissions, out, jobs=2)
    assert resumed.graded == ("kim",)
    rows = (out / "grades.csv").read_text().splitlines()
    assert [row.split(",")[0] for row in rows] == ["student", "amy", "kim", "zoe"]
    assert [r.student for r in read_results(out)] == ["amy", "kim", "zoe"]


def test_students_in_nbgrader_layout_are_found(tmp_path):
    """Are files in SUBMISSIONS/<student>/<assignment>/ graded like files directly in <student>/?"""
    submissions = tmp_path / "submitted"
    (submissions / "nina" / ASSIGNMENT).mkdir(parents=True)
    shutil.copyfile(CORPUS_DIR / "partial" / "codesign.py", submissions / "nina" / ASSIGNMENT / "codesign.py")
    (submissions / "omar").mkdir()
    shutil.copyfile(CORPUS_DIR / "partial" / "codesign.py", submissions / "omar" / "codesign.py")
    report = grade(submissions, tmp_path / "out")
    nina, omar = report.results
    assert nina.score == omar.score > 0


def test_configuration_errors_are_refused(submissions, tmp_path):
    with pytest.raises(ConfigError):
        grade_batch("no_such_assignment", submissions, tmp_path / "out")
    with pytest.raises(ConfigError):
        grade_batch(ASSIGNMENT, tmp_path / "missing", tmp_path / "out")
    with pytest.raises(ValueError):
        grade_batch(ASSIGNMENT, submissions, tmp_path / "out", jobs=0)
    assert not os.path.exists(tmp_path / "out" / "grades.csv")
