"""A student folder that is a symbolic link is graded as holding no files: through a link a
submission could hand in the reference solutions or a classmate's work (unzip restores links)."""

import os

from autograder.build import write_reference_submission
from autograder.engine import grader
from autograder.engine.locate import locate
from autograder.engine.assignment import load_assignment
from autograder.engine.registry import REPO_ROOT

ASSIGNMENT = "lec01_codesign"


def test_a_folder_linked_to_the_solutions_gets_no_points(tmp_path):
    solutions = REPO_ROOT / "solutions" / ASSIGNMENT
    assert (solutions / "codesign.py").is_file()  # the attack needs a codesign.py there
    os.symlink(solutions, tmp_path / "mallory")
    result = grader.grade_submission(ASSIGNMENT, tmp_path / "mallory")
    assert result.score == 0
    assert result.isolation == "none"   # nothing of the linked folder ran
    assert all("符号链接" in item.feedback_md for item in result.items if item.kind == "function")


def test_a_folder_linked_to_a_classmate_holds_no_files(tmp_path):
    write_reference_submission(ASSIGNMENT, tmp_path / "alice")
    os.symlink("alice", tmp_path / "copier")
    config = load_assignment(ASSIGNMENT).config
    files = locate(tmp_path / "copier", config)
    assert files.present == () and set(files.missing) == set(config.student_files)
    assert locate(tmp_path / "alice", config).present  # the real folder is still found
