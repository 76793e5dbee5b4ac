"""
公开检查的例子：每个函数几个能手算的小例子。pytest（test_codesign.py）和 check()（selfcheck.py）都跑这一份。

【它们是什么】每个例子写明了输入、期望值和理由（why）。它们只覆盖 docstring 里说到的典型情况：
    精确可表示的值、平局（ties to even）、饱和、负数、形状、错误输入。
【它们不是什么】评分时的隐藏测试要多得多（随机数据、更多边界），公开例子全过不等于满分。
"""

from __future__ import annotations

import numpy as np

from hw_specs import H100, Chip, MissingFigureError
from public_checks import Case

# 消息里芯片只显示名字（不显示整张参数表）。
DISPLAY = {Chip: lambda chip: chip.name}


def _arr(*values) -> np.ndarray:
    return np.array(values, dtype=np.float64)


def _toy_chip(name: str, flops: dict[str, float], **figures: float) -> Chip:
    """一块数字好算的假想芯片（和 hw_specs 里的真芯片用同一个 Chip 类型）。"""
    source = "公开测试用的假想芯片"
    return Chip.from_dict({"name": name,
                           "flops": {p: {"value": v, "source": source} for p, v in flops.items()},
                           **{k: {"value": v, "source": source} for k, v in figures.items()}})


# 基准芯片；"新"芯片的每个数字都是它的整数或简单分数倍；"下一代"没有 FP8、功耗和 exp 数字。
TOY_BASE = _toy_chip("ToyBase", {"fp8": 1024e12, "bf16": 512e12}, mem_bw=2e12, mem_cap=100e9,
                     link_bw=1e12, power_w=500, exp_per_s=1e12)
TOY_NEW = _toy_chip("ToyNew", {"nvfp4": 8192e12, "fp8": 3072e12}, mem_bw=5e12, mem_cap=300e9,
                    link_bw=1.5e12, power_w=1000, exp_per_s=2e12)
TOY_NEXT = _toy_chip("ToyNext", {"nvfp4": 20480e12}, mem_bw=10e12, mem_cap=300e9, link_bw=2e12)

_MX_BLOCKS = np.concatenate([_arr(8, 7, 3, -1), np.zeros(28), _arr(7.5, 1), np.zeros(30), np.zeros(32)])
_NV_BLOCKS = np.concatenate([_arr(6, 3, 1, -0.5), np.zeros(12), _arr(0.75, 0.25, 0.1), np.zeros(13)])

