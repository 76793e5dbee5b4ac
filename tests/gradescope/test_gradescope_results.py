"""Is the engine's result turned into what Gradescope should show, and does failure give no credit?"""

from autograder.gradescope.results import FAILED_MESSAGE, FALLBACK_NOTE, failure_results, final_results
from autograder.gradescope.schema import results_problems


def engine_result(isolation: str) -> dict:
    return {
        "score": 3.0, "execution_time": 1.0, "output": "自动评分 3 / 13 分。", "output_format": "md",
        "visibility": "visible",
        "tests": [
            {"name": "flops_per_exp", "number": "1", "score": 3.0, "max_score": 3.0, "status": "passed",
             "output": "", "output_format": "md", "visibility": "visible"},
            {"name": "to_e2m1", "number": "2", "score": 0.0, "max_score": 10.0, "status": "failed",
             "output": "", "output_format": "md", "visibility": "visible"},
        ],
        "extra_data": {"submission": {"isolation": isolation}},
    }


def test_hidden_test_details_wait_for_publication():
    results = final_results(engine_result("bubblewrap"), visibility="after_published")
    assert results["visibility"] == "after_published"
    assert {t["visibility"] for t in results["tests"]} == {"after_published"}
    assert results["stdout_visibility"] == "hidden"
    assert results_problems(results) == []


def test_the_rlimits_fallback_is_announced_and_bubblewrap_is_not():
    assert FALLBACK_NOTE in final_results(engine_result("rlimits"), visibility="visible")["output"]
    quiet = final_results(engine_result("bubblewrap"), visibility="visible")["output"]
    assert "rlimits" not in quiet and quiet == "自动评分 3 / 13 分。"


def test_an_unknown_isolation_is_not_passed_over_silently():
    assert "'chroot'" in final_results(engine_result("chroot"), visibility="visible")["output"]


def test_missing_files_are_named():
    output = final_results(engine_result("bubblewrap"), visibility="visible", missing=("handout.ipynb",))["output"]
    assert "handout.ipynb" in output


def test_a_failed_grading_gives_no_credit_visibly():
    results = failure_results("worker crashed", max_score=91.0)
    assert results_problems(results) == []
    assert results["score"] == 0 and results["tests"][0]["max_score"] == 91.0
    assert results["visibility"] == "visible" and results["output"] == FAILED_MESSAGE
    assert results["extra_data"]["grading_failed"] == "worker crashed"   # staff only
