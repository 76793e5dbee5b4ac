"""Hidden tests of `quantize`: every scheme on several distributions, zero tensors and zero
blocks, exact ties inside MXFP4 blocks, bad input, and a differential hypothesis property.
Values are compared with the boundary rule of `boundary.py`."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from autograder.engine.cases import Call, Case, Property, Raises, Returns, Standard, Suite
from autograder.lec01_codesign import data
from autograder.lec01_codesign.boundary import quantize_check

SCHEMES = ("fp8_tensor", "fp4_tensor", "mxfp4", "nvfp4")
N = 4096
SUMMARY = ("四种方案（fp8_tensor、fp4_tensor、mxfp4、nvfp4）在多种分布上的量化结果、全零张量和全零块、"
           "NVFP4 缩放因子舍入成 0 的块、缩放因子是 2 的幂时的平局（四种方案都有）、"
           "MXFP4 块最大值恰在 2 的幂之下 1 ulp，以及各种错误输入（ValueError）。")


def suite(reference) -> Suite:
    def case(label, x, scheme, group=Standard.DATA, weight=None, **layout):
        shown = "".join(f", {k}={v!r}" for k, v in layout.items())
        return Case(f"{scheme}{shown}：{label}", Call("quantize", (x, scheme), layout),
                    _returns(reference, x, scheme, **layout), group, weight)

    lecture = data.student_t(N, 301, 0.02)
    gauss = data.gaussian(N, 302, 1.0)
    wide = data.uniform(N, 303, -1e3, 1e3)
    cases = []
    for scheme in SCHEMES:
        cases += [
            case(f"讲义的权重 Student-t（df = 5）× 0.02，{N} 个值", lecture, scheme),
            case(f"高斯分布 N(0, 1)，{N} 个值", gauss, scheme),
            case(f"宽均匀分布 U(−1000, 1000)，{N} 个值", wide, scheme),
            case("全零张量：应返回全零（不能有 NaN 或警告）", np.zeros(64), scheme, Standard.BOUNDARY, 0.5),
        ]
    tiny = data.student_t(N, 304, 1e-30)  # scaling is relative: tiny tensors quantize like any other
    cases += [
        case("数值很小（× 1e-30）的张量：缩放只看相对大小", tiny, "nvfp4"),
        case("任意长度（33 个值）：逐张量方案不要求长度是块大小的倍数", data.gaussian(33, 305, 1.0), "fp8_tensor",
             weight=0.5),
        case("每 4 块中有 1 块全零", data.zero_blocks(gauss, 32, 4), "mxfp4", Standard.BOUNDARY),
        case("每 4 块中有 1 块全零", data.zero_blocks(gauss, 16, 4), "nvfp4", Standard.BOUNDARY),
        case("有些块比最大值小 10^7 倍以上：块缩放因子舍入成 0，整块输出 0",
             data.tiny_blocks(gauss, 16, 3, 1e-8), "nvfp4", Standard.BOUNDARY),
        case("块内恰好的平局（缩放因子是 2 的幂，中点 × 2^k）：平局取偶数", data.mxfp4_ties(306, 16), "mxfp4", Standard.BOUNDARY),
        case("缩放因子是 2 的幂的张量，元素是 E2M1 的值和中点",
             data.per_tensor_grid(307, 256, 6.0, np.concatenate([data.e2m1_values(),
                                                                 data.midpoints(data.e2m1_values(), 8.0)[:-1]])),
             "fp4_tensor", Standard.BOUNDARY),
        case("缩放因子是 2 的幂的张量，元素是 E4M3 的值和中点",
             data.per_tensor_grid(308, 512, 448.0, np.concatenate([data.e4m3_values(),
                                                                   data.midpoints(data.e4m3_values(), 480.0)[:-1]])),
             "fp8_tensor", Standard.BOUNDARY),
        case("块缩放因子是 2 的幂（g 和 s_b 都是 2 的幂）的块，元素是 E2M1 的值和中点：平局取偶数",
             data.nvfp4_ties(312, 16), "nvfp4", Standard.BOUNDARY),
        case("块内最大值比 2 的幂小 1 ulp（如 8·(1 − 2^-53)）：块指数是 floor(log2 max)，用 np.frexp 精确求",
             data.below_powers_of_two(32, [3, -1, 0, 7, 40, -60]), "mxfp4", Standard.BOUNDARY),
        # the generalisation: block size and scale format apart (the 2 × 2 ablation of the handout)
        case(f"讲义的权重，{N} 个值：每 16 个一块、2 的幂缩放", lecture, "mxfp4", block_size=16),
        case(f"讲义的权重，{N} 个值：每 32 个一块、E4M3 两级缩放", lecture, "nvfp4", block_size=32),
        case(f"高斯分布，{N} 个值：E4M3 两级缩放（等同 nvfp4, block_size=32）", gauss, "mxfp4", scale_format="e4m3"),
        case(f"高斯分布，{N} 个值：每 16 个一块、2 的幂缩放", gauss, "nvfp4", scale_format="e8m0"),
        case("每 8 个一块、2 的幂缩放：块内的平局", data.mxfp4_ties(313, 8), "mxfp4", Standard.BOUNDARY, block_size=8),
        case("每 64 个一块、E4M3 两级缩放：块缩放因子是 2 的幂时的平局", data.nvfp4_ties(314, 16), "nvfp4", Standard.BOUNDARY,
             block_size=64),
        case("numpy 整数的 block_size = np.int64(16)", gauss[:64], "mxfp4", Standard.BOUNDARY, 0.5, block_size=np.int64(16)),
        case("空数组：原样返回空数组", np.zeros(0), "nvfp4", Standard.BOUNDARY, 0.5),
        case("数值约 1e-39 的张量：块缩放指数按 E8M0 限制在 [-127, 127]", data.student_t(64, 311, 1e-39), "mxfp4",
             Standard.BOUNDARY, 0.5),
    ]
    bad = [
        ("未知的方案名 'nvfp8'", (gauss[:32], "nvfp8")),
        ("mxfp4 的长度 33 不是 32 的倍数", (data.gaussian(33, 309, 1.0), "mxfp4")),
        ("nvfp4 的长度 40 不是 16 的倍数", (data.gaussian(40, 310, 1.0), "nvfp4")),
        ("x 含 NaN", (np.where(np.arange(64) == 5, np.nan, gauss[:64]), "nvfp4")),
        ("x 含 inf", (np.where(np.arange(32) == 0, np.inf, gauss[:32]), "fp8_tensor")),
        ("x 是二维数组（形状 (2, 32)）", (gauss[:64].reshape(2, 32), "mxfp4")),
    ]
    bad_layout = [
        ("block_size = 0", (gauss[:32], "mxfp4"), {"block_size": 0}),
        ("block_size = 16.0 不是整数", (gauss[:32], "nvfp4"), {"block_size": 16.0}),
        ("scale_format = 'e5m2' 不是 'e8m0' 或 'e4m3'", (gauss[:32], "nvfp4"), {"scale_format": "e5m2"}),
        ("逐张量方案 fp8_tensor 给了 block_size = 16", (gauss[:32], "fp8_tensor"), {"block_size": 16}),
        ("逐张量方案 fp4_tensor 给了 scale_format = 'e4m3'", (gauss[:32], "fp4_tensor"), {"scale_format": "e4m3"}),
        ("长度 48 不是 block_size = 32 的倍数", (gauss[:48], "nvfp4"), {"block_size": 32}),
    ]
    cases += [Case(label, Call("quantize", args), Raises("ValueError", label), Standard.BAD_INPUT) for label, args in bad]
    cases += [Case(label, Call("quantize", args, kwargs), Raises("ValueError", label), Standard.BAD_INPUT)
              for label, args, kwargs in bad_layout]

    prop = Property(
        label="随机张量（32 或 64 个值，含大量 0 和简单的数）在四种方案下与参考实现一致",
        function="quantize",
        strategy=_tensors(),
        expect=lambda args: _returns(reference, *args),
        max_examples=50,
    )
    return Suite("quantize", SUMMARY, tuple(cases), (prop,))


def _returns(reference, x, scheme, **layout):
    return Returns(quantize_check(reference, x, scheme, **layout))


def _tensors():
    """(x, scheme) with len(x) 32 or 64, so every scheme accepts it; mostly zeros and simple
    numbers, so a failure shrinks to a short, readable tensor quickly."""
    element = st.one_of(st.just(0.0), st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False))
    tensor = st.sampled_from([32, 64]).flatmap(lambda n: st.lists(element, min_size=n, max_size=n))
    return st.tuples(tensor.map(lambda v: np.array(v, dtype=np.float64)), st.sampled_from(SCHEMES))
