"""Can a submission stall the in-process Gradescope runner past its backstop, or leave it without
a results.json? The backstop's expiry must end grading whatever step it lands in: a grading step
that absorbs `Exception` (one item's error, a hypothesis error) must not turn it into one lost
item and grade on with no timer left."""

import json
import time
from pathlib import Path

import pytest

from autograder.api.gradescope_run import _backstop, gradescope_run
from autograder.engine.guard import guarded
from autograder.engine.registry import REPO_ROOT, load_config
from autograder.engine.roster import read_roster
from autograder.gradescope.schema import results_problems

NAME = "lec01_codesign"


def test_an_item_that_outlasts_the_backstop_ends_grading_not_just_the_item():
    item = load_config(NAME).items[0]
    with pytest.raises(BaseException) as caught:
        with _backstop(0.2):
            guarded(item, lambda: time.sleep(60))   # a student's call the grader is waiting for
    assert "did not finish" in str(caught.value)


def test_no_except_exception_in_the_grader_absorbs_the_backstop():
    absorbed = []
    with pytest.raises(BaseException) as caught:
        with _backstop(0.2):
            try:
                time.sleep(60)
            except Exception:  # noqa: BLE001 - what guard.py and properties.py do
                absorbed.append(True)
            time.sleep(60)
    assert not absorbed and "did not finish" in str(caught.value)


def test_an_expired_backstop_writes_a_failure_result(tmp_path):
    student = next(iter(read_roster(REPO_ROOT / "roster.txt")))
    (tmp_path / "submission").mkdir()
    # the reference, stalling at import: grading cannot finish inside the backstop however warm
    # the machine's caches are (the reference alone is graded in under 0.5 s once keys are cached)
    reference = (REPO_ROOT / "solutions" / NAME / "codesign.py").read_text(encoding="utf-8")
    (tmp_path / "submission" / "codesign.py").write_text("import time\ntime.sleep(30)\n" + reference, encoding="utf-8")
    (tmp_path / "submission_metadata.json").write_text(json.dumps({"users": [{"sid": student}]}), encoding="utf-8")
    status = gradescope_run(assignment=NAME, root=tmp_path, timeout=0.5)
    results = json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))
    assert status == 1 and results["score"] == 0 and results_problems(results) == []
    assert "did not finish" in results["extra_data"]["grading_failed"]


@pytest.mark.parametrize("raised", [RuntimeError("a bug in a grading step"), OSError(28, "No space left on device"),
                                    KeyError("tests"), MemoryError(), SystemExit(3)])
def test_any_failure_inside_grading_still_writes_a_failure_result(tmp_path, monkeypatch, raised):
    """Fail closed whatever grading raises: Gradescope shows a submission without results.json
    as an autograder error with no score at all, and the student's log is all that is left."""
    import autograder.api.gradescope_run as runner

    def broken(**kwargs):
        raise raised

    monkeypatch.setattr(runner, "grade", broken)
    student = next(iter(read_roster(REPO_ROOT / "roster.txt")))
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "codesign.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "submission_metadata.json").write_text(json.dumps({"users": [{"sid": student}]}), encoding="utf-8")
    status = gradescope_run(assignment=NAME, root=tmp_path, timeout=30)
    results = json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))
    assert status == 1 and results["score"] == 0 and results_problems(results) == []
    assert type(raised).__name__ in results["extra_data"]["grading_failed"]
