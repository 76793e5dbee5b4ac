"""ReferenceKey, GroundedKey and with_references: a measured answer is judged against this run's
reference figure, and what is computed from it holds only while the measurement does."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from autograder.engine.answer_checks import DerivedKey, GroundedKey, MeasuredKey, ReferenceKey, with_references

KEY = {
    "t": ReferenceKey(lambda r: r["seconds"] * 1e9, 3.0),
    "rate": DerivedKey(("t",), lambda ns: 1 / ns),
    "twice": DerivedKey(("rate",), lambda rate: 2 * rate),
    "fixed": 1.5,
    "own": DerivedKey(("fixed",), lambda x: x + 1),
}


def test_the_measurement_runs_once_and_only_when_a_key_needs_it():
    calls = []
    with_references(KEY, lambda: calls.append(1) or {"seconds": 2e-9})
    with_references({"fixed": 1.5}, lambda: calls.append(1) or {})
    assert calls == [1]


@given(st.floats(1e-12, 1e3), st.floats(1.01, 100))
def test_the_range_is_the_reference_times_or_over_the_factor(seconds, factor):
    key = with_references({"t": ReferenceKey(lambda r: r["s"], factor)}, lambda: {"s": seconds})["t"]
    assert isinstance(key, MeasuredKey) and key.rule
    assert math.isclose(key.low * factor, seconds) and math.isclose(key.high / factor, seconds)


def test_derived_keys_rest_on_the_measurement_they_come_from_even_through_another_item():
    key = with_references(KEY, lambda: {"seconds": 2e-9})
    assert isinstance(key["rate"], GroundedKey) and isinstance(key["twice"], GroundedKey)
    assert not isinstance(key["own"], GroundedKey) and key["fixed"] == 1.5
    assert key["twice"].key_from({"t": 2.0, "rate": 0.5}) == (1.0, "")
    typed = key["twice"].key_from({"t": 20.0, "rate": 0.05})   # 10× the reference
    assert typed[0] is None and "`t`" in typed[1] and "参照测量" in typed[1]
    assert key["twice"].key_from({"rate": 0.5})[0] is None   # the measurement is missing


@pytest.mark.parametrize("reference", [{}, {"seconds": 0.0}, {"seconds": float("nan")}, {"seconds": "1"}])
def test_a_reference_without_a_positive_figure_is_the_graders_error(reference):
    with pytest.raises(ValueError, match="reference"):
        with_references(KEY, lambda: reference)


@pytest.mark.parametrize("factor", [1.0, 0.5, float("inf")])
def test_a_factor_must_widen_the_range(factor):
    with pytest.raises(ValueError, match="factor"):
        ReferenceKey(lambda r: 1.0, factor)


class Half(float):
    """A float subclass (numpy's float64 is one): read as the float it is."""


@pytest.mark.parametrize("answer", [10**400, -10**400, float("inf"), True, "2.0", None],
                         ids=["10**400", "-10**400", "inf", "True", "str", "None"])
def test_an_answer_that_is_no_finite_number_gives_no_key_and_raises_nothing(answer):
    """Does an int too large for a float (10**400) read as a wrong answer, like inf, a bool or a
    string, for a derived key and a grounded one alike? float(10**400) raised OverflowError, which
    turned the items into "error" results for a TA to review."""
    grounded = with_references(KEY, lambda: {"seconds": 2e-9})["twice"]
    derived = DerivedKey(("a",), lambda a: a)
    assert derived.key_from({"a": answer})[0] is None
    assert grounded.key_from({"t": answer, "rate": 0.5})[0] is None
    assert grounded.key_from({"t": 2.0, "rate": answer})[0] is None
    assert derived.key_from({"a": Half(2.0)}) == (2.0, "")
    assert grounded.key_from({"t": Half(2.0), "rate": Half(0.5)}) == (1.0, "")
