"""A correct lec01 submission written with plain Python loops, one element at a time.

Different from the reference on purpose: E2M1 rounding searches the value grid and breaks ties
toward the even grid index; exp_ratio divides t_exp by t_mma literally. Slow, but correct.
"""

import math

import numpy as np

from hw_specs import H100, PRECISIONS

E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)  # index parity = mantissa bit
BLOCKS = {"fp8_tensor": None, "fp4_tensor": None, "mxfp4": 32, "nvfp4": 16}


def _finite(value, name):
    if not math.isfinite(value):
        raise ValueError(f"{name}: input contains NaN or inf")
    return value


def _e4m3(value):
    a = abs(_finite(value, "round_e4m3"))
    if a == 0:
        return math.copysign(0.0, value)
    _, k = math.frexp(a)
    step = math.ldexp(1.0, max(k - 1, -6) - 3)
    q = min(round(a / step) * step, 448.0)  # Python's round() breaks ties to even
    return math.copysign(q, value)


def _e2m1(value):
    a = abs(_finite(value, "to_e2m1"))
    if a >= 6.0:
        return math.copysign(6.0, value)
    best = 0
    for i, v in enumerate(E2M1_VALUES):
        d, d_best = abs(a - v), abs(a - E2M1_VALUES[best])
        if d < d_best or (d == d_best and i % 2 == 0):
            best = i
    return math.copysign(E2M1_VALUES[best], value)


def _elementwise(x, scalar):
    arr = np.asarray(x, dtype=np.float64)
    out = [scalar(float(v)) for v in arr.reshape(-1)]
    return np.array(out, dtype=np.float64).reshape(arr.shape)


def round_e4m3(x):
    return _elementwise(x, _e4m3)


def to_e2m1(y):
    return _elementwise(y, _e2m1)


def _layout(scheme, block_size, scale_format):
    """Block size and scale format of a block scheme, with the optional overrides checked."""
    if BLOCKS[scheme] is None:
        if block_size is not None or scale_format is not None:
            raise ValueError(f"{scheme} is per tensor: no block_size / scale_format")
        return None, None
    if block_size is None:
        block_size = BLOCKS[scheme]
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
    fmt = {"mxfp4": "e8m0", "nvfp4": "e4m3"}[scheme] if scale_format is None else scale_format
    if fmt not in ("e8m0", "e4m3"):
        raise ValueError(f"unknown scale_format {scale_format!r}")
    return int(block_size), fmt


def quantize(x, scheme, block_size=None, scale_format=None):
    if scheme not in BLOCKS:
        raise ValueError(f"unknown scheme {scheme!r}")
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError("x must be 1-D")
    block, fmt = _layout(scheme, block_size, scale_format)
    if block and len(arr) % block:
        raise ValueError(f"length {len(arr)} is not a multiple of {block}")
    values = [_finite(float(v), "quantize") for v in arr]
    amax = max((abs(v) for v in values), default=0.0)
    if amax == 0:
        return np.zeros(len(values))
    out = []
    if scheme == "fp8_tensor":
        s = amax / 448.0
        out = [_e4m3(v / s) * s for v in values]
    elif scheme == "fp4_tensor":
        s = amax / 6.0
        out = [_e2m1(v / s) * s for v in values]
    else:
        g = amax / (6.0 * 448.0)
        for start in range(0, len(values), block):
            chunk = values[start:start + block]
            bmax = max(abs(v) for v in chunk)
            if fmt == "e8m0":
                scale = math.ldexp(1.0, min(max(math.frexp(bmax)[1] - 1 - 2, -127), 127)) if bmax > 0 else 0.0
            else:
                scale = _e4m3(bmax / 6.0 / g) * g
            out += [_e2m1(v / scale) * scale if scale > 0 else 0.0 for v in chunk]
    return np.array(out, dtype=np.float64)


def flops_per_exp(d_qk, d_v):
    for d in (d_qk, d_v):
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0:
            raise ValueError(f"head dimension must be a positive integer, got {d!r}")
    total = 0
    for d in (d_qk, d_v):
        total += 2 * int(d)
    return total


def exp_ratio(chip, precision, d_qk, d_v):
    t_mma = flops_per_exp(d_qk, d_v) / chip.peak_flops(precision)
    t_exp = 1.0 / chip.exp_per_s
    return t_exp / t_mma


def ridge_point(chip, precision):
    return chip.peak_flops(precision) / chip.mem_bw


def trend_row(chip, low_precision, base=H100):
    base_low = None
    for p in PRECISIONS:
        if base.has(p):
            base_low = p
            break
    row = {"compute": chip.peak_flops(low_precision) / base.peak_flops(base_low),
           "fp8": chip.peak_flops("fp8") / base.peak_flops("fp8") if chip.has("fp8") else None}
    for key, field in (("bandwidth", "mem_bw"), ("capacity", "mem_cap"), ("nvlink", "link_bw"), ("power", "power_w")):
        row[key] = getattr(chip, field) / getattr(base, field) if chip.has(field) and base.has(field) else None
    row["ridge"] = ridge_point(chip, low_precision)
    return row
