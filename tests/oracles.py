"""Independent oracles for the number formats, built on ml_dtypes' hardware-exact casts.

ml_dtypes casts with round-to-nearest-even but has two traps (DESIGN §2):
- float8_e4m3fn does not saturate (above 464 it gives NaN), so values are clipped to ±448 first;
- it converts float64 through float32, rounding twice (58.00000125 → 56). To cast a float64
  exactly we first round it to float32 *to odd*: a sticky low bit keeps the information needed
  for the second rounding, which is then correct (the classic round-to-odd argument; float32
  has more than two extra bits over either format).
"""

import ml_dtypes
import numpy as np

E4M3 = ml_dtypes.float8_e4m3fn
E2M1 = ml_dtypes.float4_e2m1fn
BLOCK = {"mxfp4": 32, "nvfp4": 16}


def float32_round_to_odd(x):
    """float64 → float32, rounding toward zero and forcing the last bit to 1 when inexact."""
    x = np.asarray(x, dtype=np.float64)
    f = x.astype(np.float32)
    overshoot = np.abs(f.astype(np.float64)) > np.abs(x)
    f = np.where(overshoot, np.nextafter(f, np.float32(0)), f)
    inexact = f.astype(np.float64) != x
    bits = f.view(np.uint32) | np.where(inexact, np.uint32(1), np.uint32(0))
    return bits.view(np.float32)


def cast(x, dtype, limit):
    """Round float64 `x` to `dtype` with saturation at ±limit; returns float64."""
    f = float32_round_to_odd(np.clip(np.asarray(x, dtype=np.float64), -limit, limit))
    return f.astype(dtype).astype(np.float64)


def e4m3(x):
    return cast(x, E4M3, 448.0)


def e2m1(x):
    return cast(x, E2M1, 6.0)


def all_values(dtype):
    """Every finite value of an ml_dtypes 8-bit or 4-bit float type, sorted, as float64."""
    count = 256 if dtype == E4M3 else 16  # float4 values are read from the low nibble
    vals = np.arange(count, dtype=np.uint8).view(dtype).astype(np.float64)
    return np.unique(vals[np.isfinite(vals)])


def quantize(x, scheme):
    """The four schemes of DESIGN §2, written with the ml_dtypes casts above."""
    x = np.asarray(x, dtype=np.float64)
    amax = np.abs(x).max()
    if amax == 0:
        return np.zeros_like(x)
    if scheme == "fp8_tensor":
        s = amax / 448.0
        return e4m3(x / s) * s
    if scheme == "fp4_tensor":
        s = amax / 6.0
        return e2m1(x / s) * s
    blocks = x.reshape(-1, BLOCK[scheme])
    bmax = np.abs(blocks).max(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        if scheme == "mxfp4":
            scale = 2.0 ** (np.floor(np.log2(np.where(bmax > 0, bmax, 1.0))) - 2)
        else:
            g = amax / (6.0 * 448.0)
            scale = e4m3(bmax / 6.0 / g) * g
        q = e2m1(np.where(scale > 0, blocks / scale, 0.0)) * scale
    return np.where((bmax > 0) & (scale > 0), q, 0.0).reshape(x.shape)
