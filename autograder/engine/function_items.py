"""Grade one function item: run its suite through StudentCode and weigh the verdicts.

Partial credit: score = points × (weight of passed tests) / (weight of all tests), rounded to
0.01; the weights are the default weights of the groups the suite's tests declare, unless a test
sets its own.
Cases a stub passes count only once the function gets a value right that is not its own input:
the "must raise" cases, and those whose answer is the call's input as given (every representable
value, an all-zero tensor, an empty array). A stub that raises ValueError for every input, hands
its input back, or does both, earns nothing.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

from autograder.engine.cases import Case, Raises, Returns, Suite, TestRecord, Verdict
from autograder.engine.feedback import function_feedback, truncate_output
from autograder.engine.invoke import StudentCode, import_failure_text, judge
from autograder.engine.properties import run_property
from autograder.engine.registry import Item
from autograder.engine.results import ItemResult


KEPT_OUTPUT_CHARS = 16_000  # student output kept per item while grading (feedback shows less)
RAISES_WITHOUT_VALUES = ("这一项除了「原样返回输入就对」的用例，没有任何返回值的测试通过，所以「必须抛出异常」的用例"
                         "和「原样返回输入」的用例暂不计分：对每个输入都抛出异常、或者把输入原样返回的实现不能靠它们得分。"
                         "先让函数返回正确的值。")
RAISE_CASE_NOT_COUNTED = "抛出了要求的异常，但这一项没有任何返回值的测试通过，所以本用例暂不计分（见上面的注意）。"
INPUT_CASE_NOT_COUNTED = "这个用例的答案就是输入本身；这一项没有别的返回值的测试通过，所以本用例暂不计分（见上面的注意）。"


def discount_raises(records: Sequence[TestRecord]) -> list[TestRecord]:
    """Passed cases a stub passes ("must raise", or answered by the input itself) become failures
    when no other value test passed (and there are some)."""
    value_tests = [r for r in records if not (r.expects_raise or r.input_is_answer)]
    if not value_tests or any(r.verdict.ok for r in value_tests):
        return list(records)
    return [replace(r, verdict=Verdict(False, RAISE_CASE_NOT_COUNTED if r.expects_raise else INPUT_CASE_NOT_COUNTED))
            if (r.expects_raise or r.input_is_answer) and r.verdict.ok else r for r in records]


_INPUT_IS_ANSWER: dict[int, tuple[Suite, tuple[bool, ...]]] = {}


def input_is_answer(suite: Suite) -> tuple[bool, ...]:
    """Per case of `suite`: is the call's first argument, returned as given, a right answer? Judged
    once per process in the trusted parent (the suite is kept with its flags, so its id stays its own)."""
    kept = _INPUT_IS_ANSWER.get(id(suite))
    if kept is None or kept[0] is not suite:
        kept = suite, tuple(_answered_by_input(case) for case in suite.cases)
        _INPUT_IS_ANSWER[id(suite)] = kept
    return kept[1]


def _answered_by_input(case: Case) -> bool:
    if not isinstance(case.expect, Returns) or not case.call.args:
        return False
    return case.expect.check(case.call.args[0], case.call.function, reveal=False).ok


class _Output:
    """The student output of one item: the first KEPT_OUTPUT_CHARS characters, and a count of
    the rest (a flood costs a bounded amount of memory, however many calls print)."""

    def __init__(self):
        self._parts: list[str] = []
        self._kept = 0
        self._dropped = 0

    def add(self, text: str) -> None:
        room = KEPT_OUTPUT_CHARS - self._kept
        if len(text) > room:
            self._dropped += len(text) - max(room, 0)
            text = text[:max(room, 0)]
        if text:
            self._parts.append(text)
            self._kept += len(text)

    def text(self) -> str:
        joined = "".join(self._parts)
        return joined + (f"\n[… {self._dropped} characters dropped]" if self._dropped else "")


def grade_function(item: Item, suite: Suite, code: StudentCode) -> ItemResult:
    if not code.loaded:
        message = import_failure_text(code.import_outcome, code.module) if code.import_outcome else (
            f"没有找到 `{code.module}.py`，无法测试 `{item.id}`。")
        output = code.import_outcome.output if code.import_outcome else ""
        return ItemResult(item.id, item.kind, 0.0, item.points, "error",
                          function_feedback(suite, [], message, output), truncate_output(output),
                          item.title)

    # Each reply is judged as it arrives and dropped: only verdicts and capped output stay.
    output = _Output()
    records = []
    unimplemented = bool(suite.cases)
    replies = code.stream([case.call for case in suite.cases], [case.expect for case in suite.cases])
    for case, reply, by_input in zip(suite.cases, replies, input_is_answer(suite)):
        outcome = reply.outcome
        if outcome is not None:
            output.add(outcome.output)
        unimplemented = unimplemented and outcome is not None and outcome.exc_type == "NotImplementedError"
        records.append(TestRecord(case.label, case.group, case.points_weight,
                                  judge(reply, case.expect, reveal=case.reveal_expected), isinstance(case.expect, Raises),
                                  by_input))
        del reply, outcome
    if unimplemented:
        message = (f"`{item.id}` 还没有实现（函数体仍然是 `raise NotImplementedError`），"
                   f"{len(suite.cases) + len(suite.properties)} 项测试都没有通过。")
        text = output.text()
        return ItemResult(item.id, item.kind, 0.0, item.points, "failed",
                          function_feedback(suite, [], message, text), truncate_output(text), item.title)
    for prop in suite.properties:
        result = run_property(prop, code)
        label = f"{prop.label}（{result.examples} 个例子）"
        records.append(TestRecord(label, prop.group, prop.points_weight, Verdict(result.passed, result.message)))
        output.add(result.output)
    output = output.text()
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
