"""Do round_e4m3 and to_e2m1 agree bit for bit with ml_dtypes' hardware-exact casts?"""

import numpy as np
import pytest

import oracles
from solutions.lec01_codesign import round_e4m3, to_e2m1

FORMATS = {
    "e4m3": (round_e4m3, oracles.e4m3, oracles.E4M3, 448.0),
    "e2m1": (to_e2m1, oracles.e2m1, oracles.E2M1, 6.0),
}


def critical_points(dtype, limit):
    """Every value, every midpoint (tie) and its float32 neighbours, and values past saturation."""
    vals = oracles.all_values(dtype)
    pos = vals[vals >= 0]
    mids = (pos[:-1] + pos[1:]) / 2
    f32 = np.concatenate([pos, mids]).astype(np.float32)
    near = np.concatenate([f32, np.nextafter(f32, np.float32(0)), np.nextafter(f32, np.float32(np.inf))])
    top = np.float32(limit)
    beyond = np.array([top, np.nextafter(top, np.float32(np.inf)), top * 1.03, top * 1.0357,
                       top * 1.5, top * 2, 1e6, 3e38], dtype=np.float32)
    half_step_past_max = np.float32(limit + (pos[-1] - pos[-2]) / 2)  # the tie that saturates
    mags = np.concatenate([near, beyond, [half_step_past_max]])
    return np.concatenate([mags, -mags]).astype(np.float64)


def random_float32(rng, n, lo_exp, hi_exp):
    """Log-uniform float32 magnitudes over [2^lo, 2^hi] with random signs: exact in float64."""
    mags = np.exp2(rng.uniform(lo_exp, hi_exp, n)).astype(np.float32)
    return (mags * rng.choice(np.array([-1, 1], dtype=np.float32), n)).astype(np.float64)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_value_midpoint_and_boundary(fmt):
    """Representable values, ties and saturation boundaries: the reference equals the oracle."""
    ours, oracle, dtype, limit = FORMATS[fmt]
    x = critical_points(dtype, limit)
    np.testing.assert_array_equal(ours(x), oracle(x))


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_million_random_float32_values(fmt):
    """10^6 float32-exact values across subnormals, normals and saturation."""
    ours, oracle, dtype, limit = FORMATS[fmt]
    rng = np.random.default_rng(20261129)
    lo = -12 if fmt == "e4m3" else -3  # reach below the smallest subnormal of each format
    x = random_float32(rng, 1_000_000, lo, np.log2(limit) + 1.5)
    got, want = ours(x), oracle(x)
    mismatch = np.flatnonzero(got != want)
    assert mismatch.size == 0, f"{mismatch.size} mismatches, first x={x[mismatch[:5]]}"


def test_representable_values_are_all_reachable():
    """The oracle's value sets are the ones the OCP FP8 and MX v1.0 definitions give (a check on the oracle itself)."""
    e2m1 = oracles.all_values(oracles.E2M1)
    np.testing.assert_array_equal(e2m1[e2m1 >= 0], [0, 0.5, 1, 1.5, 2, 3, 4, 6])
    e4m3 = oracles.all_values(oracles.E4M3)
    assert e4m3.max() == 448 and np.min(e4m3[e4m3 > 0]) == 2.0**-9
    assert np.count_nonzero(e4m3 >= 0) == 127  # 0 plus 126 positive finite codes


@pytest.mark.parametrize("x, want", [(0.25, 0.0), (0.75, 1.0), (1.25, 1.0), (1.75, 2.0), (2.5, 2.0),
                                     (3.5, 4.0), (5.0, 4.0), (-0.75, -1.0), (7.0, 6.0), (-1e9, -6.0)])
def test_e2m1_ties_to_even_examples_of_the_design(x, want):
    """The tie examples of the to_e2m1 docstring (which the lecture's argmin gets wrong)."""
    assert to_e2m1(x) == want == oracles.e2m1(x)


def test_float64_double_rounding_trap_is_avoided():
    """58.00000125 is just above the 56/60 midpoint: correct RNE gives 60, a float32 detour 56."""
    x = 58.00000125
    assert round_e4m3(x) == 60.0 == oracles.e4m3(x)
    assert np.float32(x).astype(oracles.E4M3).astype(float) == 56.0  # the trap itself


@pytest.mark.parametrize("func", [round_e4m3, to_e2m1])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_raises(func, bad):
    with pytest.raises(ValueError, match="NaN or inf"):
        func(np.array([1.0, bad]))


@pytest.mark.parametrize("func", [round_e4m3, to_e2m1])
def test_shape_and_dtype_are_kept(func):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7
    out = func(x)
    assert out.shape == x.shape and out.dtype == np.float64
    assert np.ndim(func(3.3)) == 0 and func([1.1, -2.2]).shape == (2,)
