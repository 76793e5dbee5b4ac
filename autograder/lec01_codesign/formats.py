"""Hidden tests of `round_e4m3` and `to_e2m1`: exact, element by element, against the reference."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from autograder.engine.cases import Call, Case, Property, Raises, Returns, Standard, Suite, Verdict
from autograder.engine.checks import ArrayCheck
from autograder.lec01_codesign import data

N = 4096


@dataclass(frozen=True)
class Format:
    function: str
    values: np.ndarray  # non-negative representable values
    maximum: float
    next_above_max: float  # the value the format would have next (the saturation tie is halfway)
    summary: str

    @property
    def ties(self) -> np.ndarray:
        return data.midpoints(self.values, self.next_above_max)


E4M3 = Format("round_e4m3", data.e4m3_values(), data.E4M3_MAX, 480.0,
              "任意形状、任意符号的数组舍入到 FP8 E4M3：就近舍入、平局取偶数（ties to even）、"
              "次正规数、|x| > 448 饱和到 ±448、负数舍入成 0 时得到 −0.0、返回同形状的 float64，以及 NaN/inf 报 ValueError。")
E2M1 = Format("to_e2m1", data.e2m1_values(), data.E2M1_MAX, 8.0,
              "任意形状、任意符号的数组舍入到 FP4 E2M1：就近舍入、平局取偶数（0.75 → 1，1.75 → 2，5 → 4）、"
              "|y| > 6 饱和到 ±6、负数舍入成 0 时得到 −0.0、返回同形状的 float64，以及 NaN/inf 报 ValueError。")


@dataclass(frozen=True)
class SignedArrayCheck(ArrayCheck):
    """ArrayCheck (exact) that also checks the sign of zero where the docstring defines it: a
    non-zero input that rounds to 0 keeps its sign (−0.2 → −0.0, as the hardware's cvt does).
    An input that is itself ±0 may come back as either zero."""

    def __call__(self, actual, what: str, *, reveal: bool = True):
        verdict = super().__call__(actual, what, reveal=reveal)
        if not verdict.ok or self.inputs is None:
            return verdict
        got = np.asarray(actual, dtype=np.float64)
        inputs = np.broadcast_to(np.asarray(self.inputs, dtype=np.float64), got.shape)
        wrong = (got == 0) & (inputs != 0) & (np.signbit(got) != np.signbit(inputs))
        if not wrong.any():
            return verdict
        index = tuple(int(i) for i in np.argwhere(wrong)[0])
        where = f"`[{', '.join(map(str, index))}]` " if index else ""
        x, z = float(inputs[index]), float(got[index])
        return Verdict(False, f"`{what}` 的零的符号不对：{where}输入 {x!r} 舍入成 0，返回 {z!r}，"
                              f"期望 {float(np.copysign(0.0, x))!r}（共 {int(wrong.sum())} 处）。"
                              "符号总是保留：负数舍入成 0 得到负零 −0.0，正数得到 +0.0（np.copysign 可以做到）。")


def exact(reference, x) -> Returns:
    x_arr = np.asarray(x, dtype=np.float64)
    return Returns(ArrayCheck(reference(x), inputs=x_arr))


def signed_zeros(fmt: Format) -> np.ndarray:
    """Values of both signs that round to zero (below half the smallest step, and the tie at half
    of it), and their neighbours that do not: the sign of the zero is what is graded here."""
    smallest = fmt.values[1]
    small = np.array([smallest / 2, smallest / 3, smallest / 1e3, smallest * 1e-30, smallest / 2 * (1 - 2.0 ** -52)])
    return np.concatenate([-small, small, [-smallest, smallest, -0.0, 0.0]])


def suite(reference, fmt: Format) -> Suite:
    """Cases and properties for one rounding function; `reference` is the solution's function."""
    f = fmt.function
    if fmt is E4M3:
        distributions = [
            ("讲义的权重：Student-t（df = 5）× 0.02（大多落在次正规数附近）", data.student_t(N, 101, 0.02)),
            ("Student-t（df = 5）× 20", data.student_t(N, 102, 20.0)),
            ("高斯分布 N(0, 100²)", data.gaussian(N, 103, 100.0)),
            ("宽均匀分布 U(−700, 700)（含饱和）", data.uniform(N, 104, -700.0, 700.0)),
            ("次正规数范围：|x| 在 2^-13 … 2^-5 之间（对数均匀，带符号）", data.log_uniform_signed(N, 105, -13, -5)),
        ]
    else:
        distributions = [
            ("Student-t（df = 5）× 1（缩放后的权重）", data.student_t(N, 201, 1.0)),
            ("高斯分布 N(0, 2²)", data.gaussian(N, 202, 2.0)),
            ("宽均匀分布 U(−10, 10)（含饱和）", data.uniform(N, 203, -10.0, 10.0)),
            ("小数值：|y| 在 2^-4 … 2^1 之间（对数均匀，带符号）", data.log_uniform_signed(N, 204, -4, 1)),
        ]
    cases = [Case(f"{label}，{N} 个值", Call(f, (x,)), exact(reference, x)) for label, x in distributions]

    cube = data.gaussian(4 * 8 * 16, 106, fmt.maximum / 3).reshape(4, 8, 16)
    cases.append(Case("三维数组（形状 (4, 8, 16)）：结果要保持形状", Call(f, (cube,)), exact(reference, cube)))

    grid, ties = data.with_signs(fmt.values), data.with_signs(fmt.ties)
    cases += [
        Case("全部可表示值（正负号和 0）：应原样返回", Call(f, (grid,)), exact(reference, grid), Standard.BOUNDARY),
        Case("相邻可表示值的全部中点（平局，正负号都有）", Call(f, (ties,)), exact(reference, ties), Standard.BOUNDARY),
        Case("每个中点两侧最近的 float64（nextafter）", Call(f, (data.neighbours(ties),)),
             exact(reference, data.neighbours(ties)), Standard.BOUNDARY),
        Case("饱和边界（最大值、它与下一个值的中点、远大于最大值）及其负数",
             Call(f, (data.with_signs(data.saturation_values(fmt.maximum, fmt.next_above_max)),)),
             exact(reference, data.with_signs(data.saturation_values(fmt.maximum, fmt.next_above_max))),
             Standard.BOUNDARY),
    ]
    zeros = signed_zeros(fmt)
    cases.append(Case("负数舍入成 0 时得到 −0.0、正数得到 +0.0（符号总是保留，硬件也是这样）", Call(f, (zeros,)),
                      Returns(SignedArrayCheck(reference(zeros), inputs=zeros)), Standard.BOUNDARY))
    scalar, as_list = float(fmt.ties[3]), [float(v) for v in data.with_signs(fmt.ties[:4])]
    cases += [
        Case("标量输入（Python float）", Call(f, (scalar,)), exact(reference, scalar), Standard.DATA, weight=0.5),
        Case("Python list 输入", Call(f, (as_list,)), exact(reference, as_list), Standard.DATA, weight=0.5),
    ]
    for label, bad in (("含 NaN", np.array([1.0, np.nan, 2.0])), ("含 +inf", np.array([np.inf, 0.5])),
                       ("含 −inf", np.array([-np.inf]))):
        cases.append(Case(f"输入{label}", Call(f, (bad,)), Raises("ValueError", f"输入{label}"), Standard.BAD_INPUT))

    prop = Property(
        label="随机数组（中点、可表示值、任意浮点数混合）与参考实现逐位一致",
        function=f,
        strategy=_inputs(fmt),
        expect=lambda args: exact(reference, args[0]),
        hint=lambda args: hint(fmt, args),
        max_examples=60,
    )
    return Suite(f, fmt.summary, tuple(cases), (prop,))


def _inputs(fmt: Format):
    """Short 1-D arrays; shrinking goes towards one element, the smallest tie, then simple floats."""
    ties = st.sampled_from(sorted(fmt.ties, key=abs))
    signed_ties = st.tuples(ties, st.booleans()).map(lambda t: -t[0] if t[1] else t[0])
    grid = st.sampled_from(list(fmt.values))
    wide = st.floats(-2 * fmt.next_above_max, 2 * fmt.next_above_max, allow_nan=False, allow_infinity=False)
    near_ties = st.tuples(ties, st.integers(-3, 3)).map(lambda t: t[0] * (1 + t[1] * np.finfo(float).eps))
    element = st.one_of(signed_ties, grid, wide, near_ties)
    return st.lists(element, min_size=1, max_size=8).map(lambda v: (np.array(v, dtype=np.float64),))


def hint(fmt: Format, args: tuple) -> str:
    """Chinese remarks on a one-element counterexample: every rule that applies to it."""
    x = np.asarray(args[0], dtype=np.float64).ravel()
    if x.size != 1:
        return ""
    v = abs(float(x[0]))
    notes = []
    if x[0] < 0:
        notes.append("负数：按绝对值舍入，再恢复符号")
    if v > fmt.maximum:
        notes.append(f"|x| 超过最大值 {fmt.maximum:g}，应饱和到 ±{fmt.maximum:g}")
    elif np.any(fmt.ties == v):
        notes.append("恰好是两个可表示值的中点：平局取偶数 ties to even")
    return f"（{'；'.join(notes)}）" if notes else ""
