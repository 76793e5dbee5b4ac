"""Does the results.json check accept Gradescope's format and name every way to break it?"""

import copy

import pytest

from autograder.gradescope.schema import check_results, results_problems


def valid() -> dict:
    return {
        "score": 12.5,
        "execution_time": 3.2,
        "output": "自动评分 12.5 / 20 分。",
        "output_format": "md",
        "visibility": "after_published",
        "stdout_visibility": "hidden",
        "extra_data": {"submission": {}},
        "tests": [
            {"name": "round_e4m3", "number": "1", "score": 10, "max_score": 10, "status": "passed",
             "output": "ok", "visibility": "after_published"},
            {"name": "to_e2m1", "number": "2", "score": 2.5, "max_score": 10, "status": "failed",
             "output": "`to_e2m1(0.75)` 返回 0.5，期望 1.0", "output_format": "md", "visibility": "after_published"},
        ],
    }


def test_a_valid_result_has_no_problems():
    assert results_problems(valid()) == []
    check_results(valid())


def broken(edit) -> list[str]:
    data = copy.deepcopy(valid())
    edit(data)
    return results_problems(data)


@pytest.mark.parametrize("edit, fragment", [
    (lambda d: d.pop("score"), "missing 'score'"),
    (lambda d: d.pop("execution_time"), "missing 'execution_time'"),
    (lambda d: d.update(visibility="students"), "results.visibility must be one of"),
    (lambda d: d.update(tests=[]), "tests is empty"),
    (lambda d: d.update(score=13), "not the sum of the test scores"),
    (lambda d: d.update(score=True), "finite number"),
    (lambda d: d.update(scores=1), "unknown key 'scores'"),
    (lambda d: d["tests"][0].pop("status"), "missing 'status'"),
    (lambda d: d["tests"][0].update(status="partial"), "status must be one of"),
    (lambda d: d["tests"][1].update(status="passed"), "has status 'passed' with 2.5 / 10"),
    (lambda d: d["tests"][0].update(status="failed"), "has status 'failed' with 10 / 10"),
    (lambda d: d["tests"][0].update(number=1), "number must be a string"),
    (lambda d: d["tests"][0].update(score=float("nan")), "finite number"),
    (lambda d: d["tests"][1].update(score=11, status="failed"), "scores 11 of only 10"),
    (lambda d: d["tests"][1].update(number="1"), "numbers are not unique"),
    (lambda d: d["tests"][1].update(visibility="later"), "visibility must be one of"),
    (lambda d: d["tests"][1].update(output_format="pdf"), "output_format must be one of"),
])
def test_each_violation_is_named(edit, fragment):
    problems = broken(edit)
    assert any(fragment in p for p in problems), problems


def test_check_raises_a_value_error_listing_the_problems():
    data = valid()
    data["tests"][0]["status"] = "error"
    with pytest.raises(ValueError, match="tests\\[0\\].status"):
        check_results(data)
