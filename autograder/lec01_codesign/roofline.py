"""Hidden tests of the roofline functions: `flops_per_exp`, `exp_ratio`, `ridge_point`,
`trend_row`, on the real chips and on seeded / hypothesis-generated synthetic chips.

Ratios are compared with RTOL relative to the reference (floating algebra may differ in the
last bits: `peak / fpe / exp` versus `peak / (fpe · exp)`); `flops_per_exp` exactly.

A case on a real chip never shows its expected value when it fails: those values are the report
questions' answer keys (trend_row(B300, "nvfp4"), exp_ratio(B200, "fp8", 64, 64), ridge points…).
The synthetic chips' cases show theirs, and are the ones to debug with.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import hw_specs
from autograder.engine.cases import Call, Case, Group, Property, Raises, Returns, Standard, Suite
from autograder.engine.checks import MappingCheck, ScalarCheck
from autograder.lec01_codesign import chips

RTOL = 1e-9
SHAPES = ((128, 128), (64, 64), (192, 128), (256, 256), (96, 32))
MISSING = "MissingFigureError"
REAL_CHIPS_HIDDEN = "真实芯片用例失败时不显示期望值（它们就是报告题的答案），请用合成芯片的用例排查。"


class CodesignGroup(Group):
    """Lecture 1's own kind of test, beside the engine's standard ones."""

    CHIP = ("芯片", 1.0)  # one chip (real or synthetic) and one parameter set


def _is_real(*specs: dict | None) -> bool:
    """Does the call involve a chip of the real table (whose results are answer keys)?"""
    real = chips.real_specs().values()
    return any(spec in real for spec in specs if spec is not None)


def flops_per_exp_suite(reference) -> Suite:
    def case(label, *args, group=CodesignGroup.CHIP, weight=None):
        return Case(label, Call("flops_per_exp", args), Returns(ScalarCheck(reference(*args))), group, weight)

    cases = [case(f"d_qk = {q}，d_v = {v}", q, v) for q, v in SHAPES + ((1, 1), (4096, 512))]
    cases.append(case("numpy 整数参数 np.int64(128)、np.int64(64)", np.int64(128), np.int64(64), weight=0.5))
    bad = [("d_qk = 0", (0, 128)), ("d_v = −64", (128, -64)), ("d_qk 是 float 128.0", (128.0, 128)),
           ("d_v 是字符串 '128'", (128, "128"))]
    cases += [Case(label, Call("flops_per_exp", args), Raises("ValueError", label), Standard.BAD_INPUT) for label, args in bad]
    prop = Property(
        label="任意正整数 d_qk、d_v",
        function="flops_per_exp",
        strategy=st.tuples(st.integers(1, 10**6), st.integers(1, 10**6)),
        expect=lambda args: Returns(ScalarCheck(reference(*args))),
        max_examples=25,
    )
    return Suite("flops_per_exp", "每个 exp 对应的 Tensor Core FLOP 数（2·d_qk + 2·d_v），以及非正整数输入报 ValueError。",
                 tuple(cases), (prop,))


def exp_ratio_suite(reference) -> Suite:
    def case(label, spec, precision, q, v, group=CodesignGroup.CHIP):
        call = Call("exp_ratio", (chips.arg(spec), precision, q, v))
        return Case(label, call, _expect(reference, (chips.chip(spec), precision, q, v)), group,
                    reveal_expected=not _is_real(spec))

    cases = []
    real = chips.real_specs()
    for name in ("H100", "B200", "B300"):
        for precision in chips.chip(real[name]).flops:
            for q, v in SHAPES[:3]:
                cases.append(case(f"{name}，{precision}，d_qk = {q}，d_v = {v}", real[name], precision, q, v))
    g = np.random.default_rng(401)
    for spec in chips.synthetic_specs(402):
        for precision in chips.chip(spec).flops:
            q, v = SHAPES[int(g.integers(len(SHAPES)))]
            group = CodesignGroup.CHIP if "exp_per_s" in spec else Standard.BAD_INPUT
            cases.append(case(f"合成芯片 {chips.describe(spec)}，{precision}，d_qk = {q}，d_v = {v}",
                              spec, precision, q, v, group))
    cases += [
        case("Rubin，fp8（没有公布 FP8 算力）：MissingFigureError 要原样传出", real["Rubin"], "fp8", 128, 128, Standard.BAD_INPUT),
        case("Rubin，nvfp4（没有公布 exp 吞吐）：MissingFigureError 要原样传出", real["Rubin"], "nvfp4", 128, 128,
             Standard.BAD_INPUT),
        Case("d_qk = 0", Call("exp_ratio", (chips.arg(real["H100"]), "fp8", 0, 128)),
             Raises("ValueError", "d_qk = 0 不是正整数"), Standard.BAD_INPUT),
    ]
    prop = Property(
        label="随机生成的芯片（任意数值）与参考实现一致",
        function="exp_ratio",
        strategy=_chip_args(exp=True, shapes=True),
        expect=lambda args: _expect(reference, _rebuild(args)),
        hint=_chip_hint,
        max_examples=25,
    )
    return Suite("exp_ratio", "softmax 的 exp 时间与矩阵乘法时间之比：真实芯片（H100/B200/B300）、随机数值的合成芯片"
                              "（防止查表），以及缺少数字时 MissingFigureError 原样传出。" + REAL_CHIPS_HIDDEN,
                 tuple(cases), (prop,))


def ridge_point_suite(reference) -> Suite:
    def case(label, spec, precision, group=CodesignGroup.CHIP):
        call = Call("ridge_point", (chips.arg(spec), precision))
        return Case(label, call, _expect(reference, (chips.chip(spec), precision)), group,
                    reveal_expected=not _is_real(spec))

    cases = []
    for name, spec in chips.real_specs().items():
        for precision in chips.chip(spec).flops:
            cases.append(case(f"{name}，{precision}", spec, precision))
    for spec in chips.synthetic_specs(403):
        for precision in chips.chip(spec).flops:
            cases.append(case(f"合成芯片 {chips.describe(spec)}，{precision}", spec, precision))
    cases.append(case("Rubin，fp8（没有公布）：MissingFigureError 要原样传出", chips.real_specs()["Rubin"], "fp8",
                      Standard.BAD_INPUT))
    prop = Property(
        label="随机生成的芯片（任意数值）与参考实现一致",
        function="ridge_point",
        strategy=_chip_args(exp=None, shapes=False),
        expect=lambda args: _expect(reference, _rebuild(args)),
        hint=_chip_hint,
        max_examples=25,
    )
    return Suite("ridge_point", "屋脊点 = 峰值算力 / 内存带宽：真实芯片的每个精度、随机数值的合成芯片，"
                                "以及 MissingFigureError 原样传出。" + REAL_CHIPS_HIDDEN, tuple(cases), (prop,))


def trend_row_suite(reference) -> Suite:
    def case(label, spec, low, base=None, group=CodesignGroup.CHIP):
        kwargs = {} if base is None else {"base": chips.arg(base)}
        call = Call("trend_row", (chips.arg(spec), low), kwargs)
        ref_kwargs = {} if base is None else {"base": chips.chip(base)}
        return Case(label, call, _expect(reference, (chips.chip(spec), low), ref_kwargs), group,
                    reveal_expected=not _is_real(spec, base))

    real = chips.real_specs()
    cases = [
        case("B300，nvfp4（讲义的一行）", real["B300"], "nvfp4"),
        case("B200，nvfp4", real["B200"], "nvfp4"),
        case("B300，fp8", real["B300"], "fp8"),
        case("H100，fp8（自己和自己比）", real["H100"], "fp8"),
        case("Rubin，nvfp4（fp8 和 power 没有公布：应为 None）", real["Rubin"], "nvfp4"),
        case("B300，nvfp4，base = B200", real["B300"], "nvfp4", real["B200"]),
        case("Rubin，fp8（没有公布）：MissingFigureError 要原样传出", real["Rubin"], "fp8", group=Standard.BAD_INPUT),
    ]
    synthetic, bases = chips.synthetic_specs(404), chips.synthetic_bases(405)
    for i, spec in enumerate(synthetic):
        low = next(iter(chips.chip(spec).flops))
        base = bases[i % len(bases)]
        cases.append(case(f"合成芯片 {chips.describe(spec)}，{low}，base = {chips.describe(base)}", spec, low, base))
    cases.append(case(f"合成芯片 {chips.describe(synthetic[1])}，默认 base（H100）", synthetic[1],
                      next(iter(chips.chip(synthetic[1]).flops))))
    prop = Property(
        label="随机生成的芯片和 base（任意数值）与参考实现一致",
        function="trend_row",
        strategy=_trend_args(),
        expect=lambda args: _expect(reference, _rebuild(args[:2]), {"base": chips.chip(args[2].spec)}),
        hint=_chip_hint,
        max_examples=25,
    )
    return Suite("trend_row", "演示 1 的一行（7 个键：相对 base 的倍数和屋脊点）：真实芯片、默认和指定的 base、"
                              "随机数值的合成芯片，没有公布的 fp8/power 为 None，MissingFigureError 原样传出。"
                              + REAL_CHIPS_HIDDEN,
                 tuple(cases), (prop,))


# --- helpers -----------------------------------------------------------------------------------
def _expect(reference, args: tuple, kwargs: dict | None = None):
    """Run the reference in the parent: a value to match, or the exception to expect."""
    try:
        value = reference(*args, **(kwargs or {}))
    except hw_specs.MissingFigureError as err:
        return Raises(MISSING, f"{err}，hw_specs 抛出的 MissingFigureError 不要吞掉或改成别的值")
    if isinstance(value, dict):
        return Returns(MappingCheck(value, rtol=RTOL))
    return Returns(ScalarCheck(value, rtol=RTOL))


def _rebuild(args: tuple) -> tuple:
    """Arguments for the reference: ChipArgs become Chips."""
    return tuple(chips.chip(a.spec) if isinstance(a, chips.ChipArg) else a for a in args)


def _chip_args(*, exp: bool | None, shapes: bool):
    def build(spec):
        precision = st.sampled_from(sorted(spec["flops"]))
        if shapes:
            return st.tuples(st.just(chips.arg(spec)), precision, st.integers(1, 1024), st.integers(1, 1024))
        return st.tuples(st.just(chips.arg(spec)), precision)

    return chips.chip_specs(exp=exp).flatmap(build)


def _trend_args():
    def build(pair):
        spec, base = pair
        return st.tuples(st.just(chips.arg(spec)), st.sampled_from(sorted(spec["flops"])), st.just(chips.arg(base)))

    return st.tuples(chips.chip_specs(name="Gen"), chips.chip_specs(name="GenBase", need=("fp8",))).flatmap(build)


def _chip_hint(args: tuple) -> str:
    specs = [a.spec for a in args if isinstance(a, chips.ChipArg)]
    return "（" + "；".join(chips.describe(s) for s in specs) + "）" if specs else ""
