"""Fixtures of the assignment tests: a fresh copy of the released student folder per test."""

import pytest

from student_folders import copy_release


@pytest.fixture
def student_folder(tmp_path):
    return copy_release(tmp_path)
