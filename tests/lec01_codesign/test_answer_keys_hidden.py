"""A submission wrong only on the real chips must not learn the report's answer keys from its
feedback: the real chips' expected values (trend_row(B300, "nvfp4"), exp_ratio(B200, "fp8", 64, 64),
ridge points…) are exactly those keys, so those cases fail without showing them."""

from __future__ import annotations

import json
import re

import pytest

import hw_specs
from autograder.build import write_reference_submission
from autograder.engine import grade_submission, write_result
from autograder.engine.cases import render_number
from autograder.engine.feedback import submission_markdown
from autograder.lec01_codesign import answer_key
from autograder.sandbox import Limits

ASSIGNMENT = "lec01_codesign"
CHIP_FUNCTIONS = ("exp_ratio", "ridge_point", "trend_row")
# Appended to the reference: the three chip functions return 8/7 × the right value on a real chip
# (so every real-chip case fails) and the right value on every synthetic chip.
WRONG_ON_REAL_CHIPS = f"""

WRONG_FACTOR = 8 / 7  # not a ratio between any two real chips: the wrong values are no keys either
_REAL_CHIPS = {tuple(hw_specs.CHIPS)!r}


def _wrong_on_real_chips(function):
    def wrapped(chip, *args, **kwargs):
        value = function(chip, *args, **kwargs)
        if chip.name not in _REAL_CHIPS:
            return value
        if isinstance(value, dict):
            return {{k: None if v is None else WRONG_FACTOR * v for k, v in value.items()}}
        return WRONG_FACTOR * value
    return wrapped


exp_ratio = _wrong_on_real_chips(exp_ratio)
ridge_point = _wrong_on_real_chips(ridge_point)
trend_row = _wrong_on_real_chips(trend_row)
"""
MIN_SIGNIFICANT_DIGITS = 4  # shorter renderings ("3", "512") occur in any text by chance


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("keys-hidden")
    reference = root / "reference"
    write_reference_submission(ASSIGNMENT, reference)
    student = root / "real_chips_wrong"
    student.mkdir()
    # codesign.py only: an answered notebook would (rightly) echo the student's own answers
    source = (reference / "codesign.py").read_text("utf-8") + WRONG_ON_REAL_CHIPS
    (student / "codesign.py").write_text(source, "utf-8")
    result = grade_submission(ASSIGNMENT, student, limits=Limits(call_timeout=5.0, import_timeout=10.0))
    write_result(root / "out", result)
    results_json = (root / "out" / "results" / f"{result.student}.json").read_text("utf-8")
    return result, submission_markdown(result), results_json


def significant_digits(text: str) -> int:
    mantissa = text.split("e")[0]
    return len(re.sub(r"\D", "", mantissa).strip("0"))


def key_renderings() -> dict[str, set[str]]:
    """Every numeric key as a student could read it: repr, %.4g/%.6g, and scaled by 100 either way
    (percent keys are ratios × 100)."""
    renderings = {}
    for item, key in answer_key().items():
        if not isinstance(key, float):  # letters, and the measurement's checks (no one value to hide)
            continue
        shown = set()
        for value in (key, key / 100, key * 100):
            shown |= {repr(value), render_number(value), f"{value:.4g}", f"{value:.6g}", f"{value:.3f}"}
        renderings[item] = {s for s in shown if significant_digits(s) >= MIN_SIGNIFICANT_DIGITS}
    return renderings


def test_the_submission_fails_exactly_the_real_chip_cases(graded):
    result, _, _ = graded
    for function in CHIP_FUNCTIONS:
        item = result.item(function)
        assert item.status == "partial", (function, item.feedback_md[:500])
        assert "与参考值不符" in item.feedback_md and "期望值就是报告题的答案" in item.feedback_md
        assert "合成芯片" not in item.feedback_md.split("#### 未通过")[1].split("#### 通过")[0], \
            "only real-chip cases may fail"


def test_no_answer_key_appears_in_feedback_or_results_json(graded):
    _, markdown, results_json = graded
    texts = {"feedback markdown": markdown, "results JSON": json.loads(results_json) and results_json}
    # hex digests (fingerprint, case set) may contain any digit string by chance: they are not renderings
    texts = {where: re.sub(r"`[0-9a-f]{12}`|\b(sha256:)?[0-9a-f]{64}\b", "<digest>", text) for where, text in texts.items()}
    leaks = [(where, item, shown) for item, renderings in key_renderings().items() for shown in renderings
             for where, text in texts.items() if shown in text]
    assert not leaks


def test_the_renderings_catch_a_leak():
    """The search above is not vacuous: the headline key, shown as a check shows expected values, is found."""
    key = answer_key()["q01_compute_headline"]
    text = f"返回 {render_number(8 / 7 * key)}，期望 {render_number(key)}"
    assert any(shown in text for shown in key_renderings()["q01_compute_headline"])
    ratio = answer_key()["q17_backward_ratio"] / 100
    assert any(shown in f"期望 {render_number(ratio)}" for shown in key_renderings()["q17_backward_ratio"])


def test_real_chip_cases_hide_expected_values_and_synthetic_ones_show_them():
    from autograder.engine.cases import Returns
    from autograder.lec01_codesign import function_suites
    from autograder.lec01_codesign.chips import ChipArg

    real = [c.to_dict() for c in hw_specs.CHIPS.values()]
    for function in CHIP_FUNCTIONS:
        for case in function_suites()[function].cases:
            if not isinstance(case.expect, Returns):  # a "must raise" case has no value to show
                continue
            specs = [a.spec for a in (*case.call.args, *case.call.kwargs.values()) if isinstance(a, ChipArg)]
            assert case.reveal_expected == all(spec not in real for spec in specs), (function, case.label)
