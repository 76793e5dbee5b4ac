"""The measured CPU roofline (q28a–q32) is graded against the grading machine's own measurement,
taken by cpu_timing in the same sandbox during the same grading run.

Does a notebook that types its timings in, instead of measuring them, still earn the points? Does
an honest notebook keep its score when the machine is busy? Both are asked of the real grader,
running the real notebook in its sandbox.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.build import write_reference_submission
from autograder.engine import grade_submission
from autograder.engine.answer_checks import ReferenceKey
from autograder.lec01_codesign.measurement import measurement_keys
from autograder.sandbox import Limits, bubblewrap_problem

ASSIGNMENT = "lec01_codesign"
LIMITS = Limits(call_timeout=5.0, import_timeout=10.0)
MEASURED = {item: key.figure for item, key in measurement_keys().items() if isinstance(key, ReferenceKey)}
ROOFLINE = tuple(measurement_keys())  # the measured items and everything derived from them
OTHER_MACHINE = 10.0  # a typed figure from a machine ten times faster or slower than this one

pytestmark = pytest.mark.skipif(bool(bubblewrap_problem()), reason=f"needs bubblewrap: {bubblewrap_problem()}")


def _answer_cell(notebook, item: str):
    """The code cell that assigns `item` (the notebook's answer cell of that question)."""
    cells = [c for c in notebook.cells if c.cell_type == "code" and f"\n{item} = " in f"\n{c.source}"]
    assert len(cells) == 1, item
    return cells[0]


def _typed_in(dest: Path, values: dict[str, float]) -> Path:
    """The reference submission with the measuring cells of `values` replaced by constants."""
    write_reference_submission(ASSIGNMENT, dest)
    path = dest / "handout.ipynb"
    notebook = nbformat.read(path, as_version=4)
    for item, value in values.items():
        _answer_cell(notebook, item).source = f"{item} = {value!r}  # copied from a friend's run"
    nbformat.write(notebook, path)
    return dest


def _scores(result) -> dict[str, float]:
    return {item.id: item.score for item in result.items}


def test_the_measured_items_are_checked_against_a_reference_not_a_wide_range():
    """Every raw timing has a reference figure; no timing is accepted on a fixed range."""
    assert set(MEASURED) == {"q28a_triad_gb_per_s", "q29_matmul_gflops", "q28_exp_ns_per_value"}


def test_typed_in_timings_earn_none_of_the_roofline(tmp_path):
    """Plausible constants (this machine's own figures, off by the factor between two real
    machines) used to pass the 0.01–1000 ns / 0.1–1e5 GFLOP/s ranges and every item computed
    from them. Now the timings disagree with the grader's measurement, and the items computed
    from them rest on it."""
    import cpu_timing

    here = cpu_timing.reference_measurements()
    values = {item: figure(here) * (OTHER_MACHINE if i % 2 else 1 / OTHER_MACHINE)
              for i, (item, figure) in enumerate(sorted(MEASURED.items()))}
    student = _typed_in(tmp_path / "bob", values)
    result = grade_submission(ASSIGNMENT, student, limits=LIMITS, student_id="bob")
    scores = _scores(result)
    assert {item: scores[item] for item in ROOFLINE} == {item: 0.0 for item in ROOFLINE}
    feedback = {item.id: item.feedback_md for item in result.items}
    assert all("参照测量" in feedback[item] for item in ROOFLINE), feedback
    # the rest of the notebook is graded as usual
    assert result.score > 0


# A module a student adds under the name of one the grader's reference measurement imports first
# (cpu_timing imports threadpoolctl; numpy.random imports secrets, bisect, hashlib...): imported
# from the submission, it would run before the reference is taken and could rig it.
RIGGED = """
import numpy as np

_median = np.median


def _slower(times, *args, **kwargs):
    return _median(times, *args, **kwargs) * {factor!r}


np.median = _slower


def threadpool_limits(limits=None):
    return None
"""


def test_a_module_in_the_submission_cannot_rig_the_graders_reference_measurement(tmp_path):
    """Timings typed from a machine ten times slower, and modules named like ones the reference
    measurement imports first, which slow every timing taken after them by the same factor: were
    they imported from the submission (it leads the worker's import path), the reference would
    agree with the typed figures and every roofline item would score. Only the assignment's
    student files reach the sandbox, so they never are."""
    import cpu_timing

    here = cpu_timing.reference_measurements()
    slow = {key: value * OTHER_MACHINE if "_seconds" in key else value for key, value in here.items()}
    student = _typed_in(tmp_path / "mallory", {item: figure(slow) for item, figure in MEASURED.items()})
    rigged = RIGGED.format(factor=OTHER_MACHINE)
    (student / "threadpoolctl.py").write_text(rigged)
    # the standard library's secrets, imported by numpy.random: everything it needs passed on
    (student / "secrets.py").write_text(rigged + "\nfrom hmac import compare_digest\nimport os as _os\n\n\n"
                                        "def token_bytes(n=32):\n    return _os.urandom(n)\n")
    scores = _scores(grade_submission(ASSIGNMENT, student, limits=LIMITS, student_id="mallory"))
    assert {item: scores[item] for item in ROOFLINE} == {item: 0.0 for item in ROOFLINE}
    assert scores["round_e4m3"] > 0   # the rest is graded as usual


def _hogs(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def test_an_honest_notebook_scores_the_same_idle_and_beside_a_cpu_hog(tmp_path):
    """The notebook measures with cpu_timing's method, the grader measures the same operations
    in the same sandbox, both on the thread's own CPU time: two processes spinning on the machine
    change neither enough to matter, so every item keeps its score and the result is the same."""
    student = tmp_path / "carol"
    write_reference_submission(ASSIGNMENT, student)
    idle = grade_submission(ASSIGNMENT, student, limits=LIMITS, student_id="carol")
    hogs = _hogs(2)
    try:
        busy = grade_submission(ASSIGNMENT, student, limits=LIMITS, student_id="carol")
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert {i: _scores(idle)[i] for i in ROOFLINE} == {i: item.points for i, item in _points().items()}
    assert _scores(busy) == _scores(idle)
    # the whole result, feedback and the notebook's outputs included: nothing measured is printed
    assert json.dumps(_without_timing(busy), sort_keys=True) == json.dumps(_without_timing(idle), sort_keys=True)


def _without_timing(result) -> dict:
    data = result.to_dict()
    data.pop("seconds")
    return data


def _points():
    from autograder.engine.registry import load_config

    return {item.id: item for item in load_config(ASSIGNMENT).items if item.id in ROOFLINE}


def _recounted(dest: Path, edits: dict[str, tuple[str, str]]) -> Path:
    """The reference submission with answer cells' counting changed (item -> (old, new) text)."""
    write_reference_submission(ASSIGNMENT, dest)
    path = dest / "handout.ipynb"
    notebook = nbformat.read(path, as_version=4)
    for item, (old, new) in edits.items():
        cell = _answer_cell(notebook, item)
        assert old in cell.source, (item, cell.source)
        cell.source = cell.source.replace(old, new)
    nbformat.write(notebook, path)
    return dest


def test_a_miscounted_conversion_of_the_runs_own_timings_fails(tmp_path):
    """What the measured items ask is the counting: a GEMM of m × m does 2m³ FLOP, STREAM's triad
    moves 24 B an element. Counted as m³ and 16 B (the write forgotten) the figures are 0.5× and
    0.67× the right ones, inside the agreement window that absorbs the machine's noise: they
    must still fail, as they follow from none of the timings the run itself took."""
    student = _recounted(tmp_path / "carol", {
        "q29_matmul_gflops": ("2 * edge**3", "edge**3"),
        "q28a_triad_gb_per_s": ("3 * 8 * TRIAD_N", "2 * 8 * TRIAD_N"),
    })
    result = grade_submission(ASSIGNMENT, student, limits=LIMITS, student_id="carol")
    scores = _scores(result)
    assert (scores["q29_matmul_gflops"], scores["q28a_triad_gb_per_s"]) == (0.0, 0.0)
    assert scores["q28_exp_ns_per_value"] == 1.0   # counted right, still right
    feedback = result.item("q29_matmul_gflops").feedback_md
    assert "cpu_timing" in feedback
