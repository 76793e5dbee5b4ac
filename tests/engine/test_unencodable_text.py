"""Text no UTF-8 file can store (a lone surrogate: a student's answer "\\ud800", their output, a
folder named with a byte that is no UTF-8) is data like any other: written to the student's
result as JSON's own escape and read back as it was, and never an error that ends the class's
batch (grade, pregrade)."""

from __future__ import annotations

import json
from dataclasses import replace

from autograder.engine.batch import grade_batch
from autograder.engine.outputs import read_result, results_path, write_result
from autograder.engine.results import ItemResult, SubmissionResult

ASSIGNMENT = "lec01_codesign"


def _result(student: str, answer: object = 1.0, output: str = "x\n") -> SubmissionResult:
    item = ItemResult("q01_compute_headline", "number", 0.0, 1.0, "failed", output,
                      answer={"state": "given", "value": answer})
    return SubmissionResult(student=student, score=0.0, max_score=1.0, items=(item,), isolation="bubblewrap",
                            seconds=0.1, assignment=ASSIGNMENT)


def test_a_result_holding_lone_surrogates_is_written_and_read_back_as_it_was(tmp_path):
    result = replace(_result("bad\udcff", answer="\ud800", output="printed \udfff\n"), declared_id="\ud800",
                     executed={"cells": ["\ud800"]})
    write_result(tmp_path, result)
    path = results_path(tmp_path, "bad\udcff")
    back = read_result(path)
    assert back is not None and back.items[0].answer["value"] == "\ud800" and back.declared_id == "\ud800"
    # what Gradescope shows: the character as its escape, as the feedback file shows it
    assert "\\udfff" in json.loads(path.read_text("utf-8"))["tests"][0]["output"]
    assert (tmp_path / "feedback" / "bad\udcff.md").read_text("utf-8")


class _Executor:
    """Grades every student at once: aaron's notebook set q01 to "\\ud800"."""
    local = False

    def isolation(self, asked):
        return "bubblewrap"

    def grade_all(self, job, submissions, finish, started):
        started()
        for submission in submissions:
            finish(submission.name, _result(submission.name, "\ud800" if submission.name == "aaron" else 1.0), None)


def test_one_students_lone_surrogate_does_not_stop_the_class(tmp_path):
    for name in ("aaron", "bob", "carol"):
        (tmp_path / "subs" / name).mkdir(parents=True)
    report = grade_batch(ASSIGNMENT, tmp_path / "subs", tmp_path / "out", executor=_Executor())
    assert sorted(report.graded) == ["aaron", "bob", "carol"], report.failed
    assert all(results_path(tmp_path / "out", name).is_file() for name in ("aaron", "bob", "carol"))
    assert (tmp_path / "out" / "grades.csv").is_file()


def test_a_result_that_cannot_be_written_is_that_students_failure_and_the_class_goes_on(tmp_path, monkeypatch):
    """Whatever no rule foresaw in writing one student's result (here a failing write) lists that
    student as failed, to grade again; the others are graded and written."""
    from autograder.engine import batch

    def writing(out, result):
        if result.student == "bob":
            raise OSError(28, "No space left on device")
        return write_result(out, result)

    monkeypatch.setattr(batch, "write_result", writing)
    for name in ("aaron", "bob", "carol"):
        (tmp_path / "subs" / name).mkdir(parents=True)
    report = grade_batch(ASSIGNMENT, tmp_path / "subs", tmp_path / "out", executor=_Executor())
    assert sorted(report.graded) == ["aaron", "carol"] and [s for s, _ in report.failed] == ["bob"]
    assert "No space left on device" in report.failed[0][1]
