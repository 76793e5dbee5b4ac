"""Which students does reconcile flag, and how does it say so?"""

from autograder.engine.results import ItemResult, SubmissionResult
from autograder.nbgrader_bridge.gradebook import CellScore
from autograder.nbgrader_bridge.reconcile import disagreements

POINTS = {"round_e4m3": 10.0, "q01": 2.0, "q15": 5.0}
AUTO = ["round_e4m3", "q01"]


def trusted(student, round_e4m3, q01):
    items = (ItemResult("round_e4m3", "function", round_e4m3, 10.0, "partial", ""),
             ItemResult("q01", "number", q01, 2.0, "passed", ""),
             ItemResult("q15", "text", 0.0, 5.0, "manual", ""))
    return SubmissionResult(student, round_e4m3 + q01, 17.0, items, "bubblewrap", 1.0, "lec01_codesign")


def cells(round_e4m3, q01, q15=None, manual=None):
    return {"round_e4m3": CellScore("round_e4m3", round_e4m3, manual, 10.0, round_e4m3 is None),
            "q01": CellScore("q01", q01, None, 2.0, q01 is None),
            "q15": CellScore("q15", q15, None, 5.0, True)}


def test_agreeing_students_are_not_listed():
    assert disagreements({"ann": cells(7.5, 2.0)}, {"ann": trusted("ann", 7.5, 2.0)}, AUTO) == []


def test_a_rewritten_check_is_flagged_item_by_item():
    [found] = disagreements({"bob": cells(10.0, 2.0)}, {"bob": trusted("bob", 0.0, 2.0)}, AUTO)
    assert found.line() == "bob: nbgrader 12 vs trusted 2 automatic points; differs on round_e4m3 (nbgrader 10, trusted 0)"


def test_a_manual_override_is_not_a_disagreement():
    assert disagreements({"cy": cells(0.0, 2.0, manual=9.0)}, {"cy": trusted("cy", 0.0, 2.0)}, AUTO) == []


def test_free_text_items_are_not_compared():
    assert disagreements({"di": cells(1.0, 2.0, q15=None)}, {"di": trusted("di", 1.0, 2.0)}, AUTO) == []


def test_a_failed_nbgrader_run_is_one_line_not_one_per_item():
    [found] = disagreements({"ed": cells(None, None)}, {"ed": trusted("ed", 5.0, 2.0)}, AUTO)
    assert found.items == () and "autograde failed" in found.line() and "trusted 7" in found.line()


def test_students_missing_on_either_side():
    found = disagreements({"fay": cells(3.0, 0.0)}, {"gus": trusted("gus", 0.0, 0.0)}, AUTO)
    assert [f.student for f in found] == ["fay", "gus"]
    assert "no submission for the trusted grader" in found[0].line()
    assert "not in nbgrader's gradebook" in found[1].line()


def test_a_student_nbgrader_scored_zero_without_a_submission_is_fine():
    assert disagreements({"hal": cells(0.0, 0.0)}, {}, AUTO) == []


def test_a_missing_grade_cell_is_named():
    nb = cells(10.0, 2.0)
    del nb["q01"]  # the student deleted the grade cell
    [found] = disagreements({"ivy": nb}, {"ivy": trusted("ivy", 10.0, 2.0)}, AUTO)
    assert "q01 (nbgrader none, trusted 2)" in found.line()


def test_a_submission_without_its_notebook_is_named_as_such():
    """nbgrader autograde stops at "No notebooks were matched" for a submission without its
    notebook and records nothing; the snapshot pregrade pinned knows the notebook is missing."""
    [found] = disagreements({}, {"jo": trusted("jo", 10.0, 0.0)}, AUTO, missing={"jo": ["handout.ipynb"]})
    assert "handed in without handout.ipynb" in found.line() and "trusted 10" in found.line()
    assert "not autograded yet" not in found.line()
    [other] = disagreements({}, {"jo": trusted("jo", 10.0, 0.0)}, AUTO, missing={"jo": ["codesign.py"]})
    assert "not autograded yet" in other.line()


def test_a_tas_score_from_before_a_new_submission_is_named():
    """nbgrader's autograde keeps a TA's score (a free-text grade, an override) when the student hands
    in again and is graded anew; it only marks the cell as needing a grade. The export kept counting
    the score given to the earlier submission's answer."""
    from autograder.nbgrader_bridge.reconcile import stale_manual_scores

    earlier = {"round_e4m3": CellScore("round_e4m3", 0.0, 10.0, 10.0, True),     # re-autograded since
               "q15": CellScore("q15", None, 5.0, 5.0, True),
               "q01": CellScore("q01", 2.0, None, 2.0, False)}
    graded = {"round_e4m3": CellScore("round_e4m3", 0.0, 10.0, 10.0, False),     # the TA's, still current
              "q15": CellScore("q15", None, None, 5.0, True)}                    # not graded yet
    assert stale_manual_scores({"eve": earlier, "fay": graded}) == [
        "eve: a TA's score given before her latest autograde still counts on q15, round_e4m3 (handed in again?): "
        "grade them again in formgrader"]
