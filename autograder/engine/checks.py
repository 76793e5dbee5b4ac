"""Checkers: compare what a student's function returned (plain data received from the sandbox)
with the reference's answer, in the style of numpy.testing and PrairieLearn.

Every checker is a frozen dataclass holding the desired value; calling it with the student's
value and a rendered call (`what`) gives a Verdict. Every failure message follows one template:

    `what` <problem> — 返回 <got>，期望 <desired>

and array mismatches add numpy.testing's summary in Chinese (不一致的元素, 最大绝对/相对误差,
the first few `[i]` with input, returned and expected values). Tolerances are relative to the
*desired* value: |actual − desired| <= atol + rtol·|desired|.

A check called with `reveal=False` (a case whose expected value is itself an answer key) says
what was returned and that it is wrong, but never the expected value nor anything it could be
recovered from (differences to it).

A student's integer may be far beyond float64 (the wire carries up to 4000 bits): it is a wrong
value, never an OverflowError in the grader.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from autograder.engine.cases import Verdict, render_number
from autograder.engine.feedback import code
from autograder.engine.vocabulary import tolerance_phrase
from autograder.sandbox.codec import Unsupported

SHOWN_MISMATCHES = 3
COMPACT_SIZE = 4  # arrays this small are shown whole instead of as a mismatch summary


WITHHELD = "与参考值不符（这个用例的期望值就是报告题的答案，所以不显示；请用显示了期望值的用例排查）"
TOO_LARGE = "超出 float64 范围的整数"


def problem(what: str, issue: str, got: str, desired: str, reveal: bool = True) -> Verdict:
    """The one failure template; without `reveal` the expected value is left out."""
    if not reveal:
        return Verdict(False, f"`{what}` {issue} — 返回 {got}，{WITHHELD}")
    return Verdict(False, f"`{what}` {issue} — 返回 {got}，期望 {desired}")


def describe_type(value: Any) -> str:
    if value is None:
        return "None（忘了 return？）"
    if isinstance(value, np.ndarray):
        return f"dtype 为 {value.dtype} 的数组"
    if isinstance(value, Unsupported):  # the sandbox could not send it back as plain data
        return f"无法作为普通数据传回的对象（{code(value.type_name)}）"   # the student's __qualname__
    return type(value).__name__


def is_real_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def finite_float(value: Any) -> float | None:
    """A student's real number as a finite float; None for anything else (not a number, a bool,
    inf or nan, or an int beyond float64's range: a wrong value, never an OverflowError)."""
    if not is_real_number(value):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def as_real_array(value: Any) -> np.ndarray | None:
    """The student's value as a float64 array, or None when it is not numeric data.

    Accepted: numpy arrays of integer or float dtype (float32 included: converting it to float64
    is exact, so a float32 result passes exactly when its values are right), numpy scalars,
    Python numbers, and (nested) lists/tuples of numbers. Raises OverflowError for a Python
    integer beyond float64's range.
    """
    if isinstance(value, np.ndarray):
        return value.astype(np.float64) if value.dtype.kind in "iuf" else None
    if is_real_number(value):
        return np.asarray(float(value))
    if isinstance(value, (list, tuple)):
        if not _all_numbers(value):
            return None
        try:
            return np.asarray(value, dtype=np.float64)
        except (ValueError, TypeError):  # ragged nesting
            return None  # (OverflowError passes through: a number, just a wrong one)
    return None


def _all_numbers(seq: list | tuple) -> bool:
    for v in seq:
        if isinstance(v, (list, tuple)):
            if not _all_numbers(v):
                return False
        elif not is_real_number(v):
            return False
    return True


