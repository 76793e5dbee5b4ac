"""The uid fallback shares the grader's filesystem: student code runs as an unprivileged uid and
reads whatever other users may read. A class folder or an output folder others can read would give
a student, during their own grading, every classmate's submission and every result and executed
notebook graded before theirs. `grade --isolation rlimits` refuses such folders (bubblewrap never
shows them)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from sandbox_helpers import needs_rlimits

from autograder.api.grading import Refused, grade
from engine.corpus import ASSIGNMENT

pytestmark = needs_rlimits


@pytest.fixture
def open_folder():
    folder = Path(tempfile.mkdtemp(dir="/var/tmp"))
    os.chmod(folder, 0o755)     # as an instructor's umask 022 leaves a course folder
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _class(root: Path) -> Path:
    (root / "class" / "alice").mkdir(parents=True)
    (root / "class" / "alice" / "codesign.py").write_text("ANSWER = 'alice'\n", encoding="utf-8")
    return root / "class"


def test_a_class_folder_other_users_can_read_is_refused(open_folder):
    with pytest.raises(Refused, match="other users"):
        grade(assignment=ASSIGNMENT, submissions=_class(open_folder), out=open_folder / "out", isolation="rlimits")
    assert not (open_folder / "out").exists()


def test_an_output_folder_other_users_can_read_is_refused(open_folder):
    closed = Path(tempfile.mkdtemp(dir="/var/tmp"))    # 0700
    try:
        with pytest.raises(Refused, match="other users"):
            grade(assignment=ASSIGNMENT, submissions=_class(closed), out=open_folder / "out", isolation="rlimits")
    finally:
        shutil.rmtree(closed, ignore_errors=True)
