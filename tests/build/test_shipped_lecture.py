"""The student folder holds every script its texts name: the README, the notebook and the skeleton
send the student to the lecture's `05_codesign_blackwell_ultra.py`; is it there, does it run in the
folder as released (the shared modules beside it, no repository on the path), and is it the
course's lecture unchanged?"""

import re

import pytest

from autograder.engine.registry import load_config
from core.script_output import REPO
from assignment.student_folders import copy_release, run_in_folder

CONFIG = load_config("lec01_codesign")
COURSE_LECTURE = REPO.parent / "shared" / "lecture"   # the course's folder beside the repository
TEXTS = ("README.md", "handout.ipynb", "codesign.py")


def _named_scripts() -> set[str]:
    names = set()
    for text in TEXTS:
        names |= set(re.findall(r"(?<![\w/.-])(\w+\.py)\b", (CONFIG.folder / text).read_text(encoding="utf-8")))
    return names


def test_every_script_the_student_texts_name_is_in_the_folder():
    named = _named_scripts()
    assert "05_codesign_blackwell_ultra.py" in named
    missing = sorted(name for name in named if not (CONFIG.folder / name).is_file())
    assert missing == []


def test_the_lecture_script_runs_in_the_released_folder(tmp_path):
    folder = copy_release(tmp_path)
    done = run_in_folder(folder, "05_codesign_blackwell_ultra.py")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "7.6" in done.stdout and "Traceback" not in done.stderr


@pytest.mark.skipif(not (COURSE_LECTURE / "05_codesign_blackwell_ultra.py").is_file(),
                    reason=f"the course's lecture folder is not beside the repository ({COURSE_LECTURE})")
def test_the_shipped_lecture_is_the_courses_unchanged():
    shipped = CONFIG.folder / "05_codesign_blackwell_ultra.py"
    assert shipped.read_bytes() == (COURSE_LECTURE / "05_codesign_blackwell_ultra.py").read_bytes()
