"""What several nbgrader tests start from, made once per session: the course released with
`nbgrader generate_assignment` (release/ and the gradebook), and the full-marks submission of
`python -m autograder reference`. Both are the same for every test that only starts from them
(seconds of nbgrader's and the grader's start-up each); a test gets its own copy of the course,
never the original, and reads the reference without changing it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable

import pytest

from course_copy import copy_course, run

ASSIGNMENT = "lec01_codesign"


def _ok(done) -> None:
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"


@pytest.fixture(scope="session")
def _released_template(tmp_path_factory) -> Path:
    root = copy_course(tmp_path_factory.mktemp("released-course"))
    _ok(run(root, "-m", "nbgrader", "generate_assignment", ASSIGNMENT, "--force"))
    return root


@pytest.fixture(scope="session")
def released_course(_released_template) -> Callable[[Path], Path]:
    """copy(dest): the released course copied into `dest` (its gradebook holds the assignment, no
    due date, no student), as if `nbgrader generate_assignment` had run there."""
    def copy(dest: Path) -> Path:
        shutil.copytree(_released_template, dest, symlinks=True, dirs_exist_ok=True)
        return dest

    return copy


@pytest.fixture(scope="session")
def reference_submission(_released_template, tmp_path_factory) -> Path:
    """A folder written by `python -m autograder reference`: read it, never change it."""
    folder = tmp_path_factory.mktemp("reference-submission") / "full"
    _ok(run(_released_template, "-m", "autograder", "reference", ASSIGNMENT, str(folder)))
    return folder
