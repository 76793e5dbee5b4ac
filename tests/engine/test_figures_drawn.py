"""The notebook's figures are drawn as PNG only where someone looks at them (`pregrade`: the
feedback pages); elsewhere (`grade`, Gradescope) each is recorded by its text, and the grade is the
same either way."""

from autograder.engine import grade_submission
from engine.conftest import TEST_LIMITS
from engine.corpus import ASSIGNMENT, write_reference


def _figures(result) -> list[dict]:
    return [o["data"] for c in result.executed["cells"] for o in c["outputs"]
            if o["output_type"] == "display_data" and o["data"]["text/plain"].startswith("<Figure size")]


def _grade(result) -> dict:
    data = result.to_dict()
    for measured in ("seconds", "reference"):
        data.pop(measured)
    return data


def test_figures_are_drawn_only_when_asked_and_the_grade_does_not_change(tmp_path):
    folder = write_reference(tmp_path / "alice")
    plain = grade_submission(ASSIGNMENT, folder, limits=TEST_LIMITS, isolation="bubblewrap")
    drawn = grade_submission(ASSIGNMENT, folder, limits=TEST_LIMITS, isolation="bubblewrap", figures=True)
    assert _grade(plain) == _grade(drawn) and plain.score == drawn.score > 0
    shown, recorded = _figures(drawn), _figures(plain)
    assert len(shown) == len(recorded) >= 3
    assert all("image/png" in data for data in shown)
    assert not any("image/png" in data for data in recorded)
    assert [d["text/plain"] for d in shown] == [d["text/plain"] for d in recorded]
