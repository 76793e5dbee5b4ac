"""Hypothesis properties against a sandboxed student: generation and shrinking in the parent.

1. The examples of a property are drawn once per process with hypothesis (derandomized, no
   database), so every submission sees the same examples, and all of them go to the sandbox in
   one batch.
2. Only if some example fails does hypothesis search again, now calling the student for each
   example it tries, and shrink the failure to a minimal counterexample, e.g.
   `to_e2m1(np.array([0.75]))` 返回 [0.5]，期望 [1.0]. Verdicts of the batch are reused, every
   evaluation is memoized (so shrinking is deterministic), and shrinking makes at most
   SHRINK_CALLS new calls; examples it cannot afford count as passing, which only stops it early.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, settings

from autograder.engine.cases import Call, Property, Verdict, render_arg, render_number
from autograder.engine.invoke import Reply, StudentCode, judge

SHRINK_CALLS = 150
SHOWN_VALUES = 16


@dataclass(frozen=True)
class PropertyResult:
    passed: bool
    examples: int
    message: str = ""  # Chinese Markdown: the minimal counterexample
    output: str = ""


def _settings(max_examples: int, phases: tuple) -> settings:
    return settings(derandomize=True, database=None, max_examples=max_examples, deadline=None,
                    phases=phases, suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
                    print_blob=False, report_multiple_bugs=False)


_drawn: dict[tuple[str, str], list[tuple]] = {}
_drawn_lock = threading.Lock()


def examples_of(prop: Property) -> list[tuple]:
    """The property's examples: the same list in every process and every run (cached)."""
    key = (prop.function, prop.label)
    with _drawn_lock:
        if key not in _drawn:
            seen: dict[bytes, tuple] = {}
            _hypothesis(prop, (Phase.generate,), lambda args: seen.setdefault(example_key(args), args))
            _drawn[key] = list(seen.values())
        return _drawn[key]


def run_property(prop: Property, code: StudentCode) -> PropertyResult:
    examples = examples_of(prop)
    expectations = [prop.expect(args) for args in examples]
    replies = code.call_many([Call(prop.function, args) for args in examples], expectations)
    verdicts = [judge(reply, expect) for reply, expect in zip(replies, expectations)]
    output = "".join(r.outcome.output for r in replies if r.outcome is not None)
    if all(v.ok for v in verdicts):
        return PropertyResult(True, len(examples), output=output)

    memo = {example_key(args): (reply, verdict) for args, reply, verdict in zip(examples, replies, verdicts)
            if reply.outcome is not None}
    failing = [(args, reply, verdict) for args, reply, verdict in zip(examples, replies, verdicts)
               if not verdict.ok]
    minimal = _shrink(prop, code, memo) or failing[0]
    return PropertyResult(False, len(examples), _counterexample_text(prop, *minimal), output)


class _Counterexample(Exception):
    def __init__(self, args: tuple, reply: Reply, verdict: Verdict):
        super().__init__("counterexample")
        self.found = (args, reply, verdict)


def _shrink(prop: Property, code: StudentCode, memo: dict) -> tuple | None:
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
            memo[key] = (reply, judge(reply, expect))
        reply, verdict = memo[key]
        if not verdict.ok:
            raise _Counterexample(args, reply, verdict)

    try:
        _hypothesis(prop, (Phase.generate, Phase.shrink), evaluate)
    except _Counterexample as found:
        return found.found
    except Exception:  # noqa: BLE001 - a hypothesis error (flaky, health check): use the batch's failure
        return None
    return None


def _hypothesis(prop: Property, phases: tuple, on_example) -> None:
    """Run hypothesis over the property's strategy. Drawing and shrinking go through this one
    function, so both see the same derandomized example sequence (the seed is a digest of the
    function's source plus the property's name, stable across processes and runs)."""
    def property_example(args):
        on_example(args)

    property_example._hypothesis_internal_add_digest = f"{prop.function}:{prop.label}".encode()
    _settings(prop.max_examples, phases)(given(prop.strategy)(property_example))()


def example_key(args: Any) -> bytes:
    """A stable identity for an example (arrays by dtype, shape and bytes)."""
    parts = []
    for a in args if isinstance(args, tuple) else (args,):
        if isinstance(a, np.ndarray):
            parts.append(f"nd{a.dtype.str}{a.shape}".encode() + np.ascontiguousarray(a).tobytes())
        else:
            parts.append(repr(getattr(a, "spec", a)).encode())
    return b"\x00".join(parts)


def _counterexample_text(prop: Property, args: tuple, reply: Reply, verdict: Verdict) -> str:
    hint = prop.hint(args) if prop.hint else ""
    # The hint belongs to the verdict's first line: after a traceback block it would break the fence.
    first, newline, rest = verdict.message.partition("\n")
    lines = [f"最小反例（hypothesis 自动缩小）：{first}{hint}{newline}{rest}"]
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
