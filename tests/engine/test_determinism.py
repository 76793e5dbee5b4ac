"""Does grading the same submission twice give identical results (timing fields aside), and is a
student's grade the same alone as in a batch full of hostile submissions?"""

import json

from autograder.engine import grade_submission, gradescope_results
from engine.conftest import TEST_LIMITS
from engine.corpus import ASSIGNMENT


def without_timing(result) -> dict:
    data = result.to_dict()
    data.pop("seconds")
    data.pop("reference")   # the machine's measurement, shared by a process's gradings, retaken when old
    return data


def test_same_submission_twice_alone_and_in_the_batch(graded_batch):
    folder = graded_batch.submissions / "partial"
    first = grade_submission(ASSIGNMENT, folder, limits=TEST_LIMITS, isolation="bubblewrap")
    second = grade_submission(ASSIGNMENT, folder, limits=TEST_LIMITS, isolation="bubblewrap")
    in_batch = graded_batch.result("partial")
    assert without_timing(first) == without_timing(second) == without_timing(in_batch)

    def json_without_timing(result):
        data = gradescope_results(result)
        data.pop("execution_time")
        data["extra_data"]["submission"].pop("seconds")
        data["extra_data"]["submission"].pop("reference")
        return json.dumps(data, sort_keys=True)

    assert json_without_timing(first) == json_without_timing(second)
    stored = json.loads((graded_batch.out / "results" / "partial.json").read_text("utf-8"))
    stored.pop("execution_time")
    stored["extra_data"]["submission"].pop("seconds")
    stored["extra_data"]["submission"].pop("reference")
    assert stored["extra_data"].pop("seal")   # the grader's seal of the whole record, timing included
    assert json.dumps(stored, sort_keys=True) == json_without_timing(first)
