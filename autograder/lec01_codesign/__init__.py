"""Hidden tests of lecture 1 (`lec01_codesign`). Instructor-only: never copied to students.

The engine (autograder.engine) loads this package by the assignment's name and asks it for
- `function_suites()`: item id -> Suite (cases + hypothesis properties) for every function item;
- `answer_key(params=None)`: item id -> key for every number / choice item of the report, for one
  student's parameters (solutions/lec01_codesign/variants.py; None = the lecture's own);
- `key_checks()`: the keys among those that are checks of the student's own measurements;
- `sandbox_factories()`: the factories that rebuild its non-plain arguments in the sandbox;
- `sandbox_reference()`: the trusted measurement of the grading machine the timing items compare with.
Expected values are computed here, in the trusted process, by `solutions.lec01_codesign`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping

from autograder.engine.cases import Suite


@lru_cache(maxsize=1)
def function_suites() -> Mapping[str, Suite]:
    import solutions.lec01_codesign as ref
    from autograder.lec01_codesign import formats, quantize, roofline

    suites = [
        formats.suite(ref.round_e4m3, formats.E4M3),
        formats.suite(ref.to_e2m1, formats.E2M1),
        quantize.suite(ref.quantize),
        roofline.flops_per_exp_suite(ref.flops_per_exp),
        roofline.exp_ratio_suite(ref.exp_ratio),
        roofline.ridge_point_suite(ref.ridge_point),
        roofline.trend_row_suite(ref.trend_row),
    ]
    return {s.function: s for s in suites}


def answer_key(params: Mapping | None = None) -> Mapping[str, object]:
    """The reference's keys for `params` (cached per parameter set by the reference), and the keys of
    the measurement items (checks, not numbers: the same in every variant)."""
    from solutions.lec01_codesign.answers import answer_key as key

    return {**key(params), **key_checks()}


def key_checks() -> Mapping[str, object]:
    """The measurement items' keys: checks of the student's own timings, not stored numbers."""
    from autograder.lec01_codesign.measurement import measurement_keys

    return measurement_keys()


def sandbox_factories() -> tuple[str, ...]:
    from autograder.lec01_codesign.chips import CHIP_FACTORY

    return (CHIP_FACTORY,)


def sandbox_reference() -> str:
    from autograder.lec01_codesign.measurement import SANDBOX_REFERENCE

    return SANDBOX_REFERENCE
