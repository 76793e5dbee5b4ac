"""The end-to-end lab (q34a–q36): the shipped encoder is the real model, its numpy forward is the
model's own, and the keys computed from it survive the arithmetic differences of another machine."""

import json
import subprocess
import sys

import numpy as np
import pytest

from autograder.engine.registry import REPO_ROOT, load_config
from solutions.lec01_codesign import answers, encoder
from solutions.lec01_codesign.real_tensors import MODEL, PACKAGE, SENTENCE_PAIRS

CONFIG = load_config("lec01_codesign")
RTOL = {item.id: item.rtol for item in CONFIG.items}
END_ITEMS = ("q34a_fp8_end_deficit", "q34p_nvfp4_end_prediction", "q34b_nvfp4_end_deficit", "q35_fp4_rank_agreement",
             "q35p_fp4_end_prediction", "q34r_h16_end_prediction", "q35g_fp4_end_over_fp8", "q34h_h16_end_over_fp8")
MAX_MB = 25  # what a student folder carries for this lab


@pytest.fixture(scope="module")
def shipped():
    return encoder.load_encoder(answers.ENCODER)


def test_the_file_is_the_whole_encoder_stored_compactly(shipped):
    model, sentences, pairs, provenance = shipped
    assert answers.ENCODER.stat().st_size < MAX_MB * 1e6
    assert (provenance["package"], provenance["model"]) == (PACKAGE, MODEL)
    assert sum(name.endswith(".query.w") for name in model) == 6  # all six layers, every linear layer of each
    assert all(f"layer{i}.{name}.w" in model for i in range(6) for name in encoder.LINEAR_LAYERS)
    with np.load(answers.ENCODER) as data:  # the linear weights (the bulk) as float16
        assert {data[f"layer{i}.{name}.w"].dtype for i in range(6) for name in encoder.LINEAR_LAYERS} == {np.dtype("float16")}
        assert data["emb.words"].shape[0] == len(np.unique(data["token_ids"]))  # only the rows the sentences use
    assert sentences == [s for pair in SENTENCE_PAIRS for s in pair]
    assert pairs.tolist() == [[2 * i, 2 * i + 1] for i in range(len(SENTENCE_PAIRS))]


def test_the_numpy_forward_gives_the_models_own_sentence_embeddings(shipped):
    """The torch model's embeddings (float32 weights) travel in the file: the numpy forward on the
    stored float16 weights must match them to a cosine of 1 − 1e-3."""
    model = shipped[0]
    with np.load(answers.ENCODER) as data:
        reference = data["torch_embeddings"].astype(np.float64)
    cosines = np.sum(encoder.encode(model, encoder.linear_weights(model)) * reference, axis=1)
    assert cosines.min() >= 1 - 1e-3, cosines


def test_a_wrong_forward_is_caught_by_that_check(shipped):
    """The same comparison fails a forward with one layer's LayerNorm dropped: the check can fail."""
    model = dict(shipped[0])
    model["layer3.norm2.w"] = np.ones_like(model["layer3.norm2.w"])
    model["layer3.norm2.b"] = np.zeros_like(model["layer3.norm2.b"])
    with np.load(answers.ENCODER) as data:
        reference = data["torch_embeddings"].astype(np.float64)
    cosines = np.sum(encoder.encode(model, encoder.linear_weights(model)) * reference, axis=1)
    assert cosines.min() < 1 - 1e-3


def test_rotate16_is_the_block_hadamard_rotation():
    a = np.random.default_rng(0).standard_normal((3, 64))
    from solutions.lec01_codesign.handout_data import block_hadamard

    np.testing.assert_allclose(encoder.rotate16(a), a @ block_hadamard(64, encoder.ROTATION_BLOCK), rtol=1e-12, atol=1e-12)


_KEYS_AT = """
import json, sys
from threadpoolctl import threadpool_limits
with threadpool_limits(int(sys.argv[1])):
    from solutions.lec01_codesign import answers
    print(json.dumps(answers.end_to_end_keys()))
"""


def test_the_keys_are_the_same_with_one_and_two_blas_threads():
    runs = [json.loads(subprocess.run([sys.executable, "-c", _KEYS_AT, str(n)], cwd=REPO_ROOT, check=True,
                                      capture_output=True, text=True).stdout) for n in (1, 2)]
    for item in END_ITEMS:
        rtol = RTOL[item]
        assert runs[0][item] == pytest.approx(runs[1][item], rel=rtol / 2), item


