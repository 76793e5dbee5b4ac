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

import math

import numpy as np

from hw_specs import H100, PRECISIONS

# 四种量化方案 → 块大小（None 表示整个张量共用一个缩放因子）
SCHEMES = {"fp8_tensor": None, "fp4_tensor": None, "mxfp4": 32, "nvfp4": 16}
# 块缩放方案 → 块缩放因子的格式："e8m0" 是 2 的幂（OCP MX），"e4m3" 是 FP8 E4M3 + 张量级 g（NVFP4）
SCALE_FORMATS = {"mxfp4": "e8m0", "nvfp4": "e4m3"}

E4M3_MAX = 448.0  # FP8 E4M3 能表示的最大有限值
E2M1_MAX = 6.0  # FP4 E2M1 能表示的最大值


# 可表示的 E2M1 非负值，下标就是编码（最低位是尾数位）
E2M1_LEVELS = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def _e4m3_one(v):
    """一个 Python float 的 E4M3 舍入。"""
    mag = abs(v)
    if mag == 0:
        return math.copysign(0.0, v)
    if mag > 448:
        return math.copysign(448.0, v)
    mant, k = math.frexp(mag)
    exponent = max(k - 1, -6)
    spacing = 2.0 ** (exponent - 3)
    r = round(mag / spacing) * spacing   # Python 的 round 就是"平局取偶数"
    return math.copysign(min(r, 448.0), v)


def _e2m1_one(v):
    mag = min(abs(v), 6.0)
    best = 0
    for i, level in enumerate(E2M1_LEVELS):
        d_best = abs(mag - E2M1_LEVELS[best])
        d = abs(mag - level)
        if d < d_best or (d == d_best and i % 2 == 0):
            best = i
    return math.copysign(E2M1_LEVELS[best], v)


def _elementwise(fn, values, name):
    arr = np.array(values, dtype=np.float64)
    if np.isnan(arr).any() or np.isinf(arr).any():
        raise ValueError(name + " needs finite numbers (got NaN or inf)")
    flat = [fn(float(v)) for v in arr.ravel()]
    return np.array(flat, dtype=np.float64).reshape(arr.shape)


def round_e4m3(x):
    # 逐个元素处理：慢一点，但每一步都看得清楚
    return _elementwise(_e4m3_one, x, "round_e4m3")


def to_e2m1(y):
    # 在 8 个候选值里找最近的，一样近时取下标为偶数的
    return _elementwise(_e2m1_one, y, "to_e2m1")


def quantize(x, scheme, block_size=None, scale_format=None):
    if scheme not in SCHEMES:
        raise ValueError(f"quantize: unknown scheme {scheme!r}; choose one of {sorted(SCHEMES)}")
    data = np.array(x, dtype=np.float64)
    if data.ndim != 1:
        raise ValueError(f"quantize: x must be one-dimensional, got shape {data.shape}")
    size, fmt = _block_layout(scheme, block_size, scale_format)
    if not np.all(np.isfinite(data)):
        raise ValueError("quantize: x has NaN or inf")
    result = np.zeros(len(data))
    if len(data) == 0:
        return result
    peak = float(np.max(np.abs(data)))
    if peak == 0.0:
        return result
    if size is None:
        if scheme == "fp8_tensor":
            scale = peak / 448.0
            return round_e4m3(data / scale) * scale
        scale = peak / 6.0
        return to_e2m1(data / scale) * scale
    if len(data) % size != 0:
        raise ValueError(f"quantize: length {len(data)} is not a multiple of the block size {size}")
    g = peak / (6.0 * 448.0)
    for start in range(0, len(data), size):
        chunk = data[start:start + size]
        local = float(np.max(np.abs(chunk)))
        if local == 0.0:
            continue
        if fmt == "e8m0":
            mant, expo = math.frexp(local)
            power = min(max(expo - 3, -127), 127)
            scale = math.ldexp(1.0, power)
        else:
            scale = float(round_e4m3(np.array([local / 6.0 / g]))[0]) * g
            if scale == 0.0:
                continue
        result[start:start + size] = to_e2m1(chunk / scale) * scale
    return result


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
    def valid(n):
        return isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n > 0

    if not (valid(d_qk) and valid(d_v)):
        raise ValueError(f"flops_per_exp: d_qk and d_v must be positive integers (got {d_qk!r}, {d_v!r})")
    return int(2 * (d_qk + d_v))


def exp_ratio(chip, precision, d_qk, d_v):
    flops = flops_per_exp(d_qk, d_v)
    needed_exp_rate = chip.peak_flops(precision) / flops   # exp/s 才能让 Tensor Core 满速
    return float(needed_exp_rate / chip.exp_per_s)


def ridge_point(chip, precision):
    peak = chip.peak_flops(precision)
    bw = chip.mem_bw
    return float(peak / bw)


def trend_row(chip, low_precision, base=H100):
    base_low = None
    for p in PRECISIONS:
        if base.has(p):
            base_low = p
            break
    row = {}
    row["compute"] = chip.peak_flops(low_precision) / base.peak_flops(base_low)
    row["fp8"] = (chip.peak_flops("fp8") / base.peak_flops("fp8")) if chip.has("fp8") else None
    row["bandwidth"] = chip.mem_bw / base.mem_bw
    row["capacity"] = chip.mem_cap / base.mem_cap
    row["nvlink"] = chip.link_bw / base.link_bw
    if chip.has("power_w") and base.has("power_w"):
        row["power"] = chip.power_w / base.power_w
    else:
        row["power"] = None
    row["ridge"] = ridge_point(chip, low_precision)
    return row
