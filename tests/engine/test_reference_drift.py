"""When the grading machine's speed moved since its reference measurement (a neighbour's load, a
slower emulated CPU, a cloud host's steal), does an honest student's own timing still count, and
does a typed-in figure still fail? The grader keeps one reference per process (reference_once);
a measured item that disagrees with it is judged again against a reference taken right after the
student's notebook, and the result records both."""

from __future__ import annotations

import time

import nbformat
import pytest

from autograder.build import write_reference_submission
from autograder.engine import reference_measurement
from autograder.engine.assignment import load_assignment
from autograder.engine.grader import SANDBOX_ENV, grade_submission
from autograder.engine.reference_measurement import Reference, take
from autograder.sandbox import Limits, bubblewrap_problem
from engine.corpus import ASSIGNMENT

MEASURED = ("q28a_triad_gb_per_s", "q29_matmul_gflops", "q28_exp_ns_per_value")
SLOWDOWN = 20.0   # far outside the 3x agreement window


@pytest.fixture
def fresh_store(monkeypatch):
    if bubblewrap_problem():
        pytest.skip(bubblewrap_problem())
    monkeypatch.setattr(reference_measurement, "_taken", {})


def _kept_from_a_faster_machine() -> dict:
    """Seed this process's reference with figures SLOWDOWN times faster than the machine is now,
    as if it had been taken before the machine slowed down; returns them."""
    assignment = load_assignment(ASSIGNMENT)
    now = take(assignment, "bubblewrap", Limits(), SANDBOX_ENV).values
    faster = {k: v / SLOWDOWN if isinstance(v, float) else v for k, v in now.items()}
    key = (assignment.config.assignment, assignment.reference, "bubblewrap")
    reference_measurement._taken[key] = Reference(faster, "earlier", "test", time.monotonic())
    return faster


def _submission(folder):
    write_reference_submission(ASSIGNMENT, folder)
    return folder


def _scores(result) -> dict[str, float]:
    return {item.id: item.score for item in result.items}


def test_an_honest_timing_counts_when_the_machine_slowed_since_its_reference(fresh_store, tmp_path):
    faster = _kept_from_a_faster_machine()
    folder = _submission(tmp_path / "honest")
    result = grade_submission(ASSIGNMENT, folder, isolation="bubblewrap")
    items = {item.id: item for item in result.items}
    assert all(items[i].status == "passed" for i in MEASURED), {i: items[i].feedback_md[:200] for i in MEASURED}
    assert result.reference["values"] == faster
    assert result.reference_again is not None and result.reference_again["used"] is True
    assert result.reference_again["values"] != faster


def test_a_typed_in_timing_fails_against_both_references(fresh_store, tmp_path):
    faster = _kept_from_a_faster_machine()
    folder = _submission(tmp_path / "typed")
    notebook = folder / "handout.ipynb"
    nb = nbformat.read(notebook, as_version=4)
    # a figure from neither machine: a hundred times faster than the kept reference's exp
    typed = faster["exp_seconds"] / 100
    from cpu_timing import EXP_N

    nb.cells.append(nbformat.v4.new_code_cell(f"q28_exp_ns_per_value = {typed / EXP_N * 1e9!r}"))
    nbformat.write(nb, notebook)
    result = grade_submission(ASSIGNMENT, folder, isolation="bubblewrap")
    assert _scores(result)["q28_exp_ns_per_value"] == 0
    assert result.reference_again is not None and result.reference["values"] == faster


def test_no_second_reference_when_every_measurement_agrees(fresh_store, tmp_path):
    folder = _submission(tmp_path / "agrees")
    result = grade_submission(ASSIGNMENT, folder, isolation="bubblewrap")
    assert all(_scores(result)[i] > 0 for i in MEASURED)
    assert result.reference is not None and result.reference_again is None


def test_a_students_second_reference_is_theirs_alone(fresh_store, tmp_path):
    """A typed figure makes the grader measure again for that student; the next student of the same
    process is still graded against the process's reference (what one student hands in never
    changes the reference a classmate is judged against, and a batch keeps one reference)."""
    faster = _kept_from_a_faster_machine()
    typed = _submission(tmp_path / "typed")
    notebook = typed / "handout.ipynb"
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("q28_exp_ns_per_value = 1e-6"))
    nbformat.write(nb, notebook)
    first = grade_submission(ASSIGNMENT, typed, isolation="bubblewrap")
    assert first.reference_again is not None
    after = grade_submission(ASSIGNMENT, _submission(tmp_path / "next"), isolation="bubblewrap")
    assert after.reference["values"] == first.reference["values"] == faster
