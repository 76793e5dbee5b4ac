"""The boundary rule for grading `quantize`: exact, except where floating-point algebra itself
cannot decide.

`x / s`, `x * (1 / s)`, `x * 448 / amax` and `x / amax * 448` are all correct ways to scale, and
they may differ in the last bit or two. That only matters when a scaled value lies within a few
ulps of a rounding boundary (a tie of E2M1/E4M3, or a power of two for the MXFP4 scale). The
rule, applied element by element:

1. An element is correct when it is within OUTPUT_RTOL (8 ulps, relative to the reference's
   value) of the reference's element — multiplying back by the scale may round differently, a
   wrong rounding is off by a whole grid step (≥ 1/16 relative).
2. Otherwise it is also correct when it matches (rule 1) the reference's element for the input
   *nudged* by NUDGE relative (4 ulps) up or down, where the nudge moves exactly the quantities
   whose algebra is ambiguous:
   - "fp8_tensor", "fp4_tensor": every element except the amax ones (the scale stays, each scaled
     value moves);
   - "nvfp4": the same, and separately every block that does not hold the tensor's amax as a
     whole (its E4M3 block scale moves);
   - "mxfp4": nothing, because its scales are powers of two and every algebra divides by them
     exactly (so ties inside MXFP4 blocks are graded strictly) — except a block whose max lies
     within NUDGE below a power of two, where floor(log2(·)) itself is ambiguous; that block is
     nudged as a whole.
Random data almost never comes this close to a boundary; the crafted tie cases do, on purpose.
"""

from __future__ import annotations

import numpy as np

from autograder.engine.checks import ArrayCheck

EPS = np.finfo(np.float64).eps
NUDGE = 4 * EPS
OUTPUT_RTOL = 8 * EPS
BLOCK = {"mxfp4": 32, "nvfp4": 16}
RULE_TEXT = ("逐元素完全相等；只有当缩放后的值离舍入边界不到几个 ulp、不同的浮点写法本身就可能落在边界两侧时，"
             "两侧的结果都算对")


def nudged_inputs(x: np.ndarray, scheme: str) -> list[np.ndarray]:
    """The inputs whose reference results are also accepted (see the module docstring)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        return []
    mags = np.abs(x)
    amax = mags.max()
    if amax == 0:
        return []
    variants = []
    if scheme in ("fp8_tensor", "fp4_tensor", "nvfp4"):
        movable = mags != amax
        variants += [_scale_where(x, movable, 1 + NUDGE), _scale_where(x, movable, 1 - NUDGE)]
    if scheme in BLOCK and x.size % BLOCK[scheme] == 0:
        blocks = mags.reshape(-1, BLOCK[scheme])
        bmax = blocks.max(axis=1)
        if scheme == "nvfp4":
            whole = bmax != amax
        else:  # mxfp4: only blocks whose max is just below a power of two
            _, k = np.frexp(bmax)
            whole = (bmax > 0) & (np.frexp(bmax * (1 + NUDGE))[1] != k)
        if whole.any():
            movable = np.repeat(whole, BLOCK[scheme])
            variants += [_scale_where(x, movable, 1 + NUDGE), _scale_where(x, movable, 1 - NUDGE)]
    return variants


def _scale_where(x: np.ndarray, where: np.ndarray, factor: float) -> np.ndarray:
    return np.where(where, x * factor, x)


def quantize_check(reference, x: np.ndarray, scheme: str) -> ArrayCheck:
    """The check for `quantize(x, scheme)`: the reference's answer plus its nudged alternatives."""
    desired = reference(x, scheme)
    alternatives = tuple(reference(v, scheme) for v in nudged_inputs(x, scheme))
    return ArrayCheck(desired, rtol=OUTPUT_RTOL, alternatives=alternatives,
                      inputs=np.asarray(x, dtype=np.float64), rule=RULE_TEXT)
