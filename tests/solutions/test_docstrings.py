"""What the docstrings state about the formats is exactly what the reference (and hardware, via
ml_dtypes) does: the E4M3 value set, saturation vs NaN, the sign of zero, MXFP4's [4, 8)."""

import re

import ml_dtypes
import numpy as np
from hypothesis import given, settings, strategies as st

import solutions.lec01_codesign.codesign as ref

E4M3_DOC, E2M1_DOC, QUANTIZE_DOC = ref.round_e4m3.__doc__, ref.to_e2m1.__doc__, ref.quantize.__doc__


def _e4m3_values_from_the_docstring() -> set[float]:
    """Parse "e ∈ [-6, 7] 时 m ∈ {0..7}；e = 8 时只有 m ∈ {0..6}" and "次正规数 ±k × 2^-9（k = 0..7）"."""
    full = re.search(r"e ∈ \[(-?\d+), (-?\d+)\] 时 m ∈ \{0\.\.(\d+)\}", E4M3_DOC)
    top = re.search(r"e = (\d+) 时只有 m ∈ \{0\.\.(\d+)\}", E4M3_DOC)
    sub = re.search(r"次正规数 ±k × 2\^(-?\d+)（k = 0\.\.(\d+)）", E4M3_DOC)
    assert full and top and sub, "the E4M3 docstring no longer states its value set in the parsed form"
    lo, hi, m_max = map(int, full.groups())
    e_top, m_top = map(int, top.groups())
    sub_exp, k_max = map(int, sub.groups())
    values = {(1 + m / 8) * 2.0 ** e for e in range(lo, hi + 1) for m in range(m_max + 1)}
    values |= {(1 + m / 8) * 2.0 ** e_top for m in range(m_top + 1)}
    values |= {k * 2.0 ** sub_exp for k in range(k_max + 1)}
    return values


def _e4m3_finite_non_negative() -> set[float]:
    bits = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    return {float(v) for v in bits if np.isfinite(v) and v >= 0}


def test_e4m3_docstring_range_is_the_set_round_e4m3_returns():
    """The docstring's value set = every finite E4M3 value (ml_dtypes) = everything round_e4m3 returns."""
    stated = _e4m3_values_from_the_docstring()
    assert stated == _e4m3_finite_non_negative()
    assert 480.0 not in stated and max(stated) == 448.0
    probe = np.concatenate([np.linspace(0, 600, 200_001), np.exp2(np.linspace(-14, 9.5, 50_001))])
    assert set(np.unique(ref.round_e4m3(probe)).tolist()) <= stated
    assert set(np.unique(ref.round_e4m3(np.array(sorted(stated)))).tolist()) == stated


def test_without_satfinite_values_above_464_become_nan_and_the_reference_saturates():
    """464 itself is the tie 448 | 480 and goes to even 448; anything above rounds to 480's code, NaN."""
    assert "|x| > 464 变成 NaN" in E4M3_DOC and "总是饱和" in E4M3_DOC
    cast = np.array([463.99, 464.0, np.nextafter(np.float32(464), np.float32(500)), 500.0],
                    dtype=np.float32).astype(ml_dtypes.float8_e4m3fn).astype(np.float64)
    assert (cast[:2] == 448).all() and np.isnan(cast[2:]).all()
    assert (ref.round_e4m3([464.0, 500.0, -1e9]) == [448.0, 448.0, -448.0]).all()


def test_negative_values_that_round_to_zero_keep_their_sign_as_hardware_does():
    assert "−0.0" in E4M3_DOC and "−0.0" in E2M1_DOC
    tiny = np.array([-0.25, -0.2, -1e-3], dtype=np.float32)
    hardware = tiny.astype(ml_dtypes.float4_e2m1fn).astype(np.float64)
    assert np.signbit(hardware).all() and np.signbit(ref.to_e2m1(tiny.astype(np.float64))).all()
    e4m3 = np.array([-2.0 ** -11], dtype=np.float32)
    assert np.signbit(e4m3.astype(ml_dtypes.float8_e4m3fn).astype(np.float64)).all()
    assert np.signbit(ref.round_e4m3(e4m3.astype(np.float64))).all()


def test_quantize_docstring_states_mxfp4_floor_and_saturation_and_warns_about_log2():
    """The floor and the saturation to ±6 are the implementer's; never "slightly over 6", which understates
    it. The octave [4, 8) the floor puts a block's maximum in (and so how often it clips) is q12p's to work
    out, so the docstring does not state it."""
    assert "向下取整" in QUANTIZE_DOC and "饱和到 ±6" in QUANTIZE_DOC and "略超 6" not in QUANTIZE_DOC
    assert "[4, 8)" not in QUANTIZE_DOC and "三分之一" not in QUANTIZE_DOC
    assert "np.frexp" in QUANTIZE_DOC and "np.log2" in QUANTIZE_DOC
    x = np.zeros(32)
    x[0], x[1] = 8 * (1 - 2.0 ** -53), 1.0
    assert np.log2(x[0]) == 3.0  # the trap the docstring describes is real
    assert ref.quantize(x, "mxfp4")[0] == 6.0 and "应是 6.0" in QUANTIZE_DOC


@settings(derandomize=True, database=None, max_examples=200, deadline=None)
@given(st.floats(1e-30, 1e30), st.integers(0, 2**32 - 1))
def test_mxfp4_block_max_lands_in_4_to_8_after_floor_scaling(bmax, seed):
    block = np.random.default_rng(seed).uniform(-bmax, bmax, 32)
    block[0] = bmax
    _, k = np.frexp(bmax)
    scaled = np.abs(block).max() / np.ldexp(1.0, k - 3)
    assert 4 <= scaled < 8


def test_quantize_docstring_documents_the_generalisation():
    for word in ("block_size", "scale_format", '"e8m0"', '"e4m3"'):
        assert word in QUANTIZE_DOC
    x = np.random.default_rng(0).standard_t(5, 64)
    assert (ref.quantize(x, "mxfp4", scale_format="e4m3") == ref.quantize(x, "nvfp4", block_size=32)).all()
    assert (ref.quantize(x, "mxfp4", block_size=32, scale_format="e8m0") == ref.quantize(x, "mxfp4")).all()
