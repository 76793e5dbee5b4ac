"""Properties every correct rounding function has, checked with hypothesis."""

import numpy as np
from hypothesis import given, settings, strategies as st

import oracles
from solutions.lec01_codesign import round_e4m3, to_e2m1

CASES = {
    "e4m3": (round_e4m3, oracles.all_values(oracles.E4M3), 448.0),
    "e2m1": (to_e2m1, oracles.all_values(oracles.E2M1), 6.0),
}
finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
fmt = st.sampled_from(sorted(CASES))


def half_step_at(values, x):
    """Half the gap between the two representable values around |x| (inside the range)."""
    pos = values[values >= 0]
    i = np.clip(np.searchsorted(pos, abs(x)), 1, len(pos) - 1)
    return (pos[i] - pos[i - 1]) / 2


@settings(max_examples=300, deadline=None)
@given(fmt, finite)
def test_result_is_representable(name, x):
    func, values, _ = CASES[name]
    assert float(func(x)) in set(values.tolist())


@settings(max_examples=300, deadline=None)
@given(fmt, finite)
def test_idempotent(name, x):
    func, _, _ = CASES[name]
    once = func(x)
    assert func(once) == once


@settings(max_examples=300, deadline=None)
@given(fmt, finite, finite)
def test_monotone(name, x, y):
    func, _, _ = CASES[name]
    lo, hi = min(x, y), max(x, y)
    assert func(lo) <= func(hi)


@settings(max_examples=300, deadline=None)
@given(fmt, finite)
def test_sign_symmetric(name, x):
    func, _, _ = CASES[name]
    assert func(-x) == -func(x)


@settings(max_examples=300, deadline=None)
@given(fmt, finite)
def test_within_half_a_step_or_saturated(name, x):
    func, values, limit = CASES[name]
    q = float(func(x))
    if abs(x) >= limit:
        assert q == np.copysign(limit, x)
    else:
        assert abs(q - x) <= half_step_at(values, x)
