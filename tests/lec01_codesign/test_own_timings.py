"""A measured figure must follow from the timings the student's own run took with cpu_timing,
counted right: the agreement window, wide for the machine's noise, is not what judges the counting.
Judged here in-process on the real keys, against a reference and a run's noted timings."""

from __future__ import annotations

import pytest

from autograder.engine.answer_checks import with_references
from autograder.engine.registry import load_config
from autograder.engine.report_items import grade_report
from autograder.lec01_codesign.measurement import RUN_TIMINGS, measurement_keys
from autograder.sandbox import NotebookOutcome

ITEMS = {item.id: item for item in load_config("lec01_codesign").items}
GEMM = "q29_matmul_gflops"
REFERENCE = {"exp_seconds": 0.005, "triad_seconds": 0.02, "gemm_seconds_64": 2 * 64**3 / 30e9,
             "gemm_seconds_128": 2 * 128**3 / 60e9, "gemm_seconds_256": 2 * 256**3 / 80e9,
             "gemm_seconds_512": 2 * 512**3 / 90e9, "pinned_by": "threadpoolctl"}


def _judged(item: str, answer: float, timings) -> str:
    key = with_references(measurement_keys(), lambda: REFERENCE)
    variables = {item: answer} if timings is None else {item: answer, RUN_TIMINGS: timings}
    [result] = grade_report([ITEMS[item]], key, NotebookOutcome("ok", variables, (), ""), "handout.ipynb")
    return result.status


def _sweep(rates: dict[int, list[float]]) -> list[tuple[str, int, float]]:
    return [("gemm", m, 2 * m**3 / (rate * 1e9)) for m, values in rates.items() for rate in values]


@pytest.mark.parametrize("answer, status", [
    (90.0, "passed"),            # the best size's rate
    (89.0, "passed"),            # the mean of its two timings
    (45.0, "failed"),            # counted as m³: inside the 3x window, and equal to a smaller size's rate
    (30.0, "failed"),            # the smallest size's rate is not the peak
])
def test_the_gemm_peak_follows_from_the_best_sizes_own_timings(answer, status):
    timings = _sweep({64: [30.0], 128: [45.0], 256: [80.0], 512: [88.0, 90.0]})
    assert _judged(GEMM, answer, timings) == status


def test_a_figure_the_run_noted_no_timing_for_is_judged_by_the_window_alone():
    assert _judged(GEMM, 60.0, None) == "passed"
    assert _judged(GEMM, 60.0, [("triad", 4 * 1024**2, 0.02)]) == "passed"


@pytest.mark.parametrize("record", ["not a list", [("gemm", 512, 0.0)], [("gemm", True, 0.003)],
                                    [("gemm", 512)], [("gemm", 512, 1e-320)]])
def test_a_rewritten_record_accepts_nothing(record):
    assert _judged(GEMM, 90.0, record) == "failed"
