"""Grading one item: "must raise" cases need a value test passed, and nothing a submission
returns can stop the rest of the submission from being graded."""

from __future__ import annotations

import pytest

from autograder.engine.cases import Standard, TestRecord, Verdict
from autograder.engine.function_items import RAISE_CASE_NOT_COUNTED, discount_raises
from autograder.engine.guard import guarded
from autograder.engine.registry import Item
from autograder.engine.report_items import grade_report
from autograder.engine.results import ItemResult
from autograder.sandbox import NotebookOutcome, SandboxError

PASS, FAIL = Verdict(True), Verdict(False, "`f(1)` 的值不对")


def record(ok: bool, raises: bool) -> TestRecord:
    group = Standard.BAD_INPUT if raises else Standard.DATA
    return TestRecord("case", group, group.weight, PASS if ok else FAIL, raises)


def test_raise_cases_count_only_after_a_value_test_passes():
    stub = [record(False, False), record(False, False), record(True, True), record(True, True)]
    discounted = discount_raises(stub)
    assert not any(r.verdict.ok for r in discounted)
    assert [r.verdict.message for r in discounted[2:]] == [RAISE_CASE_NOT_COUNTED] * 2
    honest = [record(True, False), record(False, False), record(True, True)]
    assert discount_raises(honest) == honest
    only_raises = [record(True, True)]  # a suite of raise cases alone keeps them
    assert discount_raises(only_raises) == only_raises


def test_cases_answered_by_the_input_itself_count_only_after_another_value_test_passes():
    from autograder.engine.function_items import INPUT_CASE_NOT_COUNTED

    def given_back(ok: bool) -> TestRecord:
        return TestRecord("case", Standard.BOUNDARY, 2.0, PASS if ok else FAIL, False, True)

    stub = [given_back(True), record(False, False), record(True, True)]
    discounted = discount_raises(stub)
    assert not any(r.verdict.ok for r in discounted)
    assert [r.verdict.message for r in discounted] == [INPUT_CASE_NOT_COUNTED, FAIL.message, RAISE_CASE_NOT_COUNTED]
    working = [given_back(True), record(True, False), record(True, True)]
    assert discount_raises(working) == working


def item(kind: str = "number") -> Item:
    return Item(id="q01_compute_headline", kind=kind, points=2, title="t", rtol=0.02)


def test_an_unexpected_exception_costs_only_its_item():
    def explode() -> ItemResult:
        raise OverflowError("int too large to convert to float")

    result = guarded(item(), explode)
    assert (result.status, result.score, result.max_score) == ("error", 0.0, 2)
    assert "评分程序无法比较这一项的返回值" in result.feedback_md and "OverflowError" in result.feedback_md


def test_a_broken_sandbox_still_stops_grading():
    def broken() -> ItemResult:
        raise SandboxError("the sandbox worker did not start")

    with pytest.raises(SandboxError):
        guarded(item(), broken)


def test_a_huge_integer_answer_is_a_wrong_answer():
    notebook = NotebookOutcome("ok", {"q01_compute_headline": 10**400}, (), "")
    [result] = grade_report([item()], {"q01_compute_headline": 7.5}, notebook, "handout.ipynb")
    assert (result.status, result.score) == ("failed", 0.0)
    assert "不是有限的 float 数" in result.feedback_md


def test_a_submission_returning_huge_integers_is_graded_item_by_item(tmp_path):
    """End to end: ridge_point returns 2**3000 and the notebook answers 10**400; the grader writes
    a result in which exactly those items lose their points."""
    import nbformat

    from autograder.build import write_reference_submission
    from autograder.engine import grade_submission

    reference, student = tmp_path / "reference", tmp_path / "bigint"
    write_reference_submission("lec01_codesign", reference)
    student.mkdir()
    source = (reference / "codesign.py").read_text("utf-8")
    (student / "codesign.py").write_text(source + "\n\ndef ridge_point(chip, precision):\n    return 2**3000\n", "utf-8")
    notebook = nbformat.read(reference / "handout.ipynb", as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell("q01_compute_headline = 10**400"))
    nbformat.write(notebook, student / "handout.ipynb")

    result = grade_submission("lec01_codesign", student)
    not_full = {i.id: i.status for i in result.items if i.score < i.max_score and i.status != "manual"}
    # trend_row uses ridge_point, and the notebook's ridge and decode answers (q04–q06b, q09–q09b,
    # q09e–q09g, and q09j on q09e's batch) use it
    assert set(not_full) <= {"ridge_point", "trend_row", "q01_compute_headline", "q04_ridge_same_precision",
                             "q05_ridge_mixed_precision", "q06b_wall_for_nvfp4_kernel", "q09_decode_batch",
                             "q09b_decode_batch_w4a8", "q09e_ridge_share_with_kv", "q09j_chunked_prefill_tokens",
                             "q09f_w4a4_context_limit", "q09g_decode_precision"}, not_full
    assert result.item("ridge_point").score == 0 and result.item("q01_compute_headline").score == 0
    assert "超出 float64 的范围" in result.item("ridge_point").feedback_md


