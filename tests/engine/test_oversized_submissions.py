"""A submitted file beyond the size the grader reads is not graded: the trusted parent never
holds it in memory nor copies it (a sparse file of gigabytes costs the student nothing)."""

import os

from autograder.engine import grader
from autograder.engine.assignment import load_assignment
from autograder.engine.locate import MAX_STUDENT_FILE_BYTES, locate

ASSIGNMENT = "lec01_codesign"


def _sparse(path, size):
    with open(path, "wb") as handle:
        handle.truncate(size)


def test_an_oversized_module_is_not_read_and_says_why(tmp_path):
    folder = tmp_path / "mallory"
    folder.mkdir()
    _sparse(folder / "codesign.py", MAX_STUDENT_FILE_BYTES + 1)
    config = load_assignment(ASSIGNMENT).config
    files = locate(folder, config)
    assert files.present == () and files.oversized == ("codesign.py",)
    before = files.fingerprint(config)
    _sparse(folder / "codesign.py", MAX_STUDENT_FILE_BYTES + 2)
    assert locate(folder, config).fingerprint(config) != before   # a changed file is regraded
    result = grader.grade_submission(ASSIGNMENT, folder)
    assert result.score == 0 and result.isolation == "none"
    functions = [item for item in result.items if item.kind == "function"]
    assert functions and all("MB" in item.feedback_md and "上限" in item.feedback_md for item in functions)


def test_a_file_at_the_bound_is_still_graded(tmp_path):
    folder = tmp_path / "alice"
    folder.mkdir()
    (folder / "codesign.py").write_text("def round_e4m3(x):\n    return x\n" + "#" * 10 + "\n")
    os.truncate(folder / "codesign.py", MAX_STUDENT_FILE_BYTES)
    files = locate(folder, load_assignment(ASSIGNMENT).config)
    assert files.present == ("codesign.py",) and files.oversized == ()


def test_a_folder_of_thousands_of_look_alike_files_names_a_few_in_the_feedback(tmp_path):
    """No handout.ipynb but 9,990 `handout_copy_*.ipynb` (collect copies up to 10,000 entries of a
    folder): every one of the 74 items' feedback named all of them, 27 MB of Markdown in one
    student's results, which feedback and formgrader render (the grader's explanations are outside
    the pages' markup budget). A few are named, the rest counted."""
    folder = tmp_path / "mallory"
    folder.mkdir()
    for i in range(9_990):
        (folder / f"handout_copy_{i:05d}_with_a_long_name.ipynb").write_text("{}")
    result = grader.grade_submission(ASSIGNMENT, folder)
    missing = [item for item in result.items if "handout.ipynb" in item.feedback_md and "没有找到" in item.feedback_md]
    assert missing
    assert all(len(item.feedback_md) < 2_000 for item in missing), max(len(i.feedback_md) for i in missing)
    assert "handout_copy_00000_with_a_long_name.ipynb" in missing[0].feedback_md
    assert "等 9,990 个文件" in missing[0].feedback_md     # the rest, counted
