"""The answer key covers exactly the auto-graded questions, is computed quickly, cannot be copied
from the lecture's printout, and every question has one explanation (with a points-per-criterion
rubric for the text questions) that states no rule the reference contradicts."""

import math
import re

import numpy as np
import pytest

import solutions.lec01_codesign.answers as answers
from autograder.engine.registry import load_config
from core.script_output import REPO, run_python
from solutions.lec01_codesign import handout, to_e2m1
from solutions.lec01_codesign.answers import answer_key
from solutions.lec01_codesign.explanations import EXPLANATIONS, RUBRICS, rubric_markdown

CONFIG = load_config("lec01_codesign")
LECTURE = REPO.parent / "shared" / "lecture" / "05_codesign_blackwell_ultra.py"


def test_keys_cover_exactly_the_number_and_choice_items():
    """The reference's keys and the checks (measurements, follow-ups) together cover every keyed item, once."""
    from autograder.lec01_codesign import key_checks

    assert not set(answer_key()) & set(key_checks())
    assert set(answer_key()) | set(key_checks()) == {item.id for item in CONFIG.items_of("number", "choice")}


def test_key_types_fit_the_item_kinds():
    key = answer_key()
    for item in CONFIG.items_of("number"):
        if item.id in key:
            assert isinstance(key[item.id], float) and math.isfinite(key[item.id]), item.id
    for item in CONFIG.items_of("choice"):
        assert key[item.id] in item.choices, item.id


def test_number_keys_lie_in_the_plausible_range_the_selfcheck_states():
    import tomllib

    raw = tomllib.loads((CONFIG.folder / "grading.toml").read_text(encoding="utf-8"))
    plausible = {item["id"]: item["plausible"] for item in raw["items"] if "plausible" in item}
    assert set(plausible) == {item.id for item in CONFIG.items_of("number")}
    key = answer_key()
    for item_id, (low, high) in plausible.items():
        if item_id in key:  # the measured items have checks, not values
            assert low <= key[item_id] <= high, item_id


def test_every_question_has_one_chinese_explanation():
    """One source: explanations.py; answers.py carries keys only."""
    assert not hasattr(answers, "EXPLANATIONS")
    assert set(EXPLANATIONS) == {item.id for item in CONFIG.items_of("number", "choice", "text")}
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in text) for text in EXPLANATIONS.values())


def test_text_rubrics_give_points_per_criterion_that_add_up_to_the_item():
    text_items = {item.id: item for item in CONFIG.items_of("text")}
    assert set(RUBRICS) == set(text_items)
    for item_id, criteria in RUBRICS.items():
        assert sum(c.points for c in criteria) == text_items[item_id].points, item_id
        assert all(c.points > 0 and c.asks and c.expects for c in criteria)


def test_rubric_is_shown_with_the_question_and_in_full_in_the_solutions():
    """The TA reads the criteria next to the answer (formgrader shows the prompt cell); students see
    what is asked, not what a full answer says; the released solutions show both."""
    prompts = {cell.id: cell.prompt for cell in handout.CELLS if getattr(cell, "id", None) in RUBRICS}
    for item_id, criteria in RUBRICS.items():
        assert rubric_markdown(item_id, with_expectations=False) in prompts[item_id]
        for c in criteria:
            assert f"（{c.points} 分）{c.asks}" in prompts[item_id] and c.expects not in prompts[item_id]
            assert c.expects in EXPLANATIONS[item_id]


def test_text_prompts_do_not_give_away_a_graded_choice():
    """q20 must not state which scheme's error grows with the data (that is q10's answer)."""
    prompt = next(cell.prompt for cell in handout.CELLS if getattr(cell, "id", None) == "q20_explain_scaling")
    assert "越大误差越大" not in prompt and "误差越大" not in prompt


# --- no text states a rounding rule the reference contradicts ------------------------------------
def _all_student_texts() -> dict[str, str]:
    texts = {f"explanation {k}": v for k, v in EXPLANATIONS.items()}
    for cell in handout.CELLS:
        for attr in ("source", "prompt", "answer"):
            if isinstance(getattr(cell, attr, None), str):
                texts[f"handout {getattr(cell, 'id', type(cell).__name__)} {attr}"] = getattr(cell, attr)
    texts["student README"] = (CONFIG.folder / "README.md").read_text(encoding="utf-8")
    return texts


@pytest.mark.parametrize("where", sorted(_all_student_texts()))
def test_no_text_says_values_below_a_tie_round_to_zero_strictly(where):
    """"小于 0.25 变成 0" is wrong: 0.25 itself goes to 0 (ties to even)."""
    text = _all_student_texts()[where]
    assert to_e2m1(0.25) == 0.0
    assert not re.search(r"(小于|低于|<)\s*0\.25", text), where
    assert not re.search(r"小于\s*E2M1 最小非零值 0\.5 的一半", text), where