def within(actual: np.ndarray, desired: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Element-wise acceptance, NaN never accepted, tolerance relative to the desired value."""
    with np.errstate(invalid="ignore", over="ignore"):
        if rtol == 0 and atol == 0:
            return actual == desired
        return np.abs(actual - desired) <= atol + rtol * np.abs(desired)


@dataclass(frozen=True)
class ArrayCheck:
    """An array result: same shape, and every element equal (or within tolerance) to the reference.

    `alternatives` are other results the reference itself gives when the input is nudged by a few
    ulps (see the assignment's boundary rule): an element is also accepted when it matches the
    same element of any alternative. `inputs` (same shape) are shown next to mismatches.
    """

    desired: np.ndarray
    rtol: float = 0.0
    atol: float = 0.0
    alternatives: tuple[np.ndarray, ...] = ()
    inputs: np.ndarray | None = None
    rule: str = ""  # Chinese description of the acceptance rule, when it is not plain tolerance

    def __call__(self, actual: Any, what: str, *, reveal: bool = True) -> Verdict:
        desired = np.asarray(self.desired, dtype=np.float64)
        rule = self.rule or tolerance_phrase(self.rtol, self.atol)
        try:
            got = as_real_array(actual)
        except OverflowError:
            return problem(what, f"的值不对（{rule}）", f"含有{TOO_LARGE}的数据", "有限的 float64 值", reveal)
        if got is None:
            return problem(what, "的返回类型不对", describe_type(actual), "数值数组（numpy 数组、list 或数字）")
        if got.shape != desired.shape:
            return problem(what, "的形状不对", str(got.shape), str(desired.shape))
        ok = within(got, desired, self.rtol, self.atol)
        for alternative in self.alternatives:
            ok |= within(got, np.asarray(alternative, dtype=np.float64), self.rtol, self.atol)
        if ok.all():
            return Verdict(True)
        if desired.size <= COMPACT_SIZE:  # a shrunk counterexample: one line says it all
            return problem(what, f"的值不对（{rule}）", render_array(got), render_array(desired), reveal)
        return Verdict(False, self._mismatch_report(what, got, desired, ok, reveal))

    def _mismatch_report(self, what: str, got: np.ndarray, desired: np.ndarray, ok: np.ndarray,
                         reveal: bool) -> str:
        bad = ~ok
        n_bad, n = int(bad.sum()), ok.size
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            abs_diff = np.abs(got - desired)[bad]
            rel_diff = abs_diff / np.abs(desired[bad])
        rule = self.rule or tolerance_phrase(self.rtol, self.atol)
        lines = [
            f"`{what}` 的值不对（{rule}）：",
            f"- 不一致的元素：{n_bad} / {n}（{100 * n_bad / n:.3g} %）",
        ]
        if reveal:  # differences would give the expected values away
            lines += [f"- 最大绝对误差：{_fmt_diff(abs_diff)}",
                      f"- 最大相对误差：{_fmt_diff(rel_diff)}（相对于期望值）"]
        else:
            lines.append(f"- {WITHHELD}")
        for index in list(zip(*np.nonzero(bad)))[:SHOWN_MISMATCHES]:
            where = ", ".join(str(int(i)) for i in index) if index else ""
            shown = f"- `[{where}]`：" if where else "- "
            if self.inputs is not None:
                shown += f"输入 {render_number(np.asarray(self.inputs)[index])} → "
            shown += f"返回 {render_number(got[index])}"
            shown += f"，期望 {render_number(desired[index])}" if reveal else ""
            lines.append(shown)
        if n_bad > SHOWN_MISMATCHES:
            lines.append(f"- ……（另有 {n_bad - SHOWN_MISMATCHES} 个不一致）")
        return "\n".join(lines)


def render_array(values: np.ndarray) -> str:
    if values.ndim == 0:
        return render_number(values[()])
    return "[" + ", ".join(render_array(v) for v in values) + "]"


def _fmt_diff(values: np.ndarray) -> str:
    if values.size == 0:
        return "-"
    finite = values[~np.isnan(values)]
    if finite.size < values.size:
        return "nan"
    return f"{float(finite.max()):.6g}"


@dataclass(frozen=True)
class ScalarCheck:
    """A single real number (int or float of any numpy flavour; never bool or a 1-element list)."""

    desired: float
    rtol: float = 0.0
    atol: float = 0.0

    def __call__(self, actual: Any, what: str, *, reveal: bool = True) -> Verdict:
        if isinstance(actual, np.ndarray) and actual.ndim == 0 and actual.dtype.kind in "iuf":
            actual = actual.item()
        if not is_real_number(actual):
            return problem(what, "的返回类型不对", describe_type(actual), "一个数（int 或 float）")
        rule = tolerance_phrase(self.rtol, self.atol)
        try:
            got = float(actual)
        except OverflowError:
            return problem(what, f"的值不对（{rule}）", render_number(actual), render_number(self.desired), reveal)
        if got == self.desired or abs(got - self.desired) <= self.atol + self.rtol * abs(self.desired):
            return Verdict(True)
        return problem(what, f"的值不对（{rule}）", render_number(got), render_number(self.desired), reveal)


@dataclass(frozen=True)
class MappingCheck:
    """A dict with exactly the reference's keys; each value a number within tolerance, or None."""

    desired: Mapping[str, float | None]
    rtol: float = 0.0
    atol: float = 0.0
    key_order: tuple[str, ...] = field(default=())

    def __call__(self, actual: Any, what: str, *, reveal: bool = True) -> Verdict:
        if not isinstance(actual, Mapping):
            return problem(what, "的返回类型不对", describe_type(actual), "dict")
        missing = [k for k in self.desired if k not in actual]
        extra = [k for k in actual if k not in self.desired]
        if missing or extra:
            # the keys are the student's: quoted as code
            issue = "的键不对" + (f"（缺少 {', '.join(map(repr, missing))}）" if missing else "") + (
                f"（多了 {', '.join(code(repr(k), 40) for k in extra[:10])}）" if extra else "")
            return problem(what, issue, code(repr(sorted(map(str, actual))), 300), repr(sorted(self.desired)))
        messages = []
        for key, want in self.desired.items():
            got = actual[key]
            sub = f"{what}[{key!r}]"
            if want is None:
                if got is not None:
                    messages.append(problem(sub, "应为 None（缺少公布的数字时）", render_number(got), "None").message)
                continue
            verdict = ScalarCheck(float(want), self.rtol, self.atol)(got, sub, reveal=reveal)
            if not verdict.ok:
                messages.append(verdict.message)
        if not messages:
            return Verdict(True)
        return Verdict(False, "\n".join(f"- {m}" for m in messages))
