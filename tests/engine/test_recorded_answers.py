"""Each number and choice result keeps the value the student submitted (ItemResult.answer), as
JSON-plain data, so the class's answers can be compared with other students' keys without grading
again; what is absent or cannot be read is recorded as such. Results written before answers were
recorded still read."""

from __future__ import annotations

import json

import numpy as np

from autograder.engine.outputs import read_result, results_path, write_result
from autograder.engine.registry import Item
from autograder.engine.report_items import grade_report
from autograder.engine.results import SubmissionResult
from autograder.sandbox import NotebookOutcome
from autograder.sandbox.codec import Unsupported

NUMBER = Item(id="q01", kind="number", points=2, rtol=0.01)
CHOICE = Item(id="q02", kind="choice", points=1, choices=("A", "B"))
TEXT = Item(id="q03", kind="text", points=2)
KEY = {"q01": 7.5, "q02": "A"}


def answers(variables: dict) -> dict[str, dict | None]:
    results = grade_report([NUMBER, CHOICE, TEXT], KEY, NotebookOutcome("ok", variables, (), ""), "h.ipynb")
    return {r.id: r.answer for r in results}


def test_a_right_and_a_wrong_answer_are_both_kept_as_submitted():
    assert answers({"q01": 7.51, "q02": " b "}) == {
        "q01": {"state": "given", "value": 7.51}, "q02": {"state": "given", "value": " b "}, "q03": None}
    assert answers({"q01": np.float32(3.0), "q02": "A"})["q01"] == {"state": "given", "value": 3.0}
    assert answers({"q01": np.array(12), "q02": "A"})["q01"] == {"state": "given", "value": 12}
    assert answers({"q01": 42, "q02": "A"})["q01"] == {"state": "given", "value": 42}


def test_absent_placeholder_and_unreadable_answers_are_recorded_as_such():
    recorded = answers({"q01": None, "q02": Unsupported("ndarray", "object array")})
    assert recorded["q01"] == {"state": "given", "value": None}   # the placeholder: unanswered
    assert recorded["q02"] == {"state": "unreadable", "type": "ndarray"}
    assert answers({})["q01"] == {"state": "absent"}
    assert answers({"q01": float("nan")})["q01"] == {"state": "unreadable", "type": "float nan"}
    assert answers({"q01": 10**400})["q01"]["state"] == "unreadable"
    assert answers({"q01": [1.0, 2.0]})["q01"] == {"state": "unreadable", "type": "list"}
    assert len(answers({"q02": "A" * 5000})["q02"]["value"]) == 200
    # no notebook at all (missing file): every keyed item's answer is absent
    missing = grade_report([NUMBER, CHOICE], KEY, None, "h.ipynb", "`h.ipynb` 没有提交。")
    assert [r.answer for r in missing] == [{"state": "absent"}] * 2


def test_a_measured_answer_is_recorded_by_kind_only():
    """A notebook that times itself while it is graded answers with the grading machine's number:
    keeping it would make two gradings of the same files differ."""
    from autograder.engine.answer_checks import DerivedKey, MeasuredKey

    ratio = Item(id="q04", kind="number", points=1, rtol=0.05)
    items, key = [NUMBER, ratio], {"q01": MeasuredKey(0.1, 100.0), "q04": DerivedKey(("q01",), lambda t: 2 * t)}
    for timing in (3.0, 3.5):
        results = grade_report(items, key, NotebookOutcome("ok", {"q01": timing, "q04": 2 * timing}, (), ""), "h.ipynb")
        assert [r.status for r in results] == ["passed", "passed"]
        assert [r.answer for r in results] == [{"state": "measured"}] * 2


def test_the_feedback_is_what_it_was_and_never_shows_the_key():
    results = grade_report([NUMBER], {"q01": 7.123456}, NotebookOutcome("ok", {"q01": 1.0}, (), ""), "h.ipynb")
    assert results[0].answer == {"state": "given", "value": 1.0}
    assert "7.12" not in results[0].feedback_md and "你的答案 1" in results[0].feedback_md


def _result(items) -> SubmissionResult:
    return SubmissionResult(student="alice", score=2.0, max_score=5.0, items=tuple(items), isolation="bubblewrap",
                            seconds=1.0, assignment="fx")


def test_answers_survive_the_results_file_and_older_results_still_read(tmp_path):
    items = grade_report([NUMBER, CHOICE, TEXT], KEY, NotebookOutcome("ok", {"q01": 7.5, "q02": "B"}, (), ""), "h.ipynb")
    write_result(tmp_path, _result(items))
    path = results_path(tmp_path, "alice")
    assert read_result(path).items == tuple(items)
    data = json.loads(path.read_text("utf-8"))
    assert [t["name"] for t in data["tests"]] and all("answer" not in t for t in data["tests"])  # what students see
    for item in data["extra_data"]["submission"]["items"]:   # a result written before answers were kept
        del item["answer"]
    path.write_text(json.dumps(data), "utf-8")
    older = read_result(path)
    assert older is not None and [i.answer for i in older.items] == [None, None, None]
    assert [i.score for i in older.items] == [i.score for i in items]
