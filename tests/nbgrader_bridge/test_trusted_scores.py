"""check() under nbgrader autograde: one trusted grading per submission content."""

import shutil
from pathlib import Path

import pytest

from autograder.build import write_reference_submission
from autograder.nbgrader_bridge import trusted_scores
from autograder.nbgrader_bridge.course import Course
from autograder.nbgrader_bridge.trusted_scores import cache_folder, kernel_reply, trusted_result

ASSIGNMENT = "lec01_codesign"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reference")
    write_reference_submission(ASSIGNMENT, folder)
    return folder


@pytest.fixture
def course(tmp_path, reference):
    shutil.copytree(reference, tmp_path / "submitted" / "ann" / ASSIGNMENT)
    return Course(tmp_path, "cs349e", f"sqlite:///{tmp_path}/gradebook.db", "submitted", "autograded")


def test_the_first_ask_grades_the_submitted_files_and_the_next_ones_reuse_it(course, monkeypatch):
    first = trusted_result(course, ASSIGNMENT, "ann")
    assert first.student == "ann" and first.score == first.auto_max_score
    assert (cache_folder(course, ASSIGNMENT) / "results" / "ann.json").is_file()
    assert not list((course.root / "submitted").rglob("*.json"))  # nothing written into the submission

    def no_regrade(*args, **kwargs):
        raise AssertionError("graded twice")

    monkeypatch.setattr(trusted_scores, "grade_submission", no_regrade)
    assert trusted_result(course, ASSIGNMENT, "ann") == first


def test_changed_files_are_graded_again(course):
    trusted_result(course, ASSIGNMENT, "ann")
    with open(course.root / "submitted" / "ann" / ASSIGNMENT / "codesign.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef flops_per_exp(d_qk, d_v):\n    return 0\n")
    again = trusted_result(course, ASSIGNMENT, "ann")
    assert again.item("flops_per_exp").score == 0


def test_the_kernel_reply_has_every_item_with_its_feedback(course):
    result = trusted_result(course, ASSIGNMENT, "ann")
    reply = kernel_reply(result)
    assert reply["student"] == "ann" and reply["fingerprint"] == result.fingerprint
    assert set(reply["items"]) == {item.id for item in result.items}
    item = result.items[0]
    assert reply["items"][item.id] == {"score": item.score, "max_score": item.max_score, "status": item.status,
                                       "feedback": item.feedback_md}
