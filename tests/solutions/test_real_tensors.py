"""The real-tensor lab's data is real, small, traceable and shipped; its keys are measured on it."""

import json

import numpy as np
import pytest

from autograder.engine.registry import load_config
from solutions.lec01_codesign import handout_data
from solutions.lec01_codesign.answers import (
    REAL_TENSORS,
    answer_key,
    budget_choice,
    budget_frontier,
    rceil_quantize,
    real_tensor_errors,
)
from solutions.lec01_codesign.codesign import quantize
from solutions.lec01_codesign import real_tensors as extract

CONFIG = load_config("lec01_codesign")


@pytest.fixture(scope="module")
def tensors():
    return handout_data.load_real_tensors(REAL_TENSORS)


def test_the_file_is_small_and_shipped_in_the_student_folder():
    assert REAL_TENSORS.parent == CONFIG.folder and REAL_TENSORS.stat().st_size <= 2e6
    assert handout_data.REAL_TENSORS_FILE in CONFIG.trusted_files()  # the grader restores it as released


def test_provenance_names_package_version_layer_and_text(tensors):
    x, w, provenance = tensors
    assert provenance["package"] == extract.PACKAGE and provenance["model"] == extract.MODEL
    assert provenance["package_version"] and provenance["torch_version"]
    assert provenance["text"] == extract.TEXT
    assert f"encoder.layer.{extract.LAYER}.attention.self.query.weight" in provenance["W"]
    assert f"hidden_states[{extract.LAYER}]" in provenance["X"]
    assert x.dtype == w.dtype == np.float32 and w.shape == (384, 384) and x.shape[1] == 384 and x.shape[0] > 32


def test_the_activations_carry_channel_outliers_the_weights_do_not(tensors):
    x, w, _ = tensors
    channel_max = np.abs(x).max(axis=0)
    assert channel_max.max() > 5 * np.median(channel_max)  # a few channels dominate
    rows = np.abs(w).max(axis=0)
    assert rows.max() < 5 * np.median(rows)


def test_the_rotation_is_orthogonal_and_leaves_the_product_unchanged(tensors):
    x, w, _ = tensors
    h = handout_data.block_hadamard(384, handout_data.ROTATION_SIZE)
    assert np.allclose(h @ h.T, np.eye(384), atol=1e-12)
    assert np.allclose((x @ h) @ (w @ h).T, x @ w.T, rtol=1e-4, atol=1e-4)


def test_keys_are_measured_on_the_file(tensors):
    x, w, _ = tensors
    y = x.astype(np.float64) @ w.astype(np.float64).T
    qx, qw = (quantize(a.astype(np.float64).ravel(), "nvfp4").reshape(a.shape) for a in (x, w))
    direct = np.linalg.norm(qx @ qw.T - y) / np.linalg.norm(y)
    assert answer_key()["q23_real_nvfp4_error"] == pytest.approx(100 * direct, rel=1e-4)
    errors = real_tensor_errors()
    assert errors["fp4_tensor rotated"] < errors["fp4_tensor"]  # rotation rescues per-tensor FP4 ...
    assert handout_data.ROTATION_OPTIONS[answer_key()["q25_rotation_nvfp4"]][0] == (
        "smaller" if errors["nvfp4 rotated"] < errors["nvfp4"] else "larger")


def test_rceil_never_clips_and_uses_the_smallest_power_of_two_above_amax_over_6():
    rng = np.random.default_rng(1)
    a = rng.standard_t(df=3, size=(64, 32)) * 0.1
    a[0, :] = a[1, :] = 0.0
    a[1, 0] = 6 * 2.0 ** -3  # amax / 6 exactly a power of two: ceil(log2) is its exponent
    blocks = a.reshape(-1, 32)
    amax = np.abs(blocks).max(axis=1)
    live = amax > 0
    scale = 2.0 ** np.ceil(np.log2(amax[live] / 6))
    assert np.all((amax[live] / scale > 3) & (amax[live] / scale <= 6))
    q = rceil_quantize(a, 32).reshape(-1, 32)
    assert np.all(q[~live] == 0) and np.allclose(np.abs(q[live]).max(axis=1) <= 6 * scale, True)
    assert np.array_equal(q[1], 2.0 ** -3 * np.array([6.0] + [0.0] * 31))


def test_the_budget_choice_is_the_best_within_budget_and_lies_on_the_frontier():
    errors, options = real_tensor_errors(), handout_data.BUDGET_OPTIONS
    choice = budget_choice()
    assert handout_data.format_bits(options[choice][0][0]) <= handout_data.BIT_BUDGET
    assert choice in budget_frontier() and "q26_budget_choice" not in answer_key()  # a lab q27 discusses, not a key
    assert all(errors[choice] <= errors[k] for k, ((b, _), _) in options.items()
               if handout_data.format_bits(b) <= handout_data.BIT_BUDGET)
    assert any(handout_data.format_bits(b) > handout_data.BIT_BUDGET for (b, _), _ in options.values())
