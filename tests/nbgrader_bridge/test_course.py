"""Where the course lives, read from the committed nbgrader_config.py."""

from pathlib import Path

import pytest

from autograder.nbgrader_bridge.course import Course, CourseError, load_course

ROOT = Path(__file__).resolve().parents[2]


def course(root: Path) -> Course:
    return Course(root=root, course_id="cs349e", db_url=f"sqlite:///{root}/gradebook.db",
                  submitted_directory="submitted", autograded_directory="autograded")


def test_the_committed_config_makes_the_repository_the_course(isolated_process_state):
    loaded = load_course(ROOT)
    assert loaded == course(ROOT)
    assert loaded.gradebook_file == ROOT / "gradebook.db"


def test_a_folder_without_config_is_an_error(tmp_path):
    with pytest.raises(CourseError, match="nbgrader_config.py not found"):
        load_course(tmp_path)


def test_the_student_of_an_autograded_folder(tmp_path):
    c = course(tmp_path)
    assert c.student_of_autograded(tmp_path / "autograded" / "ann" / "lec01_codesign", "lec01_codesign") == "ann"


@pytest.mark.parametrize("rel", ["submitted/ann/lec01_codesign", "autograded/ann/lec02_other",
                                 "autograded/ann", "autograded/ann/lec01_codesign/sub"])
def test_anything_else_is_not_an_autograded_folder(tmp_path, rel):
    with pytest.raises(CourseError):
        course(tmp_path).student_of_autograded(tmp_path / rel, "lec01_codesign")


def test_only_sqlite_gradebooks_are_supported(tmp_path):
    c = Course(tmp_path, "cs349e", "postgresql://host/db", "submitted", "autograded")
    with pytest.raises(CourseError, match="sqlite"):
        c.gradebook_file
