"""Grade one function item: run its suite through StudentCode and weigh the verdicts.

Partial credit: score = points × (weight of passed tests) / (weight of all tests), rounded to
0.01; the weights are the default weights of the groups the suite's tests declare, unless a test
sets its own.
"Must raise" cases count only once the function gets at least one value test right: a stub that
raises ValueError for every input earns nothing.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

from autograder.engine.cases import Raises, Suite, TestRecord, Verdict
from autograder.engine.feedback import function_feedback, truncate_output
from autograder.engine.invoke import StudentCode, import_failure_text, judge
from autograder.engine.properties import run_property
from autograder.engine.registry import Item
from autograder.engine.results import ItemResult


RAISES_WITHOUT_VALUES = ("这一项没有任何返回值的测试通过，所以「必须抛出异常」的用例暂不计分："
                         "对每个输入都抛出异常的实现不能靠它们得分。先让函数返回正确的值。")
RAISE_CASE_NOT_COUNTED = "抛出了要求的异常，但这一项没有任何返回值的测试通过，所以本用例暂不计分（见上面的注意）。"


def discount_raises(records: Sequence[TestRecord]) -> list[TestRecord]:
    """Passed "must raise" cases become failures when no value test passed (and there are some)."""
    value_tests = [r for r in records if not r.expects_raise]
    if not value_tests or any(r.verdict.ok for r in value_tests):
        return list(records)
    return [replace(r, verdict=Verdict(False, RAISE_CASE_NOT_COUNTED)) if r.expects_raise and r.verdict.ok else r
            for r in records]


def grade_function(item: Item, suite: Suite, code: StudentCode) -> ItemResult:
    if not code.loaded:
        message = import_failure_text(code.import_outcome, code.module) if code.import_outcome else (
            f"没有找到 `{code.module}.py`，无法测试 `{item.id}`。")
        output = code.import_outcome.output if code.import_outcome else ""
        return ItemResult(item.id, item.kind, 0.0, item.points, "error",
                          function_feedback(suite, [], message, output), truncate_output(output),
                          item.title)

    replies = code.call_many([case.call for case in suite.cases])
    output = "".join(reply.outcome.output for reply in replies if reply.outcome is not None)
    if replies and all(r.outcome is not None and r.outcome.exc_type == "NotImplementedError" for r in replies):
        message = (f"`{item.id}` 还没有实现（函数体仍然是 `raise NotImplementedError`），"
                   f"{len(suite.cases) + len(suite.properties)} 项测试都没有通过。")
        return ItemResult(item.id, item.kind, 0.0, item.points, "failed",
                          function_feedback(suite, [], message, output), truncate_output(output), item.title)
    records = [TestRecord(case.label, case.group, case.points_weight,
                          judge(reply, case.expect, reveal=case.reveal_expected), isinstance(case.expect, Raises))
               for case, reply in zip(suite.cases, replies)]
    for prop in suite.properties:
        result = run_property(prop, code)
        label = f"{prop.label}（{result.examples} 个例子）"
        records.append(TestRecord(label, prop.group, prop.points_weight, Verdict(result.passed, result.message)))
        output += result.output
    discounted = discount_raises(records)
    note = RAISES_WITHOUT_VALUES if discounted != records else ""
    records = discounted

    total = math.fsum(r.weight for r in records)
    earned = math.fsum(r.weight for r in records if r.verdict.ok)
    score = round(item.points * earned / total, 2) if total else 0.0
    status = "passed" if earned == total else "failed" if earned == 0 else "partial"
    if status == "partial" and score == item.points:  # rounding must not hide a failed test
        score = round(item.points - 0.01, 2)
    return ItemResult(item.id, item.kind, score, item.points, status,
                      function_feedback(suite, records, "", output, note), truncate_output(output), item.title)
