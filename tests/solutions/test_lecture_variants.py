"""Lecture 1's per-student variants: a classmate's numbers fail this student's checks, every variant
is the same question (defined keys, plausible ranges, the claims of the explanations hold), and the
reference's notebook earns full marks in a student's variant."""

import hashlib
import itertools
import json
import math
import statistics
import tomllib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from autograder.engine import variants as engine_variants
from autograder.engine.registry import load_config
from hw_specs import B300, BYTES_PER_ELEM, CHIPS
from notebook_exec import answered_copy, execute_notebook
from solutions.lec01_codesign import answers, variants
from solutions.lec01_codesign.answers import answer_key, number_keys
from solutions.lec01_codesign.codesign import flops_per_exp, ridge_point
from solutions.lec01_codesign.handout_data import BOTTLENECK_OPTIONS, POSITION_OPTIONS, SIZE_OPTIONS, WALL_OPTIONS
from solutions.lec01_codesign.items import SAME_FOR_EVERYONE

CONFIG = load_config("lec01_codesign")
NUMBER_ITEMS = [item for item in CONFIG.items_of("number") if item.id in answer_key()]  # keyed: not the measurements
# The ones meant to vary: an item whose key is the same for everyone says why in items.SAME_FOR_EVERYONE,
# and copying it gains 1 point (test below), never a share of the items.
VARYING_NUMBER_ITEMS = [item for item in NUMBER_ITEMS if item.id not in SAME_FOR_EVERYONE]
CLASS = [f"s{i:03d}" for i in range(1, 51)]
PLAUSIBLE = {item["id"]: item["plausible"] for item in tomllib.loads(
    (CONFIG.folder / "grading.toml").read_text(encoding="utf-8"))["items"] if "plausible" in item}  # selfcheck's ranges
# Fixed test seeds stand in for an instructor's secret one (a class's parameters depend on it).
TEST_SEEDS = [hashlib.sha256(f"cs349e variants test seed {n}".encode()).hexdigest() for n in (1, 2)]


def _accepted(item, answer: float, key: float) -> bool:
    """The grader's number check (autograder/engine/report_items.py `_number`)."""
    return abs(answer - key) <= item.atol + item.rtol * abs(key)


def _class_keys(monkeypatch, seed_hex: str) -> list[dict]:
    monkeypatch.setattr(engine_variants, "read_seed", lambda name, root=None: bytes.fromhex(seed_hex))
    return [answer_key(engine_variants.params_for("lec01_codesign", sid)) for sid in CLASS]


def _differing_share(mine: dict, theirs: dict) -> float:
    """Share of the numeric items where `theirs` would NOT be accepted as `mine`'s answer."""
    return (sum(not _accepted(item, theirs[item.id], mine[item.id]) for item in VARYING_NUMBER_ITEMS)
            / len(VARYING_NUMBER_ITEMS))


# The share of keyed points every student shares. Two predict-then-verify follow-ups of the end-to-end
# lab (q35g, q34h: the whole model's measured ratios) raised it from 5 of 54 to 7 of 58 points; it
# returns under a tenth once they are keyed per student (the measurement over the student's own
# prediction, which varies with the tile).
MOST_SHARED = 0.125


def test_what_is_the_same_for_everyone_is_worth_little():
    """The items every student shares (one model, one published measurement) are 1 point each and,
    together, at most an eighth of the keyed points: copying a classmate gains them, nothing more."""
    keyed = [item for item in CONFIG.items_of("number", "choice") if item.id in answer_key()]
    same = [item for item in keyed if item.id in SAME_FOR_EVERYONE]
    assert {item.id for item in same} == set(SAME_FOR_EVERYONE)
    assert all(item.points == 1 for item in same)
    assert sum(item.points for item in same) <= MOST_SHARED * sum(item.points for item in keyed)


@pytest.mark.parametrize("seed_hex", TEST_SEEDS)
def test_any_two_students_of_a_class_of_50_differ_in_65_percent_of_the_numeric_items(monkeypatch, seed_hex):
    """Copying a classmate's numbers loses at least MIN_DIFFERING (15/23, 65 %) of the numeric items, for every ordered pair."""
    keys = _class_keys(monkeypatch, seed_hex)
    shares = [_differing_share(keys[a], keys[b]) for a, b in itertools.permutations(range(len(CLASS)), 2)]
    assert len(VARYING_NUMBER_ITEMS) >= 20
    assert min(shares) >= MIN_DIFFERING, f"min {min(shares):.3f}"
    assert statistics.median(shares) >= 0.90


# Real chips sustain 0.6-0.9 of their GEMM peak and 0.8-0.95 of their HBM rating, a lower precision no
# larger a share than a higher one: the trend's five numbers (q05 and q06b are one number times a
# constant) rest on narrow ranges, so a pair of students may share several of them. The bound is a
# share of the numeric items (set when there were 23, 15 of them; the new items keep it a share).
MIN_DIFFERING = 15 / 23

