"""A partly right submission: some functions correct, some with typical mistakes.

- round_e4m3, exp_ratio, ridge_point: correct.
- to_e2m1: right values, but NaN/inf are not rejected.
- quantize: NVFP4 blocks whose scale rounds to 0 become NaN; no input validation.
- flops_per_exp: 4 · d_qk (forgets that d_v may differ from d_qk).
- trend_row: assumes the base's lowest published precision is always FP8.
"""

import numpy as np

from hw_specs import H100


def round_e4m3(x):
    x = np.asarray(x, dtype=np.float64)
    if not np.isfinite(x).all():
        raise ValueError("round_e4m3: NaN or inf")
    a = np.abs(x)
    _, k = np.frexp(a)
    step = np.ldexp(1.0, np.maximum(k - 1, -6) - 3)
    return np.sign(x) * np.minimum(np.round(a / step) * step, 448.0)


def to_e2m1(y):
    y = np.asarray(y, dtype=np.float64)
    a = np.abs(y)
    step = np.where(a < 2, 0.5, np.where(a < 4, 1.0, 2.0))
    return np.sign(y) * np.minimum(np.round(a / step) * step, 6.0)


def quantize(x, scheme):
    x = np.asarray(x, dtype=np.float64)
    amax = np.abs(x).max()
    if scheme == "fp8_tensor":
        return round_e4m3(x / (amax / 448)) * (amax / 448)
    if scheme == "fp4_tensor":
        return to_e2m1(x / (amax / 6)) * (amax / 6)
    if scheme == "mxfp4":
        b = x.reshape(-1, 32)
        bmax = np.abs(b).max(axis=1, keepdims=True)
        _, k = np.frexp(bmax)
        s = np.ldexp(1.0, k - 3)
        return np.where(bmax > 0, to_e2m1(b / s) * s, 0.0).reshape(-1)
    if scheme == "nvfp4":
        g = amax / (6 * 448)
        b = x.reshape(-1, 16)
        s = round_e4m3(np.abs(b).max(axis=1, keepdims=True) / 6 / g) * g
        with np.errstate(divide="ignore", invalid="ignore"):
            return (to_e2m1(b / s) * s).reshape(-1)
    raise ValueError(scheme)


def flops_per_exp(d_qk, d_v):
    if not isinstance(d_qk, (int, np.integer)) or d_qk <= 0:
        raise ValueError("d_qk must be a positive integer")
    return 4 * int(d_qk)


def exp_ratio(chip, precision, d_qk, d_v):
    return chip.peak_flops(precision) / flops_per_exp(d_qk, d_v) / chip.exp_per_s


def ridge_point(chip, precision):
    return chip.peak_flops(precision) / chip.mem_bw


def trend_row(chip, low_precision, base=H100):
    def ratio(field):
        return getattr(chip, field) / getattr(base, field) if chip.has(field) and base.has(field) else None

    return {
        "compute": chip.peak_flops(low_precision) / base.peak_flops("fp8"),
        "fp8": chip.peak_flops("fp8") / base.peak_flops("fp8") if chip.has("fp8") else None,
        "bandwidth": ratio("mem_bw"),
        "capacity": ratio("mem_cap"),
        "nvlink": ratio("link_bw"),
        "power": ratio("power_w"),
        "ridge": ridge_point(chip, low_precision),
    }
