"""The reference answers of q21 and q27 are released to students after the deadline: every figure in
them comes from hw_specs, the number formats or the answer key, so a changed chip figure or format
changes the text too. A figure typed into the text (or a number said in words, such as 翻倍) drifts.

The check reads explanations.py's source: the literal parts of the two rubrics' criteria (the text
around the {…} fields) may name things that contain digits (FP8, B300, q17, arXiv ids) and state the
model's own formula, but hold no other number.
"""

import ast
import re
from pathlib import Path

import pytest

EXPLANATIONS_PY = Path(__file__).resolve().parents[2] / "solutions" / "lec01_codesign" / "explanations.py"
COMPUTED_RUBRICS = ("q21_explain_codesign", "q27_explain_format")
# what may keep its digits: names (E4M3, FP32, B300, ex2, FlashAttention-4), item ids, demo numbers, a citation,
# and the lecture's per-exp FLOP formula (the model's definition, stated in the prompt, not a figure)
NAMES = (r"\bq\d+[a-z]?\b", r"[A-Za-z][A-Za-z-]*\d+[A-Za-z0-9]*", r"演示 \d", r"arXiv \d{4}\.\d{5}",
         r"2·d_qk \+ 2·d_v", r"d_qk \+ d_v")
NUMBER_WORDS = ("翻倍", "一半", "两倍", "十倍")


def _literal_parts(item: str) -> list[str]:
    """The text of the rubric's Criterion(...) calls outside their {…} fields."""
    tree = ast.parse(EXPLANATIONS_PY.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == item:
                    parts = []
                    for call in (n for n in ast.walk(value) if isinstance(n, ast.Call)):
                        for arg in call.args[1:]:
                            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                                parts.append(arg.value)
                            elif isinstance(arg, ast.JoinedStr):
                                parts += [v.value for v in arg.values if isinstance(v, ast.Constant)]
                    return parts
    raise AssertionError(f"{item} not found in {EXPLANATIONS_PY}")


@pytest.mark.parametrize("item", COMPUTED_RUBRICS)
def test_the_released_rubric_types_no_figure(item):
    parts = _literal_parts(item)
    assert parts, item
    typed = []
    for part in parts:
        rest = part
        for pattern in NAMES:
            rest = re.sub(pattern, " ", rest)
        typed += [f"{m.group(0)!r} in {part!r}" for m in re.finditer(r"\d+(?:\.\d+)?", rest)]
        typed += [f"{word!r} in {part!r}" for word in NUMBER_WORDS if word in part]
    assert typed == []


def test_the_rubrics_state_what_the_formats_and_chips_give():
    """The figures the two rubrics now compute are the ones the formats and hw_specs define."""
    import ml_dtypes
    import numpy as np

    import hw_specs
    from hw_specs import B200, B300
    from solutions.lec01_codesign.codesign import exp_ratio
    from solutions.lec01_codesign.explanations import RUBRICS
    from solutions.lec01_codesign.handout_data import HEAD_DIM

    q21 = "\n".join(c.expects for c in RUBRICS["q21_explain_codesign"])
    q27 = "\n".join(c.expects for c in RUBRICS["q27_explain_format"])
    top = float(ml_dtypes.finfo(ml_dtypes.float4_e2m1fn).max)  # 6: the largest E2M1 value
    emax = int(np.floor(np.log2(top)))  # 2: E8M0 FLOOR divides by 2^(floor(log2 amax) - emax)
    assert f"({top:g}, {2 ** (emax + 1):g})" in q27  # FLOOR: the scaled maximum lies in [4, 8); (6, 8) clips
    assert f"({top / 2:g}, {top:g}]" in q27  # RCEIL: 2^ceil(log2(amax / 6)) puts it in (3, 6]
    assert f"{B300.exp_per_s / B200.exp_per_s:.2f} 倍" in q21
    assert f"{exp_ratio(B300, 'fp8', HEAD_DIM, HEAD_DIM):.0%}" in q21
    rubin = hw_specs.EX2_PER_SM_PER_CLK["Rubin FP16"] / hw_specs.EX2_PER_SM_PER_CLK["Blackwell Ultra FP16"]
    assert f"{rubin:g} 倍" in q21


def _explanation_literal_parts(item: str) -> list[str]:
    """The text of an explanation's f-string outside its {…} fields."""
    tree = ast.parse(EXPLANATIONS_PY.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == item and isinstance(value, ast.JoinedStr):
                    return [v.value for v in value.values if isinstance(v, ast.Constant)]
    raise AssertionError(f"{item} not found in {EXPLANATIONS_PY}")


def test_the_weight_size_explanation_takes_its_figures_from_the_encoder_and_the_formats():
    """q35m's released answer states the shipped encoder's layer shapes, its layer count, NVFP4's bits
    per value and FP32's ratio: each from the encoder file and the formats, none typed (384 × 1536,
    6 layers, 4 + 8 / 16 = 4.5 bit and 32 / 4.5 were)."""
    typed = []
    for part in _explanation_literal_parts("q35m_nvfp4_weight_mb"):
        rest = part
        for pattern in NAMES:
            rest = re.sub(pattern, " ", rest)
        typed += [f"{m.group(0)!r} in {part!r}" for m in re.finditer(r"\d+(?:\.\d+)?", rest)]
    assert typed == []


def test_the_references_format_maxima_are_ml_dtypes():
    """The rubrics and explanations quote the reference's E2M1 and E4M3 maxima (a Gradescope bundle
    carries no ml_dtypes); they are the independent oracle's."""
    import ml_dtypes

    from solutions.lec01_codesign.codesign import E2M1_MAX, E4M3_MAX

    assert E2M1_MAX == float(ml_dtypes.finfo(ml_dtypes.float4_e2m1fn).max)
    assert E4M3_MAX == float(ml_dtypes.finfo(ml_dtypes.float8_e4m3fn).max)
