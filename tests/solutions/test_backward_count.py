"""q17 asks the student to count the backward pass's matmul work per exp: three products along d_qk,
two along d_v. The likeliest slip swaps the two. Over 4,000 draws, that count passed q17's tolerance
for 17 % of the ids (heads with d_v just below d_qk): a wrong count earned the 4 points."""

from functools import lru_cache

import numpy as np

from autograder.engine.registry import load_config
from solutions.lec01_codesign import variants
from solutions.lec01_codesign.answers import number_keys

CLASS = 400


@lru_cache(maxsize=1)
def _class() -> tuple[dict, ...]:
    return tuple(variants.variant(np.random.default_rng(seed)) for seed in range(CLASS))


def test_a_count_with_the_head_dimensions_swapped_misses_q17s_key_unless_the_head_is_square():
    item = next(i for i in load_config("lec01_codesign").items_of("number") if i.id == "q17_backward_ratio")
    passed = []
    for p in _class():
        d_qk, d_v = p["backward_shape"]
        if d_qk == d_v:
            continue
        key = number_keys(p)["q17_backward_ratio"]
        swapped = key * (6 * d_qk + 4 * d_v) / (4 * d_qk + 6 * d_v)   # the same ratio over 4·d_qk + 6·d_v
        if abs(swapped - key) <= 2 * item.rtol * abs(key):
            passed.append((d_qk, d_v))
    assert not passed, f"{len(passed)} of {CLASS} draws let a swapped count within twice the tolerance: {passed[:5]}"


def test_the_drawn_backward_heads_still_vary():
    shapes = {tuple(p["backward_shape"]) for p in _class()}
    assert len(shapes) >= 50 and any(q == v for q, v in shapes)
