"""What a call hands student code besides its arguments. Student code can walk up its frames to
the worker's request for the call it is in. Nothing there may be derived from the answer key:
the reply bound the grader computes from the expected value (a "must raise" case has the
smallest) told a submission which hidden inputs must raise, so one without any input checks
raised exactly there and collected every bad-input case."""

from __future__ import annotations

from autograder.build import write_reference_submission
from autograder.engine import grade_submission
from autograder.engine.registry import ItemKind, load_config

ASSIGNMENT = "lec01_codesign"

# The reference's functions with their input checks taken away (a ValueError becomes 0.0).
# ORACLE: also raise ValueError wherever the worker's request for this call carries the
# smallest reply bound, the one the grader gives only to "must raise" cases.
WITHOUT_CHECKS = """

import functools as _functools
import sys as _sys

ORACLE = {oracle}
_MUST_RAISE_BOUND = 64 * 1024


def _bound_of_this_call():
    frame = _sys._getframe(2)
    while frame is not None:
        spec = frame.f_locals.get("spec")
        if isinstance(spec, dict) and "function" in spec:
            return spec.get("reply_bytes")
        frame = frame.f_back
    return None


def _without_checks(function):
    @_functools.wraps(function)
    def call(*args, **kwargs):
        bound = _bound_of_this_call()
        try:
            value = function(*args, **kwargs)
        except ValueError:
            value = 0.0
        if ORACLE and bound == _MUST_RAISE_BOUND:
            raise ValueError("输入不合法")
        return value
    return call


for _name in {names!r}:
    globals()[_name] = _without_checks(globals()[_name])
"""


def _submission(tmp_path, name: str, oracle: bool):
    reference = tmp_path / "reference"
    if not reference.exists():
        write_reference_submission(ASSIGNMENT, reference)
    names = [item.id for item in load_config(ASSIGNMENT).items_of(ItemKind.FUNCTION)]
    folder = tmp_path / name
    folder.mkdir()
    source = (reference / "codesign.py").read_text("utf-8")
    (folder / "codesign.py").write_text(source + WITHOUT_CHECKS.format(oracle=oracle, names=names), "utf-8")
    return folder   # no notebook: only the function items are graded


def test_no_call_tells_student_code_which_inputs_must_raise(tmp_path):
    lazy = grade_submission(ASSIGNMENT, _submission(tmp_path, "lazy", oracle=False))
    oracle = grade_submission(ASSIGNMENT, _submission(tmp_path, "oracle", oracle=True))
    functions = {item.id for item in load_config(ASSIGNMENT).items_of(ItemKind.FUNCTION)}
    lazy_scores = {i.id: i.score for i in lazy.items if i.id in functions}
    oracle_scores = {i.id: i.score for i in oracle.items if i.id in functions}
    # The input checks are worth points (else this test shows nothing) ...
    assert sum(lazy_scores.values()) < sum(i.max_score for i in lazy.items if i.id in functions)
    # ... and raising where the request hints at it earns none of them.
    assert oracle_scores == lazy_scores
