"""Where the course lives, read from the committed nbgrader_config.py."""

from pathlib import Path

import pytest

from autograder.nbgrader_bridge.course import Course, CourseError, load_course

ROOT = Path(__file__).resolve().parents[2]


def course(root: Path) -> Course:
    return Course(root=root, course_id="cs349e", db_url=f"sqlite:///{root}/gradebook.db",
                  submitted_directory="submitted")


def test_the_committed_config_makes_the_repository_the_course(isolated_process_state):
    loaded = load_course(ROOT)
    assert loaded == course(ROOT)
    assert loaded.gradebook_file == ROOT / "gradebook.db"


def test_a_folder_without_config_is_an_error(tmp_path):
    with pytest.raises(CourseError, match="nbgrader_config.py not found"):
        load_course(tmp_path)


def test_only_sqlite_gradebooks_are_supported(tmp_path):
    c = Course(tmp_path, "cs349e", "postgresql://host/db", "submitted")
    with pytest.raises(CourseError, match="sqlite"):
        c.gradebook_file
