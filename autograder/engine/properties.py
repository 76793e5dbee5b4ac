"""Hypothesis properties against a sandboxed student: fixed examples decide, shrinking explains.

1. The score of a property is its verdict on its fixed examples: read from the assignment's
   property_examples.json (engine/property_examples.py), the same in every command and process,
   and sent to the sandbox in one batch. Each reply is judged as it comes and dropped.
2. Only if some example fails does hypothesis search again (seeded, public API only), calling the
   student for each example it tries, to shrink the failure to a minimal counterexample, e.g.
   `to_e2m1(np.array([0.75]))` 返回 [0.5]，期望 [1.0]. It sees the batch's verdicts (a memo of
   verdicts, never replies), makes at most SHRINK_CALLS new calls (a budget in calls, not time),
   and counts examples it cannot afford as passing, which only stops it early. Whatever it finds
   changes the message, never the verdict; if it finds nothing the first failing fixed example
   is shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import Phase

from autograder.engine.cases import Call, Property, Verdict, render_arg, render_number
from autograder.engine.invoke import StudentCode, judge
from autograder.engine.property_run import run_hypothesis

SHRINK_CALLS = 150
SHOWN_VALUES = 16


@dataclass(frozen=True)
class PropertyResult:
    passed: bool
    examples: int
    message: str = ""  # Chinese Markdown: the minimal counterexample
    output: str = ""


def examples_of(prop: Property) -> tuple[tuple, ...]:
    """The property's fixed examples (attached by load_assignment from property_examples.json)."""
    if prop.examples is None:
        raise ValueError(f"the {prop.function} property {prop.label!r} has no fixed examples: "
                         f"take the suites from autograder.engine.assignment.load_assignment")
    return prop.examples


def run_property(prop: Property, code: StudentCode) -> PropertyResult:
    examples = examples_of(prop)
    expectations = [prop.expect(args) for args in examples]   # each bounds its reply's size
    replies = code.stream([Call(prop.function, args) for args in examples], expectations)
    memo: dict[bytes, Verdict] = {}  # verdicts of the examples the student was really called on
    first_failure: tuple[tuple, Verdict] | None = None
    output = []
    for args, expect, reply in zip(examples, expectations, replies):  # judged as it arrives, dropped
        verdict = judge(reply, expect)
        if reply.outcome is not None:
            output.append(reply.outcome.output)
            memo[example_key(args)] = verdict
        if not verdict.ok and first_failure is None:
            first_failure = (args, verdict)
    reply = None  # the last reply too: only verdicts stay while shrinking
    if first_failure is None:
        return PropertyResult(True, len(examples), output="".join(output))
    minimal = _shrink(prop, code, memo)
    text = _counterexample_text(prop, *minimal) if minimal else _counterexample_text(prop, *first_failure,
                                                                                      shrunk=False)
    return PropertyResult(False, len(examples), text, "".join(output))


class _Counterexample(Exception):
    def __init__(self, args: tuple, verdict: Verdict):
        super().__init__("counterexample")
        self.found = (args, verdict)


def _shrink(prop: Property, code: StudentCode, memo: dict[bytes, Verdict]) -> tuple | None:
    """Search and shrink with hypothesis, calling the student for each new example it tries."""
    budget = [SHRINK_CALLS]

    def evaluate(args):
        key = example_key(args)
        if key not in memo:
            if budget[0] <= 0:
                return
            budget[0] -= 1
            expect = prop.expect(args)
            reply = code.call(Call(prop.function, args), expect)
            if reply.outcome is None:  # the function is no longer called: cannot learn more
                budget[0] = 0
                return
            memo[key] = judge(reply, expect)
        verdict = memo[key]
        if not verdict.ok:
            raise _Counterexample(args, verdict)

    try:
        run_hypothesis(prop, (Phase.generate, Phase.shrink), evaluate)
    except _Counterexample as found:
        return found.found
    except Exception:  # noqa: BLE001 - a hypothesis error (flaky, health check): show a fixed failure
        return None
    return None


def example_key(args: Any) -> bytes:
    """A stable identity for an example (arrays by dtype, shape and bytes)."""
    parts = []
    for a in args if isinstance(args, tuple) else (args,):
        if isinstance(a, np.ndarray):
            parts.append(f"nd{a.dtype.str}{a.shape}".encode() + np.ascontiguousarray(a).tobytes())
        else:
            parts.append(repr(getattr(a, "spec", a)).encode())
    return b"\x00".join(parts)


def _counterexample_text(prop: Property, args: tuple, verdict: Verdict, shrunk: bool = True) -> str:
    hint = prop.hint(args) if prop.hint else ""
    # The hint belongs to the verdict's first line: after a traceback block it would break the fence.
    first, newline, rest = verdict.message.partition("\n")
    title = "最小反例（hypothesis 自动缩小）" if shrunk else "反例"
    lines = [f"{title}：{first}{hint}{newline}{rest}"]
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray) and render_arg(a) == "x":
            lines.append(f"- 其中 x = {_describe_array(a)}")
    return "\n".join(lines)


def _describe_array(a: np.ndarray) -> str:
    """A long but mostly-zero shrunk array, compactly: its shape and non-zero elements."""
    flat = a.ravel()
    nonzero = np.flatnonzero(flat)
    if nonzero.size <= SHOWN_VALUES:
        shown = "，".join(f"x[{i}] = {render_number(flat[i])}" for i in nonzero)
        return f"形状 {a.shape}，" + (f"除 {shown} 外都是 0" if nonzero.size else "全是 0")
    values = ", ".join(render_number(v) for v in flat[:SHOWN_VALUES])
    return f"形状 {a.shape}，前 {SHOWN_VALUES} 个值 [{values}, …]"
