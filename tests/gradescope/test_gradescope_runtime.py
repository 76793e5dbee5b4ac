"""Does the in-container runner fail closed, and leave a working repository alone?"""

import json
import stat

from autograder.gradescope import runtime
from autograder.gradescope.schema import results_problems


def test_a_configuration_error_gives_no_credit_and_a_valid_result(tmp_path):
    (tmp_path / "submission").mkdir()
    status = runtime.main(["lec99_not_an_assignment", "--root", str(tmp_path)])
    results = json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))
    assert status == 1
    assert results_problems(results) == []
    assert results["score"] == 0
    # the student reads one short line; the reason is the staff's (extra_data, the log)
    assert "lec99_not_an_assignment" not in results["output"]
    assert "lec99_not_an_assignment" in results["extra_data"]["grading_failed"]


def test_secrets_are_only_locked_inside_an_unpacked_bundle(tmp_path):
    solutions = runtime.SOURCE_ROOT / "solutions"
    before = stat.S_IMODE(solutions.stat().st_mode)
    runtime.protect_secrets("lec01_codesign", tmp_path)  # tmp_path/source is not this repository
    assert stat.S_IMODE(solutions.stat().st_mode) == before
    assert not (tmp_path / "results").exists()
