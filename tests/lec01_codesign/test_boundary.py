"""The boundary rule for quantize: exact, except where float algebra itself cannot decide."""

import numpy as np

import solutions.lec01_codesign as ref
from autograder.lec01_codesign import data
from autograder.lec01_codesign.boundary import NUDGE, nudged_inputs, quantize_check


def test_other_scaling_algebra_is_accepted():
    """Is `x / amax * 6` (two roundings) accepted where it rounds a tie differently from
    `x / (amax / 6)`, while the plain exact comparison would reject it?"""
    ties = data.midpoints(data.e2m1_values(), 8.0)[:-1]
    rng = np.random.default_rng(0)
    checked = 0
    for c in rng.uniform(0.1, 10.0, 200):
        x = np.append(ties * c, 6.0 * c)  # amax = 6c: each scaled value is a tie, up to rounding
        other = ref.to_e2m1(x / x.max() * 6.0) * x.max() / 6.0
        if (other != ref.quantize(x, "fp4_tensor")).any():
            assert quantize_check(ref.quantize, x, "fp4_tensor")(other, "quantize(x)").ok
            checked += 1
    assert checked > 10


def test_ties_inside_mxfp4_blocks_are_graded_strictly():
    """With power-of-two scales every algebra is exact, so ties-to-smaller must fail."""
    x = data.mxfp4_ties(1, 4)
    assert nudged_inputs(x, "mxfp4") == []
    blocks = x.reshape(-1, 32)
    _, k = np.frexp(np.abs(blocks).max(axis=1, keepdims=True))
    scale = np.ldexp(1.0, k - 3)
    grid = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6])
    a = np.minimum(np.abs(blocks / scale), 6)
    smaller = np.sign(blocks) * grid[np.abs(a[..., None] - grid).argmin(-1)] * scale
    assert not quantize_check(ref.quantize, x, "mxfp4")(smaller.reshape(-1), "quantize(x)").ok


def test_wrong_rounding_is_never_excused():
    x = data.student_t(1024, 3)
    wrong = ref.quantize(x, "nvfp4") * (1 + 1e-6)
    assert not quantize_check(ref.quantize, x, "nvfp4")(wrong, "quantize(x)").ok


def test_nudges_move_only_the_ambiguous_quantities():
    x = np.concatenate([np.full(15, 0.3), [6.0], np.full(16, 0.1)])
    up, down = nudged_inputs(x, "nvfp4")  # no block max sits on an E4M3 boundary: no block nudge
    assert up[15] == 6.0 and up[0] == 0.3 * (1 + NUDGE)  # the amax never moves
    assert down[16] == 0.1 * (1 - NUDGE)
    assert len(nudged_inputs(x, "fp8_tensor")) == 2  # amax/448 is not a power of two
    assert nudged_inputs(np.zeros(32), "mxfp4") == []


def test_mxfp4_block_just_below_a_power_of_two_is_graded_strictly():
    """floor(log2(max)) has one right answer (np.frexp): np.log2's rounding up is not excused."""
    x = np.zeros(32)
    x[0], x[1] = 8 * (1 - 2.0 ** -53), 1.0
    assert nudged_inputs(x, "mxfp4") == []
    assert ref.quantize(x, "mxfp4")[0] == 6.0  # block exponent 2, scale 2^0: 7.99… saturates to 6
    log2_scale = 2.0 ** (np.floor(np.log2(x.max())) - 2)  # log2 rounds up to 3: scale 2
    wrong = ref.to_e2m1(x / log2_scale) * log2_scale
    assert wrong[0] == 8.0 and not quantize_check(ref.quantize, x, "mxfp4")(wrong, "quantize(x)").ok


def _ties_away(rounder, v):
    farther, nearer = rounder(v * (1 + 2.0 ** -40)), rounder(v * (1 - 2.0 ** -40))
    return np.where(farther != nearer, farther, rounder(v))


def test_power_of_two_scales_grade_ties_strictly_in_every_scheme():
    """Per-tensor and NVFP4 tensors whose scales are powers of two: no nudge excuses ties away from 0."""
    fp4 = data.per_tensor_grid(7, 256, 6.0, np.concatenate([data.e2m1_values(),
                                                             data.midpoints(data.e2m1_values(), 8.0)[:-1]]))
    assert nudged_inputs(fp4, "fp4_tensor") == []
    s = np.abs(fp4).max() / 6
    away = _ties_away(ref.to_e2m1, fp4 / s) * s
    assert not quantize_check(ref.quantize, fp4, "fp4_tensor")(away, "quantize(x)").ok

    nv = data.nvfp4_ties(8, 8)
    blocks = nv.reshape(-1, 16)
    g = np.abs(nv).max() / 2688
    scale = ref.round_e4m3(np.abs(blocks).max(axis=1, keepdims=True) / 6 / g) * g
    away = (_ties_away(ref.to_e2m1, blocks / scale) * scale).reshape(-1)
    assert (away != ref.quantize(nv, "nvfp4")).sum() > 8
    assert not quantize_check(ref.quantize, nv, "nvfp4")(away, "quantize(x)").ok


def test_nvfp4_block_scale_is_nudged_only_where_it_is_ambiguous():
    """A block whose max/6/g sits on an E4M3 tie may take either scale; other blocks stay put."""
    x = np.zeros(48)
    x[0] = 2688.0  # g = 1
    x[16] = 6 * 17.0  # block max / 6 / g = 17: an E4M3 tie (16 | 18)
    x[32] = 6 * 16.0  # = 16: representable, not ambiguous
    variants = nudged_inputs(x, "nvfp4")
    assert variants and all((v[32:] == x[32:]).all() for v in variants)
    assert any(v[16] != x[16] for v in variants)
