"""The boundary rule for grading `quantize`: exact, except where floating-point algebra itself
cannot decide.

`x / s`, `x * (1 / s)`, `x * 448 / amax` and `x / amax * 448` are all correct ways to scale, and
they may differ in the last bit or two. That only matters when a scaled value lies within a few
ulps of a rounding boundary (a tie of E2M1/E4M3). Where the scale is a power of two, `x / s` and
`x * (1 / s)` are exact, so a tie is a tie whatever the algebra and ties are graded strictly.
The rule, applied element by element:

1. An element is correct when it is within OUTPUT_RTOL (8 ulps, relative to the reference's
   value) of the reference's element — multiplying back by the scale may round differently, a
   wrong rounding is off by a whole grid step (≥ 1/16 relative).
2. Otherwise it is also correct when it matches (rule 1) the reference's element for the input
   *nudged* by NUDGE relative (4 ulps) up or down, where the nudge moves exactly the quantities
   whose algebra is ambiguous:
   - "fp8_tensor", "fp4_tensor": every element except the amax ones (the scale stays, each scaled
     value moves) — unless the scale amax/448 (amax/6) is a power of two;
   - "nvfp4": the same for every element of a block whose scale s_b·g is not a power of two
     (g and s_b both powers of two: exact); and, separately, every block that does not hold the
     tensor's amax and whose E4M3 block scale s_b actually changes under the nudge (block max
     within NUDGE of an E4M3 rounding boundary), as a whole;
   - "mxfp4": nothing. Its scales are powers of two, and floor(log2(block max)) has one right
     answer (np.frexp gives it exactly; np.log2 rounds up one ulp below a power of two, which
     the docstring warns about), so MXFP4 is graded strictly.
`block_size` / `scale_format` (quantize's generalisation) follow the same rule: an "e4m3" block
scale like nvfp4, an "e8m0" one like mxfp4, whatever the block size.
Random data almost never comes this close to a boundary; the crafted tie cases do, on purpose.
"""

from __future__ import annotations

import numpy as np

from autograder.engine.checks import ArrayCheck
from solutions.lec01_codesign import round_e4m3

EPS = np.finfo(np.float64).eps
NUDGE = 4 * EPS
OUTPUT_RTOL = 8 * EPS
BLOCK = {"mxfp4": 32, "nvfp4": 16}
SCALE_FORMAT = {"mxfp4": "e8m0", "nvfp4": "e4m3"}
E2M1_MAX, E4M3_MAX = 6.0, 448.0
TENSOR_MAX = {"fp8_tensor": E4M3_MAX, "fp4_tensor": E2M1_MAX, "mxfp4": None, "nvfp4": None}
RULE_TEXT = ("逐元素完全相等；只有当缩放后的值离舍入边界不到几个 ulp、不同的浮点写法本身就可能落在边界两侧时，"
             "两侧的结果都算对")


def nudged_inputs(x: np.ndarray, scheme: str, block_size: int | None = None,
                  scale_format: str | None = None) -> list[np.ndarray]:
    """The inputs whose reference results are also accepted (see the module docstring). Block
    schemes follow their scale format: "e8m0" like mxfp4, "e4m3" like nvfp4."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)) or scheme not in TENSOR_MAX:
        return []
    mags = np.abs(x)
    amax = mags.max()
    if amax == 0:
        return []
    if scheme in ("fp8_tensor", "fp4_tensor"):
        if _power_of_two(amax / TENSOR_MAX[scheme]):
            return []
        movable = mags != amax
        return [_scale_where(x, movable, 1 + NUDGE), _scale_where(x, movable, 1 - NUDGE)]
    block = block_size or BLOCK[scheme]
    if (scale_format or SCALE_FORMAT[scheme]) == "e8m0" or x.size % block:
        return []
    g = amax / (E2M1_MAX * E4M3_MAX)
    bmax = mags.reshape(-1, block).max(axis=1)
    sb = round_e4m3(bmax / E2M1_MAX / g)
    exact = _power_of_two(g) & _power_of_two(sb)
    variants = []
    movable = (mags != amax) & ~np.repeat(exact, block)
    if movable.any():
        variants += [_scale_where(x, movable, 1 + NUDGE), _scale_where(x, movable, 1 - NUDGE)]
    for factor in (1 + NUDGE, 1 - NUDGE):
        whole = (bmax != amax) & (round_e4m3(bmax * factor / E2M1_MAX / g) != sb)
        if whole.any():
            variants.append(_scale_where(x, np.repeat(whole, block), factor))
    return variants


def _power_of_two(v) -> np.ndarray:
    """Element-wise: is v an exact (positive) power of two?"""
    v = np.asarray(v, dtype=np.float64)
    return (v > 0) & (np.frexp(v)[0] == 0.5)


def _scale_where(x: np.ndarray, where: np.ndarray, factor: float) -> np.ndarray:
    return np.where(where, x * factor, x)


def quantize_check(reference, x: np.ndarray, scheme: str, **layout) -> ArrayCheck:
    """The check for `quantize(x, scheme, **layout)` (layout: block_size, scale_format): the
    reference's answer plus its nudged alternatives."""
    desired = reference(x, scheme, **layout)
    alternatives = tuple(reference(v, scheme, **layout) for v in nudged_inputs(x, scheme, **layout))
    return ArrayCheck(desired, rtol=OUTPUT_RTOL, alternatives=alternatives,
                      inputs=np.asarray(x, dtype=np.float64), rule=RULE_TEXT)