CASES: tuple[Case, ...] = (
    # --- round_e4m3 -------------------------------------------------------------------------
    Case("round_e4m3", "exact", (_arr(0, 1, 1.125, 448, -448, 2**-6, 2**-9),),
         "这些数本身就能用 E4M3 精确表示，舍入后不变（2^-9 是最小的次正规数）。",
         expected=_arr(0, 1, 1.125, 448, -448, 2**-6, 2**-9)),
    Case("round_e4m3", "ties", (_arr(17, 19, 2**-10, 3 * 2**-10),),
         "都正好在两个可表示值中间，平局取尾数为偶数的那个：17 → 16，19 → 20；"
         "次正规区间隔 2^-9：0.5 × 2^-9 → 0，1.5 × 2^-9 → 2 × 2^-9。",
         expected=_arr(16, 20, 0, 2**-8)),
    Case("round_e4m3", "nearest", (_arr(17.5, 0.3, 101, -0.3),),
         "不是平局时取最近的值：[16, 32) 里间隔 2，17.5 → 18；[0.25, 0.5) 里间隔 2^-5，0.3 → 0.3125；"
         "[64, 128) 里间隔 8，101 → 104；负数按绝对值舍入后加回符号。",
         expected=_arr(18, 0.3125, 104, -0.3125)),
    Case("round_e4m3", "saturate", (_arr(460, 464, 1e6, -500),),
         "超过 448 的饱和到 ±448（464 及以上也是 448，不能变成 480、inf 或 NaN）。",
         expected=_arr(448, 448, 448, -448)),
    Case("round_e4m3", "shape", ([[17.0, 19.0], [-500.0, 0.0]],),
         "接受 list 等任意形状的输入，返回同形状的数组。",
         expected=np.array([[16.0, 20.0], [-448.0, 0.0]])),
    Case("round_e4m3", "nan", (_arr(1, np.nan),), "输入含 NaN 时要抛出 ValueError，不能悄悄返回 NaN。",
         raises=ValueError),
    # --- to_e2m1 ----------------------------------------------------------------------------
    Case("to_e2m1", "exact", (_arr(0, 0.5, 1, 1.5, 2, 3, 4, 6, -6),),
         "E2M1 的 8 个非负值（及其负数）本身不变。", expected=_arr(0, 0.5, 1, 1.5, 2, 3, 4, 6, -6)),
    Case("to_e2m1", "ties", (_arr(0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5),),
         "都正好在两个可表示值中间，平局取尾数为偶数的那个：0.25 → 0，0.75 → 1，1.25 → 1，1.75 → 2，"
         "2.5 → 2，3.5 → 4，5 → 4（讲义的 argmin 在这里偏向较小的值，是错的）。",
         expected=_arr(0, 1, 1, 2, 2, 4, 4)),
    Case("to_e2m1", "nearest", (_arr(0.3, 2.4, 4.9, 5.1),),
         "不是平局时取最近的值：0.3 → 0.5，2.4 → 2，4.9 → 4，5.1 → 6。", expected=_arr(0.5, 2, 4, 6)),
    Case("to_e2m1", "negative", (_arr(-0.75, -2.5, -5),),
         "负数按绝对值舍入（同样平局取偶数）后加回符号。", expected=_arr(-1, -2, -4)),
    Case("to_e2m1", "saturate", (_arr(6.5, 7, -100),), "绝对值超过 6 的饱和到 ±6。", expected=_arr(6, 6, -6)),
    Case("to_e2m1", "shape", ([[0.75, 3.5], [5.0, 7.0]],), "接受 list 等任意形状的输入，返回同形状的数组。",
         expected=np.array([[1.0, 4.0], [4.0, 6.0]])),
    Case("to_e2m1", "inf", (_arr(0.5, np.inf),), "输入含 ±inf 时要抛出 ValueError。", raises=ValueError),
    # --- quantize ---------------------------------------------------------------------------
    Case("quantize", "fp8_tensor", (_arr(448, 17, -1, 0), "fp8_tensor"),
         "amax = 448，缩放因子 s = 448 / 448 = 1，结果就是 round_e4m3(x)：17 平局取偶数变成 16。",
         expected=_arr(448, 16, -1, 0), rtol=1e-12),
    Case("quantize", "fp4_tensor", (_arr(6, 3, -1.5, 0.2, 0.75), "fp4_tensor"),
         "amax = 6，缩放因子 s = 6 / 6 = 1，结果就是 to_e2m1(x)：0.2 → 0，0.75 平局取偶数变成 1。",
         expected=_arr(6, 3, -1.5, 0, 1), rtol=1e-12),
    Case("quantize", "mxfp4", (_MX_BLOCKS, "mxfp4"),
         "三块各 32 个数。第 1 块 max = 8：s = 2^(floor(log2 8) − 2) = 2，x / s = [4, 3.5, 1.5, -0.5]，"
         "舍入（3.5 平局取偶数 → 4）再乘回 s 得 [8, 8, 3, -1]；第 2 块 max = 7.5：s = 2^(2 − 2) = 1，"
         "7.5 超过 6 饱和成 6；第 3 块全是 0，输出 0。",
         shown="x（96 个数：[8, 7, 3, -1, 0…], [7.5, 1, 0…], [0…]）, 'mxfp4'",
         expected=np.concatenate([_arr(8, 8, 3, -1), np.zeros(28), _arr(6, 1), np.zeros(62)]), rtol=1e-12),
    Case("quantize", "nvfp4", (_NV_BLOCKS, "nvfp4"),
         "两块各 16 个数。amax = 6，g = 6 / (6 × 448) = 1/448。第 1 块 max = 6：s_b = round_e4m3(6 / 6 / g) = 448，"
         "实际缩放 s_b × g = 1，结果不变；第 2 块 max = 0.75：s_b = round_e4m3(0.75 / 6 × 448) = 56，"
         "缩放 56 / 448 = 0.125，x / 0.125 = [6, 2, 0.8]，0.8 → 1，乘回得 [0.75, 0.25, 0.125]。",
         shown="x（32 个数：[6, 3, 1, -0.5, 0…], [0.75, 0.25, 0.1, 0…]）, 'nvfp4'",
         expected=np.concatenate([_arr(6, 3, 1, -0.5), np.zeros(12), _arr(0.75, 0.25, 0.125), np.zeros(13)]),
         rtol=1e-12),
    Case("quantize", "block_size", (_NV_BLOCKS, "mxfp4", 16),
         "block_size=16：2 的幂缩放、每 16 个数一块。第 1 块 max = 6：s = 2^(2 − 2) = 1，不变；第 2 块 max = 0.75："
         "s = 2^(−1 − 2) = 0.125，x / s = [6, 2, 0.8]，0.8 → 1，乘回得 [0.75, 0.25, 0.125]。",
         shown="x（32 个数：[6, 3, 1, -0.5, 0…], [0.75, 0.25, 0.1, 0…]）, 'mxfp4', block_size=16",
         expected=np.concatenate([_arr(6, 3, 1, -0.5), np.zeros(12), _arr(0.75, 0.25, 0.125), np.zeros(13)]),
         rtol=1e-12),
    Case("quantize", "per_tensor_block_size", (_arr(1, 2), "fp8_tensor", 16),
         "逐张量方案没有块：给了 block_size 要抛出 ValueError。", shown="x, 'fp8_tensor', block_size=16",
         raises=ValueError),
    Case("quantize", "zeros", (np.zeros(32), "nvfp4"),
         "全零的张量量化成全零，而且不能产生 NaN 或 RuntimeWarning（不要除以 0）。",
         shown="np.zeros(32), 'nvfp4'", expected=np.zeros(32), no_warnings=True),
    Case("quantize", "unknown_scheme", (_arr(1, 2), "int4"), "未知的方案要抛出 ValueError。", raises=ValueError),
    Case("quantize", "ragged", (np.ones(10), "mxfp4"), "mxfp4 的长度必须是 32 的整数倍，否则抛出 ValueError。",
         shown="np.ones(10), 'mxfp4'", raises=ValueError),
    Case("quantize", "not_1d", (np.ones((2, 16)), "nvfp4"), "x 必须是一维数组，否则抛出 ValueError。",
         shown="np.ones((2, 16)), 'nvfp4'", raises=ValueError),
    # --- flops_per_exp ----------------------------------------------------------------------
    Case("flops_per_exp", "d128", (128, 128), "2·128 + 2·128 = 512。", expected=512),
    Case("flops_per_exp", "mla", (192, 128), "MLA 式：2·192 + 2·128 = 640。", expected=640),
    Case("flops_per_exp", "numpy_int", (np.int64(64), 64), "numpy 整数也可以：2·64 + 2·64 = 256。", expected=256),
    Case("flops_per_exp", "zero", (0, 64), "d_qk 必须是正整数，0 要抛出 ValueError。", raises=ValueError),
    Case("flops_per_exp", "fraction", (64.5, 64), "d_qk 必须是整数，64.5 要抛出 ValueError。", raises=ValueError),
    # --- exp_ratio --------------------------------------------------------------------------
    Case("exp_ratio", "balanced", (TOY_BASE, "bf16", 128, 128),
         "ToyBase 的 BF16 算力 512e12 FLOP/s，每次 exp 配 512 FLOP，满速需要 1e12 exp/s，SFU 正好 1e12 exp/s：比值 1.0。",
         expected=1.0),
    Case("exp_ratio", "fp8", (TOY_BASE, "fp8", 128, 128),
         "FP8 算力翻倍（1024e12），需要的 exp 吞吐也翻倍：比值 2.0。", expected=2.0),
    Case("exp_ratio", "mla", (TOY_BASE, "bf16", 192, 128),
         "每次 exp 配 640 FLOP：需要 512e12 / 640 = 0.8e12 exp/s，比值 0.8。", expected=0.8),
    Case("exp_ratio", "no_exp_figure", (TOY_NEXT, "nvfp4", 128, 128),
         "ToyNext 没有公布 exp 吞吐：hw_specs 抛出的 MissingFigureError 要原样传出，不能吞掉或返回别的值。",
         raises=MissingFigureError),
    Case("exp_ratio", "bad_shape", (TOY_BASE, "bf16", 0, 128), "d_qk = 0 不是正整数，要抛出 ValueError。",
         raises=ValueError),
    # --- ridge_point ------------------------------------------------------------------------
    Case("ridge_point", "fp8", (TOY_BASE, "fp8"), "1024e12 FLOP/s ÷ 2e12 B/s = 512 FLOP/B。", expected=512.0),
    Case("ridge_point", "bf16", (TOY_BASE, "bf16"), "512e12 FLOP/s ÷ 2e12 B/s = 256 FLOP/B。", expected=256.0),
    Case("ridge_point", "missing", (TOY_NEXT, "fp8"),
         "ToyNext 没有 FP8 数字：MissingFigureError 要原样传出。", raises=MissingFigureError),
    # --- trend_row --------------------------------------------------------------------------
    Case("trend_row", "ratios", (TOY_NEW, "nvfp4", TOY_BASE),
         "compute = 8192e12 ÷ 1024e12（ToyBase 公布的最低精度是 FP8）= 8；fp8 = 3072 / 1024 = 3；带宽 5 / 2 = 2.5；"
         "容量 300 / 100 = 3；NVLink 1.5 / 1 = 1.5；功耗 1000 / 500 = 2；ridge = 8192e12 / 5e12 = 1638.4 FLOP/B（不是倍数）。",
         expected={"compute": 8.0, "fp8": 3.0, "bandwidth": 2.5, "capacity": 3.0, "nvlink": 1.5, "power": 2.0,
                   "ridge": 1638.4}),
    Case("trend_row", "missing_figures", (TOY_NEXT, "nvfp4", TOY_NEW),
         "ToyNext 没有 FP8 和功耗数字，对应的值是 None；基准 ToyNew 公布的最低精度是 NVFP4，"
         "所以 compute = 20480 / 8192 = 2.5；带宽 10 / 5 = 2，容量 1，NVLink 2 / 1.5，ridge = 20480e12 / 10e12 = 2048。",
         expected={"compute": 2.5, "fp8": None, "bandwidth": 2.0, "capacity": 1.0, "nvlink": 2.0 / 1.5, "power": None,
                   "ridge": 2048.0}),
    Case("trend_row", "default_base", (H100, "fp8"),
         "base 默认是 H100：H100 和自己比，倍数全是 1；ridge 是 H100 FP8 的屋脊点（峰值 ÷ 带宽）。",
         expected={"compute": 1.0, "fp8": 1.0, "bandwidth": 1.0, "capacity": 1.0, "nvlink": 1.0, "power": 1.0,
                   "ridge": H100.peak_flops("fp8") / H100.mem_bw}),
)
