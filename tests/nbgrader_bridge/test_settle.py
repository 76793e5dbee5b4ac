"""A student nbgrader cannot autograde (an unreadable notebook: every automatic grade left empty):
does `settle` write the pinned trusted scores into the gradebook, record why, refuse a student
nbgrader did grade, and leave nothing to reconcile afterwards?"""

import json
import os
import sys

import pytest

from autograder.engine.registry import load_config
from autograder.engine.results import ItemResult, SubmissionResult
from autograder.engine.vocabulary import AUTOMATIC_KINDS
from autograder.nbgrader_bridge.course import Course
from autograder.nbgrader_bridge.gradebook import cell_scores
from autograder.nbgrader_bridge.reconcile import disagreements
from autograder.nbgrader_bridge.settle import SettleError, read_settled, settle

CONFIG = load_config("lec01_codesign")
AUTO = [item.id for item in CONFIG.items_of(*AUTOMATIC_KINDS)]


def _pinned(student: str) -> SubmissionResult:
    """What pregrade pinned for a student whose functions scored and whose notebook could not be read."""
    items = tuple(ItemResult(i.id, i.kind, i.points if i.kind == "function" else 0.0, i.points,
                             "passed" if i.kind == "function" else "failed", "", "", i.title)
                  for i in CONFIG.items if i.id in AUTO)
    return SubmissionResult(student, sum(i.score for i in items), CONFIG.total_points, items, "bubblewrap", 1.0,
                            CONFIG.assignment, "f" * 64)


@pytest.fixture
def course(tmp_path, monkeypatch):
    from nbgrader.api import Gradebook

    monkeypatch.setenv("PATH", os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment(CONFIG.assignment)
        gb.add_notebook("handout", CONFIG.assignment)
        for item in CONFIG.items:
            gb.add_grade_cell(item.id, "handout", CONFIG.assignment, max_score=item.points, cell_type="code")
        for student in ("eve", "bob"):
            gb.add_student(student)
            gb.add_submission(CONFIG.assignment, student)   # autograde records it even when it fails
        gb.find_grade("round_e4m3", "handout", CONFIG.assignment, "bob").auto_score = 10.0   # bob was autograded
        gb.db.commit()
    return Course(tmp_path, "cs349e", url, "submitted")


def test_the_pinned_score_goes_into_the_gradebook_with_the_reason(course):
    pinned = _pinned("eve")
    before = disagreements({"eve": cell_scores(course, CONFIG.assignment)["eve"]}, {"eve": pinned}, AUTO)
    assert [d.student for d in before] == ["eve"] and "autograde failed" in before[0].line()
    scores = settle(course, CONFIG.assignment, "eve", pinned, AUTO, "handout.ipynb is not JSON (NotJSONError)")
    assert sum(scores.values()) == pinned.score
    cells = cell_scores(course, CONFIG.assignment)["eve"]
    assert {item: cells[item].auto_score for item in AUTO} == {i.id: i.score for i in pinned.items}
    assert disagreements({"eve": cell_scores(course, CONFIG.assignment)["eve"]}, {"eve": pinned}, AUTO) == []
    record = read_settled(course, CONFIG.assignment)["eve"]
    assert record["reason"] == "handout.ipynb is not JSON (NotJSONError)" and record["scores"] == scores
    assert json.loads((course.root / ".pinned_results" / CONFIG.assignment / "settled.json").read_text())["eve"]


def test_a_student_nbgrader_graded_is_not_overwritten(course):
    with pytest.raises(SettleError, match="bob: nbgrader did autograde this submission"):
        settle(course, CONFIG.assignment, "bob", _pinned("bob"), AUTO, "try")
    assert cell_scores(course, CONFIG.assignment)["bob"]["round_e4m3"].auto_score == 10.0


def test_a_settlement_needs_a_reason_and_a_submission(course):
    with pytest.raises(SettleError, match="--reason"):
        settle(course, CONFIG.assignment, "eve", _pinned("eve"), AUTO, " ")
    with pytest.raises(SettleError, match="no submission of lec01_codesign in the gradebook"):
        settle(course, CONFIG.assignment, "frank", _pinned("frank"), AUTO, "unreadable")