def test_a_failing_cell_is_named_by_its_first_line():
    """Jupyter shows no cell numbers, so the feedback quotes the cell that failed."""
    notebook = NotebookOutcome("ok", {}, ((7, "ZeroDivisionError", "division by zero"),), "")
    sources = {7: "\n# 作答\nq01_compute_headline = 1 / 0\n"}
    [result] = grade_report([item()], {"q01_compute_headline": 7.5}, notebook, "handout.ipynb",
                            cell_sources=sources)
    assert "以 `# 作答` 开头的单元格 `ZeroDivisionError: division by zero`" in result.feedback_md
    [unknown] = grade_report([item()], {"q01_compute_headline": 7.5}, notebook, "handout.ipynb")
    assert "第 8 个单元格" in unknown.feedback_md


# --- keys that depend on the student's machine (autograder.engine.answer_checks) ---------------
def _measured_items():
    return [Item(id="t_exp", kind="number", points=1, rtol=0.02), Item(id="gflops", kind="number", points=1, rtol=0.02),
            Item(id="ratio", kind="number", points=2, rtol=0.02)]


def _measured_key():
    from autograder.engine.answer_checks import DerivedKey, MeasuredKey

    return {"t_exp": MeasuredKey(0.01, 1000.0), "gflops": MeasuredKey(0.1, 1e5),
            "ratio": DerivedKey(("t_exp", "gflops"), lambda ns, gflops: 100 * ns / (512 / gflops))}


@pytest.mark.parametrize("t_exp, gflops", [(0.6, 40.0), (3.0, 900.0), (0.05, 0.5)])
def test_two_honest_machines_both_pass_a_measurement_table(t_exp, gflops):
    """Whatever machine measured them, timings in range and a ratio that follows from them pass."""
    answers = {"t_exp": t_exp, "gflops": gflops, "ratio": 100 * t_exp * gflops / 512}
    results = grade_report(_measured_items(), _measured_key(), NotebookOutcome("ok", answers, (), ""), "h.ipynb")
    assert [r.status for r in results] == ["passed"] * 3
    # the words do not depend on the run: regrading the same file gives the same feedback
    again = {"t_exp": 0.7, "gflops": 41.0, "ratio": 100 * 0.7 * 41.0 / 512}
    rerun = grade_report(_measured_items(), _measured_key(), NotebookOutcome("ok", again, (), ""), "h.ipynb")
    assert [r.feedback_md for r in rerun] == [r.feedback_md for r in results]


def test_a_made_up_table_whose_ratio_does_not_follow_from_its_timings_fails():
    answers = {"t_exp": 0.6, "gflops": 40.0, "ratio": 91.0}  # B300's ratio typed in, not this machine's
    results = grade_report(_measured_items(), _measured_key(), NotebookOutcome("ok", answers, (), ""), "h.ipynb")
    assert [r.status for r in results] == ["passed", "passed", "failed"]
    assert "对不上" in results[2].feedback_md and "4.6875" not in results[2].feedback_md  # the key is not told


def test_timings_outside_the_plausible_range_fail_and_so_does_a_ratio_built_on_a_missing_timing():
    answers = {"t_exp": 5e6, "ratio": 3.0}  # nanoseconds confused with something else; no GFLOP/s at all
    results = grade_report(_measured_items(), _measured_key(), NotebookOutcome("ok", answers, (), ""), "h.ipynb")
    assert [r.status for r in results] == ["failed", "failed", "failed"]
    assert "不在合理范围内" in results[0].feedback_md and "`gflops`" in results[2].feedback_md


@pytest.mark.parametrize("huge", [10**400, -10**400], ids=["10**400", "-10**400"])
def test_a_huge_timing_fails_the_table_without_an_error(huge):
    """Is a timing of 10**400 a wrong answer for its item and for the ratio derived from it (0
    points, the usual feedback), not a grader error that asks for a TA's review?"""
    answers = {"t_exp": huge, "gflops": 40.0, "ratio": 3.0}
    results = grade_report(_measured_items(), _measured_key(), NotebookOutcome("ok", answers, (), ""), "h.ipynb")
    assert [r.status for r in results] == ["failed", "passed", "failed"]
    assert "`t_exp`" in results[2].feedback_md and "无法评分" not in results[2].feedback_md


def test_a_cell_index_no_notebook_has_is_a_malformed_reply():
    """The notebook's reply is written in the student's process (its cell errors are a list
    student code can reach). A cell error at index 10**4300 - 1, the longest int JSON reads
    back, made the feedback's "第 N 个单元格" an int past Python's 4300-digit limit: a ValueError
    in the grader on every run, the submission never graded. Such a reply is malformed (the
    sandbox makes it a crashed notebook, the student's)."""
    from autograder.sandbox.codec import WireError
    from autograder.sandbox.messages import notebook_outcome

    for index in (int("9" * 4300), -1):
        header = {"id": 7, "status": "ok", "variables": {}, "cell_errors": [[index, "ValueError", "x"]],
                  "message": ""}
        with pytest.raises(WireError):
            notebook_outcome(header, b"", 7, [], "", 0.0)
    honest = {"id": 7, "status": "ok", "variables": {}, "cell_errors": [[3, "ValueError", "x"]], "message": ""}
    notebook = notebook_outcome(honest, b"", 7, [], "", 0.0)
    [result] = grade_report([item()], {"q01_compute_headline": 7.5}, notebook, "handout.ipynb")
    assert "第 4 个单元格" in result.feedback_md
