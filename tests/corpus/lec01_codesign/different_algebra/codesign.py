"""A correct submission whose floating-point algebra differs from the reference everywhere it may.

Scales are applied as `x * (448 / amax)` and `x * 6 / amax` (two roundings instead of one; both
exact when the scale is a power of two, as the docstring asks), the MXFP4 exponent comes
from np.log2, NVFP4 divides by the two scales one after the other, ratios are computed in another
order. Results may differ from the reference in the last bit of a scaled value; the grader's
boundary rule must still give full marks.
"""

import numpy as np

from hw_specs import H100, PRECISIONS

_BLOCKS = {"fp8_tensor": None, "fp4_tensor": None, "mxfp4": 32, "nvfp4": 16}
_GRID = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def _check_finite(a, name):
    if np.isnan(a).any() or np.isinf(a).any():
        raise ValueError(f"{name}: NaN/inf in input")


def round_e4m3(x):
    a = np.array(x, dtype=np.float64)
    _check_finite(a, "round_e4m3")
    mag = np.abs(a)
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.where(mag > 0, mag, 1.0)))
    e = np.clip(e, -6, 8)
    # log2 may round up just below a power of two: fix the exponent so that 2^e <= |x|
    e = np.where((mag > 0) & (np.exp2(e) > mag), e - 1, e)
    e = np.maximum(e, -6)
    step = np.exp2(e - 3)
    q = np.round(mag / step) * step
    q = np.where(q > 448.0, 448.0, q)
    return np.where(a < 0, -q, q)


def to_e2m1(y):
    a = np.array(y, dtype=np.float64)
    _check_finite(a, "to_e2m1")
    mag = np.minimum(np.abs(a), 6.0)
    # the two neighbours on the grid, then round half to the one whose index is even
    hi = np.clip(np.searchsorted(_GRID, mag, side="left"), 0, 7)
    lo = np.clip(hi - 1, 0, 7)
    d_lo, d_hi = mag - _GRID[lo], _GRID[hi] - mag
    pick = np.where(d_lo < d_hi, lo, np.where(d_hi < d_lo, hi, np.where(lo % 2 == 0, lo, hi)))
    return np.sign(a) * _GRID[pick]


def _layout(scheme, block_size, scale_format):
    """Block size and scale format of a block scheme, with the optional overrides checked."""
    if _BLOCKS[scheme] is None:
        if block_size is not None or scale_format is not None:
            raise ValueError(f"{scheme} is per tensor: no block_size / scale_format")
        return None, None
    if block_size is None:
        block_size = _BLOCKS[scheme]
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
    fmt = {"mxfp4": "e8m0", "nvfp4": "e4m3"}[scheme] if scale_format is None else scale_format
    if fmt not in ("e8m0", "e4m3"):
        raise ValueError(f"unknown scale_format {scale_format!r}")
    return int(block_size), fmt


def quantize(x, scheme, block_size=None, scale_format=None):
    if scheme not in _BLOCKS:
        raise ValueError(f"no such scheme: {scheme}")
    x = np.array(x, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError("quantize wants a 1-D array")
    n, fmt = _layout(scheme, block_size, scale_format)
    if n and len(x) % n != 0:
        raise ValueError(f"len(x) = {len(x)} must be a multiple of {n}")
    _check_finite(x, "quantize")
    amax = float(np.max(np.abs(x))) if len(x) else 0.0
    if amax == 0.0:
        return np.zeros(len(x))
    if scheme == "fp8_tensor":
        return np.sign(x) * round_e4m3(np.abs(x) * (448.0 / amax)) * (amax / 448.0)
    if scheme == "fp4_tensor":
        return to_e2m1(x * 6.0 / amax) * amax / 6.0
    b = x.reshape(len(x) // n, n)
    bmax = np.abs(b).max(axis=1, keepdims=True)
    if fmt == "e8m0":
        with np.errstate(divide="ignore"):
            e = np.floor(np.log2(np.where(bmax > 0, bmax, 1.0)))
        e = np.where(np.exp2(e) > bmax, e - 1, e)  # log2 may round up just below a power of two
        s = np.exp2(np.clip(e - 2, -127, 127))
        return np.where(bmax > 0, to_e2m1(b / s) * s, 0.0).reshape(-1)
    g = amax / 6.0 / 448.0
    sb = round_e4m3(bmax / (6.0 * g))
    live = sb > 0
    safe = np.where(live, sb, 1.0)
    return np.where(live, to_e2m1(b / safe / g) * safe * g, 0.0).reshape(-1)


def flops_per_exp(d_qk, d_v):
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d > 0 for d in (d_qk, d_v)):
        raise ValueError("d_qk and d_v must be positive integers")
    return 2 * (int(d_qk) + int(d_v))


def exp_ratio(chip, precision, d_qk, d_v):
    return chip.peak_flops(precision) / (flops_per_exp(d_qk, d_v) * chip.exp_per_s)


def ridge_point(chip, precision):
    return 1.0 / (chip.mem_bw / chip.peak_flops(precision))


def trend_row(chip, low_precision, base=H100):
    lowest = [p for p in PRECISIONS if base.has(p)][0]

    def ratio(name):
        return getattr(chip, name) / getattr(base, name) if chip.has(name) and base.has(name) else None

    return {
        "ridge": chip.peak_flops(low_precision) / chip.mem_bw,
        "power": ratio("power_w"),
        "nvlink": ratio("link_bw"),
        "capacity": ratio("mem_cap"),
        "bandwidth": ratio("mem_bw"),
        "fp8": (chip.peak_flops("fp8") / base.peak_flops("fp8")) if chip.has("fp8") else None,
        "compute": chip.peak_flops(low_precision) * (1.0 / base.peak_flops(lowest)),
    }
