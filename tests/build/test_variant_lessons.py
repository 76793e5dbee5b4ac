"""`check`'s lessons step (autograder/build/variant_check.py `check_lessons`): does it name the item,
the variant and the numbers when a drawn world is implausible or a choice's key is a coin toss?"""

import numpy as np
import pytest

from autograder.build import variant_check
from autograder.engine import variants as engine_variants
from solutions.lec01_codesign import answers, variants
from solutions.lec01_codesign.lessons import LESSONS


def _check_planted(monkeypatch, planted: dict, label: str = "planted-1"):
    monkeypatch.setattr(variant_check, "_drawn_one_by_one", lambda name, n: iter([(label, planted)]))
    return variant_check.check_lessons("lec01_codesign", 1)


def _student(seed: int = 5) -> dict:
    return variants.variant(np.random.default_rng(seed))


def test_a_drawn_variant_keeps_every_lesson(monkeypatch):
    summary = _check_planted(monkeypatch, _student())
    assert summary.problems == []
    assert len(summary.rows) == len(LESSONS)


def test_a_planted_implausible_chip_fails_naming_the_item_the_variant_and_the_numbers(monkeypatch):
    """NVFP4 sustaining a larger share of its peak than FP8 on the same chip, HBM at half its rating."""
    planted = {**_student(), "b300_fp8_share": 0.45, "b300_nvfp4_share": 0.9, "b300_bw_share": 0.5}
    problems = "\n".join(_check_planted(monkeypatch, planted).problems)
    assert "q02_format_gain: B300's NVFP4 sustains no larger a share" in problems
    assert "variant planted-1: 2, expected in [0.7, 1]" in problems
    assert "b300_nvfp4_share=0.9" in problems
    assert "q04_ridge_same_precision: HBM sustains near its rating on B300" in problems


def test_a_model_too_large_for_its_crossover_fails_on_q09d(monkeypatch):
    """The lecture's 300B model: at q09d's context the KV cache equals the weights, 337.5 GB > 288 GB."""
    planted = {**_student(), "model_params_b": 300, "kv_layers": 64, "kv_heads": 8, "kv_head_dim": 128, "kv_batch": 64}
    problems = "\n".join(_check_planted(monkeypatch, planted).problems)
    assert "q09d_kv_equal_weights_context: at the crossover, weights and KV cache fit in the usable HBM" in problems


def test_a_planted_zero_margin_choice_fails_naming_the_item(monkeypatch):
    """A data seed whose 2^12-value sample already holds the big outlier: per-tensor FP4's error barely
    grows, so q10's key leads by (nearly) nothing — the noise the variant draw now redraws."""
    base = _student()
    seed = next(s for s in range(1, 5000)
                if 100 * answers.sweep_growth(s, base["demo2_df"], base["demo2_scale"], "fp4_tensor")
                < variants.MARGINS["q10_size_sensitive"])
    summary = _check_planted(monkeypatch, {**base, "demo2_seed": seed})
    problems = "\n".join(summary.problems)
    assert "q10_size_sensitive: the key leads the runner-up" in problems and "variant planted-1" in problems
    assert f"demo2_seed={seed}" in problems


def test_a_tile_on_which_the_rotation_changes_nothing_fails_on_q25(monkeypatch):
    base = _student()
    rng = np.random.default_rng(0)
    for _ in range(2000):
        tokens = int(rng.integers(4, 25))
        tile = {"real_tokens": [int(rng.integers(0, variants.REAL_TOKENS - tokens + 1)), tokens],
                "real_outputs": [16 * int(rng.integers(0, 22)), 16], "rotation_size": int(rng.choice(variants.ROTATION_SIZES))}
        if answers.tile_margins(answers.real_tensor_errors(tile))["q25_rotation_nvfp4"] < 0.05:
            break
    else:
        pytest.fail("no tile with a rotation effect under 0.05 pp in 2000 draws")
    problems = "\n".join(_check_planted(monkeypatch, {**base, **tile}).problems)
    assert "q25_rotation_nvfp4: the key leads the runner-up" in problems


def test_the_lecture_is_the_spec_sheet_and_exempt_from_the_measured_shares_only(monkeypatch):
    summary = _check_planted(monkeypatch, variants.LECTURE, label="LECTURE")
    assert summary.problems == []


@pytest.mark.slow  # about 2 minutes: the step `check lec01_codesign` runs
def test_lecture_1_keeps_every_lesson_in_1000_variants():
    summary = variant_check.check_lessons("lec01_codesign", variant_check.LESSON_SAMPLES)
    assert summary.samples >= 1000
    assert summary.problems == []


def test_a_second_check_reads_each_variants_lesson_values_instead_of_computing_them(monkeypatch, tmp_path):
    """`check` and this file's 1000-variant test draw the same variants (check-1, …): what one computed
    (parameters, keys, and the lessons' values: q10's size sweep, the tile's errors) the other reads."""
    from autograder.engine import key_cache

    monkeypatch.setattr(key_cache, "store_root", lambda: tmp_path / "store")
    first = variant_check.check_lessons("lec01_codesign", 3)
    calls = []

    def counted(name):  # what the lessons' values compute with
        original = getattr(answers, name)

        def wrapper(*args, **kwargs):
            calls.append(name)
            return original(*args, **kwargs)
        monkeypatch.setattr(answers, name, wrapper)

    for name in ("size_growth", "real_tensor_errors", "decode_context_limit", "growth_step", "model_speedup"):
        counted(name)
    answers._answer_key.cache_clear()
    second = variant_check.check_lessons("lec01_codesign", 3)
    assert second.rows == first.rows and second.problems == first.problems
    assert calls == []
