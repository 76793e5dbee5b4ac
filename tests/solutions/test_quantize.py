"""quantize: the four schemes against the ml_dtypes oracle, their edge cases, and their errors."""

import warnings

import numpy as np
import pytest

import oracles
from solutions.lec01_codesign import SCHEMES, quantize


def heavy_tailed(n, seed=0):
    """The lecture's "weights": Student-t with 5 degrees of freedom, times 0.02."""
    return np.random.default_rng(seed).standard_t(df=5, size=n) * 0.02


DATA = {
    "student_t": heavy_tailed(1 << 16, seed=1),
    "gaussian": np.random.default_rng(2).normal(0, 3.0, 1 << 16),
    "wide_uniform": np.random.default_rng(3).uniform(-1e4, 1e4, 1 << 16),
    "tiny_magnitudes": np.random.default_rng(4).normal(0, 1e-30, 1 << 16),
    "one_outlier": np.concatenate([np.full(1023, 1e-3), [1e3]]),
}


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("data", DATA)
def test_equals_oracle(scheme, data):
    x = DATA[data]
    np.testing.assert_array_equal(quantize(x, scheme), oracles.quantize(x, scheme))


@pytest.mark.parametrize("scheme", SCHEMES)
def test_zero_tensor_and_zero_blocks_give_zeros_without_warnings(scheme):
    x = heavy_tailed(128, seed=5)
    x[16:48] = 0.0  # one all-zero 32-block (mxfp4) = two all-zero 16-blocks (nvfp4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not np.any(quantize(np.zeros(64), scheme))
        q = quantize(x, scheme)
    assert not np.any(q[16:48]) and np.all(np.isfinite(q))


def test_nvfp4_block_whose_scale_rounds_to_zero_is_zero():
    """A block far below the global amax gets s_b = round_e4m3(tiny) = 0 and must become 0."""
    x = np.concatenate([np.full(16, 1e-12), np.full(16, 1.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q = quantize(x, "nvfp4")
    assert not np.any(q[:16]) and np.all(q[16:] == 1.0)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_result_is_float64_same_shape(scheme):
    x = heavy_tailed(64).astype(np.float32)
    q = quantize(x, scheme)
    assert q.dtype == np.float64 and q.shape == x.shape


@pytest.mark.parametrize(
    "args, message",
    [
        ((np.ones(64), "int4"), "unknown scheme 'int4'"),
        ((np.ones(48), "mxfp4"), "multiple of 32, got 48"),
        ((np.ones(20), "nvfp4"), "multiple of 16, got 20"),
        ((np.array([1.0, np.nan] * 16), "nvfp4"), "NaN or inf"),
        ((np.array([1.0, np.inf] * 16), "fp8_tensor"), "NaN or inf"),
        ((np.ones((4, 16)), "nvfp4"), r"1-D, got shape \(4, 16\)"),
        ((np.float64(3.0), "fp4_tensor"), r"1-D, got shape \(\)"),
    ],
)
def test_bad_input_raises_a_clear_value_error(args, message):
    with pytest.raises(ValueError, match=message):
        quantize(*args)


def test_lecture_demo2_figures_reproduce():
    """Seed 0, 2^20 values: the relative errors the lecture prints."""
    x = heavy_tailed(1 << 20, seed=0)
    rel = {s: np.linalg.norm(quantize(x, s) - x) / np.linalg.norm(x) for s in SCHEMES}
    printed = {s: f"{rel[s] * 100:.2f}" for s in SCHEMES}
    # Figures the lecture quotes, under the reference semantics.
    assert printed == {"fp8_tensor": "2.65", "fp4_tensor": "64.44", "mxfp4": "12.65", "nvfp4": "9.23"}
    q4 = quantize(x, "fp4_tensor")
    assert f"{np.mean((q4 == 0) & (x != 0)) * 100:.1f}" == "82.5"


def test_error_order_is_the_lecture_story():
    """Finer scales help: FP8 < NVFP4 < MXFP4 < FP4 per tensor, on several seeds."""
    for seed in range(3):
        x = heavy_tailed(1 << 14, seed=seed)
        err = {s: np.linalg.norm(quantize(x, s) - x) for s in SCHEMES}
        assert err["fp8_tensor"] < err["nvfp4"] < err["mxfp4"] < err["fp4_tensor"]