def _e2m1_texts() -> dict[str, str]:
    """Where the student reads E2M1 examples: the texts above, the released to_e2m1 docstring and
    the public cases of to_e2m1 (their `why` strings)."""
    import ast

    texts = dict(_all_student_texts())
    for name in ("codesign.py", "public_cases.py"):
        tree = ast.parse((CONFIG.folder / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "to_e2m1":
                texts[f"{name} to_e2m1 docstring"] = ast.get_docstring(node)
            elif (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Case" and node.args
                  and getattr(node.args[0], "value", None) == "to_e2m1"):
                strings = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
                texts[f"{name} case {strings[1]}"] = "to_e2m1: " + "".join(strings[2:])
    return texts


def test_e2m1_examples_in_texts_agree_with_the_reference():
    """Every `a → b` example quoted for E2M1 in the texts is what to_e2m1 returns."""
    pattern = re.compile(r"(-?\d+(?:\.\d+)?)\s*→\s*(-?\d+(?:\.\d+)?)")
    checked = 0
    for where, text in _e2m1_texts().items():
        for line in text.splitlines():
            if "E2M1" in line or "to_e2m1" in line or "平局" in line or "docstring" in where or "case" in where:
                for a, b in pattern.findall(line):
                    if float(a) <= 8:  # E2M1's range; E4M3 examples are checked in test_docstrings
                        assert to_e2m1(float(a)) == float(b), (where, line)
                        checked += 1
    assert checked > 0, "no E2M1 example found in the texts: the check above checked nothing"


# --- the lecture's printout cannot be copied into the answers ------------------------------------
# What the lecture's observations print that a question could ask for (regex on its output).
LECTURE_QUANTITIES = {
    "NVFP4 error (%)": r"误差降到 ([\d.]+)%",
    "MXFP4 error (%)": r"MXFP4 的块更大.*?误差 ([\d.]+)%",
    "FP4 error (%)": r"FP4 的相对误差是 ([\d.]+)%",
    "H100 BF16 exp ratio, d = 128 (%)": r"BF16 下 exp 只需要矩阵乘法时间的 (\d+)%",
    "H100 FP8 exp ratio, d = 128 (%)": r"，FP8 下 (\d+)%",
    "max params in 288 GB (B)": r"最多能放 (\d+)B 参数",
    "KV space left (GB)": r"还剩 ([\d.]+) GB",
    "H100 ridge (FLOP/B)": r"屋脊点从 ([\d,]+) 涨到",
    "B300 ridge (FLOP/B)": r"屋脊点从 [\d,]+ 涨到 ([\d,]+)",
}


@pytest.fixture(scope="module")
def lecture_quantities():
    if not LECTURE.exists():
        pytest.skip(f"lecture script not found at {LECTURE}")
    result = run_python([str(LECTURE)], cwd=REPO)
    assert result.returncode == 0, result.stderr
    found = {name: float(re.search(pattern, result.stdout)[1].replace(",", ""))
             for name, pattern in LECTURE_QUANTITIES.items()}
    found["ridge growth, mixed precision (x)"] = found["B300 ridge (FLOP/B)"] / found["H100 ridge (FLOP/B)"]
    return found


def test_no_number_key_can_be_copied_from_the_lecture(lecture_quantities):
    """Copying the lecture's printout (NVFP4's 9.23 %, 43 %/86 %, 512 B, 119.2 GB, 591 → 1,875) earns
    nothing: every number key is outside its tolerance of every quantity the lecture prints, except
    the vendor headline q01 (the base of q02) and q05, the precision-mixing ratio students must
    compute to see why it misleads. And q35: a share of 28 sentence-pair orderings (25 of 28) whose
    two-ordering tolerance spans 82–96 %, where the lecture's 86 % exp share of H100 also lies — an
    unrelated quantity, for a 1-point item whose key is the same for everyone. And q35p: its 40 %
    tolerance accepts both forms of q34p's model (r²/2 and 1 − 1/√(1 + r²)), and the lecture's own
    tile (the whole X and W) puts the lecture's KV space left (GB) inside it: an unrelated quantity,
    for a 1-point read-off that every student answers on their own tile."""
    key = answer_key()
    allowed = {"q01_compute_headline", "q05_ridge_mixed_precision", "q35_fp4_rank_agreement", "q35p_fp4_end_prediction"}
    copied = {(item.id, name) for item in CONFIG.items_of("number") if item.id not in allowed and item.id in key
              for name, n in lecture_quantities.items() if abs(n - key[item.id]) <= item.rtol * abs(key[item.id])}
    assert copied == set()


def test_same_precision_ridge_moves_little_and_mixing_precisions_inflates_it():
    key = answer_key()
    assert 1.0 < key["q04_ridge_same_precision"] < 1.1
    assert key["q05_ridge_mixed_precision"] == pytest.approx(key["q04_ridge_same_precision"] * key["q02_format_gain"])
    assert np.isclose(key["q15_h100_tensor_basis"], 50, atol=0.5)
