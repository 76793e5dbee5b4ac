"""The reference measurement is taken once per grader process, not before every submission, and
every result says which reference it was graded against."""

from __future__ import annotations

import os

import pytest

import cpu_timing
from autograder.engine import reference_measurement
from autograder.engine.assignment import load_assignment
from autograder.engine.reference_measurement import MAX_AGE_SECONDS, reference_for
from engine.corpus import ASSIGNMENT


def _figures() -> set[str]:
    return {"exp_seconds", "triad_seconds", "pinned_by", *(f"gemm_seconds_{m}" for m in cpu_timing.GEMM_SIZES)}


def test_a_batch_measures_once_before_forking_and_every_result_records_that_reference(graded_batch):
    """The corpus batch (-j 2): every result whose notebook ran was graded against one reference,
    the one this process (the batch's parent) took before its workers forked."""
    results = [graded_batch.result(s) for s in graded_batch.recorded_students()]
    measured = [r for r in results if r.reference is not None]
    assert len(measured) >= len(results) // 2, "most of the corpus hands in a notebook"
    assert len({repr(sorted(r.reference.items())) for r in measured}) == 1
    reference = measured[0].reference
    assert reference["taken_by"].endswith(f" pid {os.getpid()}")
    assert set(reference["values"]) == _figures()
    assert all(isinstance(reference["values"][f], float) and reference["values"][f] > 0
               for f in _figures() - {"pinned_by"})
    # the reference stays staff-side: no feedback shows its figures
    for student in graded_batch.recorded_students():
        feedback = graded_batch.feedback(student)
        assert not any(repr(v) in feedback for k, v in reference["values"].items() if k != "pinned_by")


@pytest.fixture
def fresh_store(monkeypatch):
    monkeypatch.setattr(reference_measurement, "_taken", {})


def _counting(calls: list, values: dict):
    return lambda: calls.append(1) or values


def test_one_process_measures_once_per_assignment_and_isolation(fresh_store):
    assignment, calls = load_assignment(ASSIGNMENT), []
    first = reference_for(assignment, "bubblewrap", _counting(calls, {"exp_seconds": 1e-3}))
    again = reference_for(assignment, "bubblewrap", _counting(calls, {"exp_seconds": 9.0}))
    assert calls == [1] and again == first and again.values == {"exp_seconds": 1e-3}
    other = reference_for(assignment, "rlimits", _counting(calls, {"exp_seconds": 2e-3}))
    assert calls == [1, 1] and other.values == {"exp_seconds": 2e-3}


def test_a_long_lived_process_measures_again_after_the_maximum_age(fresh_store):
    assignment, calls, clock = load_assignment(ASSIGNMENT), [], [100.0]
    reference_for(assignment, "bubblewrap", _counting(calls, {"t": 1.0}), now=lambda: clock[0])
    clock[0] += MAX_AGE_SECONDS - 1
    assert reference_for(assignment, "bubblewrap", _counting(calls, {"t": 2.0}), now=lambda: clock[0]).values == {"t": 1.0}
    clock[0] += 2
    assert reference_for(assignment, "bubblewrap", _counting(calls, {"t": 3.0}), now=lambda: clock[0]).values == {"t": 3.0}
    assert len(calls) == 2


def test_a_failed_measurement_is_not_kept(fresh_store):
    assignment, calls = load_assignment(ASSIGNMENT), []

    def failing():
        calls.append(1)
        raise RuntimeError("the reference measurement failed in the sandbox")

    for _ in range(2):
        with pytest.raises(RuntimeError, match="reference"):
            reference_for(assignment, "bubblewrap", failing)
    assert len(calls) == 2
    assert reference_for(assignment, "bubblewrap", _counting(calls, {"t": 1.0})).values == {"t": 1.0}


def test_a_single_submission_is_measured_against_before_its_own_sandbox_opens(fresh_store, monkeypatch):
    """One route for every grader process: the reference is taken in a sandbox of the
    assignment's trusted files alone, before the student's sandbox opens, never in it."""
    from autograder.engine import grader
    from engine.corpus import EXAMPLES_DIR

    events = []
    measure_in = reference_measurement.measure_in

    def measuring(assignment, box):
        events.append(("measured", box))
        return measure_in(assignment, box)

    class StudentSandbox(grader.Sandbox):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            events.append(("student", self))

    monkeypatch.setattr(reference_measurement, "measure_in", measuring)
    monkeypatch.setattr(grader, "Sandbox", StudentSandbox)
    result = grader.grade_submission(ASSIGNMENT, EXAMPLES_DIR / "bob")
    assert [kind for kind, _ in events] == ["measured", "student"]
    assert events[0][1] is not events[1][1]
    assert result.reference is not None and set(result.reference["values"]) == _figures()