# Many classes, each under its own seed: the bound must hold for any instructor's seed, not for two.
MANY_CLASS_SEEDS = [hashlib.sha256(f"cs349e variants class {n}".encode()).hexdigest() for n in range(20)]


@pytest.mark.slow  # 1000 students drawn and keyed: about 80 s idle (once 35 s, when the variant store
@pytest.mark.timeout(1800)  # answered every class with the seed file's draw), several minutes on a loaded machine
def test_the_65_percent_bound_holds_in_every_one_of_20_classes(monkeypatch):
    """Every ordered pair of every class of 50 (20 seeds) differs in at least MIN_DIFFERING of the numeric items. The
    trend and decode numbers once hung on the same five measured shares, so two students close on those
    shared seven numbers (30 % of the items) in about one class in twenty."""
    worst = {}
    for seed_hex in MANY_CLASS_SEEDS:
        monkeypatch.setattr(engine_variants, "read_seed", lambda name, root=None, s=seed_hex: bytes.fromhex(s))
        keys = [number_keys(engine_variants.params_for("lec01_codesign", sid)) for sid in CLASS]
        worst[seed_hex[:8]] = min(_differing_share(keys[a], keys[b])
                                  for a, b in itertools.permutations(range(len(CLASS)), 2))
    shares = sorted(worst.values())
    summary = f"worst pair per class: min {shares[0]:.3f}, median {statistics.median(shares):.3f}; {worst}"
    assert shares[0] >= MIN_DIFFERING, summary


def test_number_keys_are_the_number_items_of_the_answer_key():
    params = variants.variant(np.random.default_rng(7))
    key = answer_key(params)
    assert number_keys(params) == {item.id: key[item.id] for item in NUMBER_ITEMS}


def test_two_ids_get_different_keys(monkeypatch):
    alice, bob = (answer_key(p) for p in _params_of(monkeypatch, "alice", "bob"))
    assert _differing_share(alice, bob) >= MIN_DIFFERING and _differing_share(alice, answer_key()) >= MIN_DIFFERING


def _params_of(monkeypatch, *ids):
    monkeypatch.setattr(engine_variants, "read_seed", lambda name, root=None: bytes.fromhex(TEST_SEEDS[0]))
    return [engine_variants.params_for("lec01_codesign", sid) for sid in ids]


def test_the_lecture_variant_is_the_lecture():
    """LECTURE is the spec sheet and the lecture's own numbers: its keys are the ones computed without parameters."""
    assert answer_key(variants.LECTURE) == answer_key()
    assert answer_key()["q01_compute_headline"] == pytest.approx(B300.peak_flops("nvfp4") / 1978.9e12)


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(st.integers(min_value=0, max_value=2**63 - 1))
def test_every_variant_is_plain_and_defines_every_key_inside_its_plausible_range(seed):
    params = variants.variant(np.random.default_rng(seed))
    assert json.loads(json.dumps(params)) == params and set(params) == set(variants.LECTURE)
    key = answer_key(params)
    assert set(key) == {item.id for item in CONFIG.items_of("number", "choice")} - _measured()
    for item in CONFIG.items_of("number"):
        if item.id in key:
            low, high = PLAUSIBLE[item.id]
            assert isinstance(key[item.id], float) and math.isfinite(key[item.id]) and low <= key[item.id] <= high, item.id
    for item in CONFIG.items_of("choice"):
        assert key[item.id] in item.choices, item.id


