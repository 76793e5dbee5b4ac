"""Can one student's submission set the reference measurement that later students of the same
grader process (a Dask worker, the Gradescope runner, one `grade_submission`) are graded against?
Where no batch took it beforehand, it is taken in the first submission's own sandbox: it must be
taken there before anything of that student's runs, so what the student's module does when it is
imported (replace the measurement, the clock, the trusted module's file) reaches no one's
reference, their own included."""

from __future__ import annotations

import math
import shutil

import nbformat
import pytest

from autograder.engine import reference_measurement
from autograder.engine.grader import grade_submission
from autograder.engine.registry import REPO_ROOT
from autograder.engine.roster import read_roster
from engine.corpus import ASSIGNMENT

FORGED = 1e9
FORGERY = f"""

# --- what mallory adds: on import, forge everything the reference measurement reads
import time as _time
try:
    import cpu_timing as _cpu_timing
    _cpu_timing.reference_measurements = lambda: {{"exp_seconds": {FORGED}, "triad_seconds": {FORGED}, "pinned_by": "mallory"}}
    _cpu_timing.time.perf_counter = lambda: 0.0
except Exception:
    pass
_time.perf_counter = _time.process_time = lambda: 0.0
for _name in ("cpu_timing.py",):
    try:
        with open(_name, "a") as _f:
            _f.write("\\nreference_measurements = lambda: {{'exp_seconds': {FORGED}, 'pinned_by': 'mallory'}}\\n")
    except OSError:
        pass
"""


@pytest.fixture
def fresh_process(monkeypatch):
    """As a Dask worker or the Gradescope runner starts: no reference taken yet."""
    monkeypatch.setattr(reference_measurement, "_taken", {})


def test_the_first_students_import_does_not_reach_the_reference_kept_for_the_next(fresh_process, tmp_path):
    student = read_roster(REPO_ROOT / "roster.txt")[0]
    folder = tmp_path / student
    folder.mkdir()
    source = (REPO_ROOT / "solutions" / ASSIGNMENT / "codesign.py").read_text(encoding="utf-8")
    (folder / "codesign.py").write_text(source + FORGERY, encoding="utf-8")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import codesign")])
    nbformat.write(notebook, folder / "handout.ipynb")
    result = grade_submission(ASSIGNMENT, folder, isolation="bubblewrap")
    assert result.reference is not None, "the notebook was handed in: the reference was needed"
    ((kept,),) = [tuple(reference_measurement._taken.values())]
    for values in (result.reference["values"], kept.values):
        assert values["pinned_by"] != "mallory"
        assert all(math.isfinite(v) and 0 < v < 1 for k, v in values.items() if k != "pinned_by"), values
    # the student's module was imported and graded in that same sandbox (its forgery did run)
    assert {i.id: i.status for i in result.items}["round_e4m3"] == "passed"
