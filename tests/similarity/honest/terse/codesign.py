"""
CS349E · 第 1 讲 · 练习：用 roofline 读懂 Blackwell Ultra 的设计取舍

本文件里的 7 个函数是本次作业的评分对象（讲义脚本 05_codesign_blackwell_ultra.py 的三个演示都建立在它们之上）：

    演示 2（NVFP4）：round_e4m3、to_e2m1、quantize
    演示 3（softmax 的 exp 瓶颈）：flops_per_exp、exp_ratio
    演示 1（代际趋势）：ridge_point、trend_row

【和讲义的区别】讲义里的 round_e4m3 只接受非负数，to_e2m1 用 argmin 找最近点、平局时偏向较小的值
    （0.75 → 0.5）；硬件的舍入规则是"平局取偶数"（ties to even，0.75 → 1.0）。本作业要求和硬件完全一致。
【约定】数组函数接受任意形状、任意符号的输入（list、标量或 numpy 数组均可），返回 float64 的 numpy 数组；
    芯片参数来自同目录的 hw_specs.py，单位一律是 SI（FLOP/s、B/s、B、W、exp/s）。
"""

import numpy as np

from hw_specs import H100, PRECISIONS

# 四种量化方案 → 块大小（None 表示整个张量共用一个缩放因子）
SCHEMES = {"fp8_tensor": None, "fp4_tensor": None, "mxfp4": 32, "nvfp4": 16}
# 块缩放方案 → 块缩放因子的格式："e8m0" 是 2 的幂（OCP MX），"e4m3" 是 FP8 E4M3 + 张量级 g（NVFP4）
SCALE_FORMATS = {"mxfp4": "e8m0", "nvfp4": "e4m3"}

E4M3_MAX = 448.0  # FP8 E4M3 能表示的最大有限值
E2M1_MAX = 6.0  # FP4 E2M1 能表示的最大值


def round_e4m3(x):
    x = np.asarray(x, float)
    if not np.isfinite(x).all():
        raise ValueError("round_e4m3: x must be finite")
    e = np.maximum(np.frexp(np.abs(x))[1] - 1, -6)
    return np.copysign(np.minimum(np.ldexp(np.rint(np.ldexp(np.abs(x), 3 - e)), e - 3), 448.0), x)


def to_e2m1(y):
    y = np.asarray(y, float)
    if not np.isfinite(y).all():
        raise ValueError("to_e2m1: y must be finite")
    a = np.abs(y)
    s = np.where(a < 2, 0.5, 1.0) * np.where(a < 4, 1.0, 2.0)
    return np.copysign(np.minimum(np.rint(a / s) * s, 6.0), y)


def quantize(x, scheme, block_size=None, scale_format=None):
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme: {scheme}")
    x = np.asarray(x, float)
    if x.ndim != 1:
        raise ValueError("x must be a 1-D array")
    bs, fmt = _block_layout(scheme, block_size, scale_format)
    if not np.isfinite(x).all():
        raise ValueError("x must be finite")
    amax = np.abs(x).max() if x.size else 0.0
    if amax == 0:
        return np.zeros(x.shape)
    if bs is None:
        s = amax / (448.0 if scheme == "fp8_tensor" else 6.0)
        return (round_e4m3 if scheme == "fp8_tensor" else to_e2m1)(x / s) * s
    if x.size % bs:
        raise ValueError(f"len(x) = {x.size} is not a multiple of {bs}")
    b = x.reshape(-1, bs)
    m = np.abs(b).max(axis=1, keepdims=True)
    if fmt == "e8m0":
        s = np.ldexp(1.0, np.clip(np.frexp(m)[1] - 3, -127, 127))
    else:
        g = amax / 2688.0
        s = round_e4m3(m / 6 / g) * g
    ok = s > 0
    return np.where(ok, to_e2m1(b / np.where(ok, s, 1)) * s, 0.0).ravel()


def _block_layout(scheme, block_size, scale_format):
    """(block size, scale format) of a scheme with its optional overrides; (None, None) per tensor."""
    if SCHEMES[scheme] is None:
        if block_size is not None or scale_format is not None:
            raise ValueError(f"quantize: {scheme} is per tensor; block_size and scale_format apply to "
                             f"mxfp4 / nvfp4 only, got block_size={block_size!r}, scale_format={scale_format!r}")
        return None, None
    if block_size is None:
        block_size = SCHEMES[scheme]
    elif isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size <= 0:
        raise ValueError(f"quantize: block_size must be a positive integer, got {block_size!r}")
    if scale_format is None:
        scale_format = SCALE_FORMATS[scheme]
    elif scale_format not in ("e8m0", "e4m3"):
        raise ValueError(f"quantize: scale_format must be 'e8m0' or 'e4m3', got {scale_format!r}")
    return int(block_size), scale_format


def flops_per_exp(d_qk, d_v):
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d > 0 for d in (d_qk, d_v)):
        raise ValueError("d_qk, d_v must be positive ints")
    return int(2 * d_qk + 2 * d_v)


def exp_ratio(chip, precision, d_qk, d_v):
    return chip.peak_flops(precision) / flops_per_exp(d_qk, d_v) / chip.exp_per_s


def ridge_point(chip, precision):
    return chip.peak_flops(precision) / chip.mem_bw


def trend_row(chip, low_precision, base=H100):
    low = next(p for p in PRECISIONS if base.has(p))
    has_power = chip.has("power_w") and base.has("power_w")
    return dict(compute=chip.peak_flops(low_precision) / base.peak_flops(low),
                fp8=chip.peak_flops("fp8") / base.peak_flops("fp8") if chip.has("fp8") else None,
                bandwidth=chip.mem_bw / base.mem_bw, capacity=chip.mem_cap / base.mem_cap,
                nvlink=chip.link_bw / base.link_bw,
                power=chip.power_w / base.power_w if has_power else None,
                ridge=ridge_point(chip, low_precision))
