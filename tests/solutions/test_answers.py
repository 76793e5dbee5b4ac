"""The answer key covers exactly the auto-graded questions, is computed quickly, and every
question has an explanation."""

import math
import time

from autograder.engine.registry import load_config
from solutions.lec01_codesign.answers import EXPLANATIONS, answer_key

CONFIG = load_config("lec01_codesign")


def test_keys_cover_exactly_the_number_and_choice_items():
    assert set(answer_key()) == {item.id for item in CONFIG.items_of("number", "choice")}


def test_key_types_fit_the_item_kinds():
    key = answer_key()
    for item in CONFIG.items_of("number"):
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
        assert low <= key[item_id] <= high, item_id


def test_every_question_has_a_chinese_explanation():
    assert set(EXPLANATIONS) == {item.id for item in CONFIG.items_of("number", "choice", "text")}
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in text) for text in EXPLANATIONS.values())


def test_the_key_is_computed_fast_enough_to_grade_every_submission():
    answer_key()  # warm imports
    start = time.perf_counter()
    answer_key()
    assert time.perf_counter() - start < 0.5
