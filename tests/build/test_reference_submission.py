"""write_reference_submission: the solved files a full-marks student would hand in."""

import math
from pathlib import Path

import pytest

from autograder.build import write_reference_submission
from autograder.engine.registry import load_config
from discovery import assignments
from notebook_exec import answered_copy, execute_notebook
from solutions.lec01_codesign.answers import answer_key

ROOT = Path(__file__).resolve().parents[2]
CONFIG = load_config("lec01_codesign")


@pytest.fixture(scope="module")
def reference_folder(tmp_path_factory):
    """The released folder with the reference submission dropped in, as a student would have it."""
    return answered_copy(tmp_path_factory.mktemp("student") / "lec01_codesign")


@pytest.mark.parametrize("name", assignments())
def test_it_writes_exactly_the_student_files(tmp_path, name):
    config = load_config(name)
    write_reference_submission(name, tmp_path / "sub")
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == sorted(config.student_files)
    code = (tmp_path / "sub" / f"{config.student_module}.py").read_text(encoding="utf-8")
    assert "SOLUTION" not in code and "NotImplementedError" not in code


def test_the_answered_notebook_runs_cleanly_and_earns_every_key(reference_folder):
    key = answer_key()
    result = execute_notebook(reference_folder, [item.id for item in CONFIG.items_of("number", "choice")])
    assert result.errors == []
    from autograder.engine.answer_checks import DerivedKey, MeasuredKey, with_references
    from autograder.lec01_codesign import key_checks
    from cpu_timing import reference_measurements

    # the grader's reference measurement, taken on this machine right after the notebook's own
    checks = with_references(key_checks(), reference_measurements)
    for item in CONFIG.items_of("number", "choice"):
        got = result.answers.get(item.id)
        expected = checks.get(item.id, key.get(item.id))
        if isinstance(expected, MeasuredKey):  # within the stated factor of this machine's reference
            assert expected.low <= got <= expected.high, item.id
            continue
        if isinstance(expected, DerivedKey):  # follows from this run's own measurements
            expected, why = expected.key_from(result.answers)
            assert expected is not None, (item.id, why)
        if item.kind == "choice":
            assert got == expected, item.id
        else:
            assert math.isclose(got, expected, rel_tol=item.rtol, abs_tol=item.atol), item.id
