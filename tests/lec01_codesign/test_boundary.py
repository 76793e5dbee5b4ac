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
    up, down, block_up, block_down = nudged_inputs(x, "nvfp4")
    assert up[15] == 6.0 and up[0] == 0.3 * (1 + NUDGE)  # the amax never moves
    assert (block_up[:16] == x[:16]).all() and block_up[16] == 0.1 * (1 + NUDGE)
    assert len(nudged_inputs(x, "fp8_tensor")) == 2
    assert nudged_inputs(np.zeros(32), "mxfp4") == []


def test_mxfp4_block_just_below_a_power_of_two_is_nudged():
    x = np.zeros(32)
    x[0] = np.nextafter(4.0, 0)
    assert len(nudged_inputs(x, "mxfp4")) == 2