def test_the_keys_survive_float32_rounding_differences(shipped):
    """Another BLAS sums in another order: emulate it by moving one bias by ~10 float32 ulps. Quantized
    activations may land on a neighbouring grid point; each key must stay within its tolerance."""
    model, _, pairs, _ = shipped
    key = answers.end_to_end_keys()
    tile = answers.end_tile_errors()
    for seed in range(2):
        moved = dict(model)
        bias = model["emb.norm.b"]
        moved["emb.norm.b"] = (bias * (1 + 1e-6 * np.random.default_rng(seed).standard_normal(bias.shape))).astype(np.float32)
        fp32 = encoder.encode(moved, encoder.linear_weights(moved))
        run = {name: encoder.encode(moved, encoder.linear_weights(moved, *encoder.END_FORMATS[name]), *encoder.END_FORMATS[name])
               for name in ("fp8_tensor", "fp4_tensor", "nvfp4", "nvfp4 + H16")}
        fp8 = answers.END_UNIT * encoder.end_deficit(run["fp8_tensor"], fp32)
        predicted = fp8 * (tile["nvfp4"] / tile["fp8_tensor"]) ** 2
        similarity = encoder.pair_similarities(fp32, pairs)
        moved_keys = {
            "q34a_fp8_end_deficit": fp8, "q34p_nvfp4_end_prediction": predicted,
            "q34b_nvfp4_end_deficit": answers.END_UNIT * encoder.end_deficit(run["nvfp4"], fp32),
            "q35_fp4_rank_agreement": 100 * encoder.rank_agreement(encoder.pair_similarities(run["fp4_tensor"], pairs), similarity),
            "q35p_fp4_end_prediction": (tile["fp4_tensor"] / tile["fp8_tensor"]) ** 2,
            "q34r_h16_end_prediction": (tile["nvfp4 + H16"] / tile["fp8_tensor"]) ** 2,
        }
        for follow_up, name, prediction in (("q35g_fp4_end_over_fp8", "fp4_tensor", "q35p_fp4_end_prediction"),
                                            ("q34h_h16_end_over_fp8", "nvfp4 + H16", "q34r_h16_end_prediction")):
            moved_keys[follow_up] = answers.END_UNIT * encoder.end_deficit(run[name], fp32) / fp8
        for item in END_ITEMS:
            assert moved_keys[item] == pytest.approx(key[item], rel=RTOL[item]), (seed, item)


def test_the_prediction_is_the_error_squared_model_not_the_error_itself():
    """q34p's key: 1 − cos grows with the square of the error. The linear guess misses by far more
    than the tolerance, so the item tells the two models apart."""
    key, tile = answers.end_to_end_keys(), answers.end_tile_errors()
    linear = key["q34a_fp8_end_deficit"] * tile["nvfp4"] / tile["fp8_tensor"]
    assert abs(linear / key["q34p_nvfp4_end_prediction"] - 1) > 5 * RTOL["q34p_nvfp4_end_prediction"]


def test_the_measurement_typed_as_the_prediction_misses_its_key():
    """q34p asks for the error-squared model's prediction before q34b measures NVFP4's end effect
    (the same figure for everyone, printed a few cells below): typing the measurement in instead of
    the model must miss the key, for every student, or a third of a class earned the item's points
    without the model."""
    from autograder.engine.variants import lecture_params, params_for

    measured = answers.end_to_end_keys()["q34b_nvfp4_end_deficit"]
    rtol = RTOL["q34p_nvfp4_end_prediction"]
    drawn = [lecture_params("lec01_codesign")] + [params_for("lec01_codesign", f"student-{i}") for i in range(40)]
    hit = [i for i, p in enumerate(drawn)
           if abs(measured - answers.end_to_end_keys(p)["q34p_nvfp4_end_prediction"])
           <= rtol * answers.end_to_end_keys(p)["q34p_nvfp4_end_prediction"]]
    assert hit == []


def test_the_weight_count_is_the_models():
    assert answers.nvfp4_weight_mb() == pytest.approx(6 * (4 * 384 * 384 + 2 * 384 * 1536) * 4.5 / 8 / 1e6)


# The lab runs in every grading of every submission: its work is budgeted. Quantizing the 36 linear
# layers' 10.6 M weights is the bulk (≈ 0.27 s per format with the reference `quantize`), so the
# lab quantizes them once per format and for at most four formats (FP8 calibrates q34p, NVFP4
# verifies it, per-tensor FP4 is q35, NVFP4 after H16 is the rotation; MXFP4 lies between the two
# FP4s and is in the tile tables already).
MAX_WEIGHT_PASSES = 4


def test_the_lab_quantizes_the_weights_at_most_once_per_format_and_for_four_formats(shipped, monkeypatch):
    model = shipped[0]
    shapes = {w.shape for w in encoder.linear_weights(model).values()}
    weights = sum(w.size for w in encoder.linear_weights(model).values())
    quantized = []
    real = encoder.quantize_matrix
    monkeypatch.setattr(encoder, "quantize_matrix", lambda a, scheme, *rest: quantized.append(np.shape(a)) or real(a, scheme, *rest))
    answers.end_to_end.__wrapped__()
    weight_values = sum(np.prod(shape) for shape in quantized if shape in shapes)  # not the activations (tokens × width)
    assert weight_values <= MAX_WEIGHT_PASSES * weights, weight_values / weights
    assert sum(scheme is not None for scheme, _ in encoder.END_FORMATS.values()) <= MAX_WEIGHT_PASSES


def test_the_file_loads_without_inflating():
    """Inflating the 20 MB took ≈ 0.13 s of every grading; float16 weights deflate by 7 % only."""
    import zipfile

    with zipfile.ZipFile(answers.ENCODER) as archive:
        assert {member.compress_type for member in archive.infolist()} == {zipfile.ZIP_STORED}