def _measured() -> set[str]:
    from autograder.lec01_codesign import key_checks

    return set(key_checks())


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(st.integers(min_value=0, max_value=2**63 - 1))
def test_every_variant_keeps_the_claims_the_explanations_make(seed):
    """What explanations.py states without a number holds in every variant: the conceptual choices keep
    their letter, the models stay in the regime the questions describe."""
    p = variants.variant(np.random.default_rng(seed))
    key = answer_key(p)
    # q06: an FP8 kernel meets the same-precision ratio, one computing in NVFP4 on its FP8 bytes the mixed one
    assert WALL_OPTIONS[key["q06_memory_wall"]][0] == {"fp8": "same_precision", "nvfp4_on_chip": "mixed_precision"}[p["wall_kernel"]]
    # q09e–q09g: the weights-only batch falls short of the ridge once KV is read; W4A8's boundary is the longer
    assert 0 < key["q09e_ridge_share_with_kv"] < 100
    assert answers.decode_context_limit("W4A8", p) > key["q09f_w4a4_context_limit"] > 0
    assert key["q02_format_gain"] > 1  # the format still gains: q05 = q04 × q02 inflates the ridge
    # decode on the serving B300: far below its ridge (q07), and W4A8 tops out at a smaller batch (q09b)
    assert key["q07_decode_intensity"] < ridge_point(answers.serve_chip(p), "nvfp4")
    assert key["q09b_decode_batch_w4a8"] < key["q09_decode_batch"]
    assert SIZE_OPTIONS[key["q10_size_sensitive"]][0] == "fp4_tensor"
    assert BOTTLENECK_OPTIONS[key["q13_bottleneck"]][0] == ("exp" if answers.bottleneck_ratio(p) > 1 else "mma")
    assert POSITION_OPTIONS[key["q18c_measured_position"]][0] == "below"
    assert 0 < key["q16_software_exp_share"] < 100  # some exp must move, not all
    assert key["q17_backward_ratio"] < 100  # "the backward pass barely cares about exp"
    # q18: one chip exp-bound, the other matmul-bound, so the overlap speed-up moves with the shape
    exp_bound = [flops_per_exp(*p["speedup_shape"]) / chip.peak_flops("fp8") < 1 / chip.exp_per_s
                 for chip in (CHIPS[name] for name in p["speedup_chips"])]
    assert exp_bound in ([True, False], [False, True])
    assert key["q18_model_speedup"] > 1 and key["q18b_serial_speedup"] > 1
    assert 0 < key["q19_mma_efficiency"] < 100
    assert 28 <= key["q12b_e8m0_clipped_blocks"] <= 56  # "about four in ten blocks (three to over five)"
    assert p["model_params_b"] * 1e9 * BYTES_PER_ELEM["nvfp4"] < B300.mem_cap  # the weights fit, KV gets the rest
    assert key["q24_rotated_fp4_tensor_error"] < key["q22_real_fp4_tensor_error"]  # the rotation rescues per-tensor FP4


def test_the_choice_keys_that_follow_the_data_are_not_degenerate():
    """q25 (rotation and NVFP4) is read off each student's own tile, q06 follows the student's kernel and
    q09g the service's context: across a class every answer occurs, so no option is a letter to copy."""
    keys = [answer_key(variants.variant(np.random.default_rng(seed))) for seed in range(40)]
    assert {k["q25_rotation_nvfp4"] for k in keys} == {"A", "B"}
    assert {k["q06_memory_wall"] for k in keys} == {"A", "B"}
    assert {k["q09g_decode_precision"] for k in keys} == {"A", "B", "C"}
    for item in ("q03_least_grown", "q13_bottleneck", "q14_mla_effect"):  # same for everyone before (issue 27, item 12)
        assert len({k[item] for k in keys}) >= 2, item


def test_a_variant_key_is_computed_once_per_parameter_set():
    """Each student's keys are computed once (cached per parameter set; how long one takes is
    measured in benchmarks/bench_student_folder.py)."""
    from solutions.lec01_codesign.answers import _answer_key

    params = variants.variant(np.random.default_rng(1000))
    answer_key(params)
    hits = _answer_key.cache_info().hits
    again = answer_key(params)
    assert _answer_key.cache_info().hits == hits + 1 and again == answer_key(params)


def test_the_reference_notebook_earns_every_key_in_a_students_variant(tmp_path, monkeypatch):
    """The answered notebook reads VARIANT: run as a student, its answers are that student's keys."""
    folder = answered_copy(tmp_path / "lec01_codesign")
    (params,) = _params_of(monkeypatch, "s017")
    monkeypatch.setattr(engine_variants, "params_for", lambda name, sid: params)  # the notebook's env uses it
    result = execute_notebook(folder, [item.id for item in NUMBER_ITEMS] + [i.id for i in CONFIG.items_of("choice")],
                              student_id="s017")
    key = answer_key(params)
    assert result.errors == []
    for item in NUMBER_ITEMS:
        assert _accepted(item, result.answers[item.id], key[item.id]), item.id
    for item in CONFIG.items_of("choice"):
        assert result.answers[item.id].upper() == key[item.id], item.id


def test_a_model_that_leaves_w4a4_no_context_is_drawn_again(monkeypatch):
    """q09f's lesson: W4A4 reaches its ridge within the HBM up to a context of at least 64 tokens. The draw
    did not hold it: in an independent review over 400 ids, one (24B parameters, 111 layers × 16 KV heads
    × 128) got 57.7 tokens, so `check` passed or failed with the instructor's seed."""
    from autograder.engine import key_cache

    monkeypatch.setattr(key_cache, "ENABLED", False)
    monkeypatch.setattr(engine_variants, "read_seed",
                        lambda name, root=None: bytes.fromhex(hashlib.sha256(b"cs349e independent review seed").hexdigest()))
    p = engine_variants.params_for("lec01_codesign", "review-312")
    assert answers.decode_context_limit("W4A4", p) >= variants.MIN_W4A4_CONTEXT
