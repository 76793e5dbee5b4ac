"""`python selfcheck.py --zip`: one archive holding exactly the files to hand in, which
`nbgrader zip_collect` (an LMS download, Canvas naming) and the Gradescope runner take as it is."""

import json
import shutil
import zipfile

import pytest

from autograder.build import write_reference_submission
from autograder.build.student_files import zip_name
from autograder.engine.registry import load_config
from course_copy import copy_course, run
from student_folders import copy_release, run_in_folder, type_student_id

NAME = "lec01_codesign"
CONFIG = load_config(NAME)
ZIP = zip_name(CONFIG)


@pytest.fixture
def answered_folder(tmp_path):
    folder = copy_release(tmp_path)
    write_reference_submission(NAME, folder)
    type_student_id(folder, "alice")
    return folder


def test_the_zip_holds_exactly_the_student_files_byte_for_byte(answered_folder):
    (answered_folder / "notes.txt").write_text("草稿")
    proc = run_in_folder(answered_folder, "selfcheck.py", "--zip")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"已打包：{ZIP}" in proc.stdout
    with zipfile.ZipFile(answered_folder / ZIP) as archive:
        assert sorted(archive.namelist()) == sorted(CONFIG.student_files)
        for name in CONFIG.student_files:
            assert archive.read(name) == (answered_folder / name).read_bytes()
    assert ZIP == "lec01_codesign_submission.zip"  # what the student README tells students to upload


def test_unfinished_work_is_zipped_with_a_warning(tmp_path):
    folder = copy_release(tmp_path)  # the skeleton: nothing implemented, nothing answered
    proc = run_in_folder(folder, "selfcheck.py", "--zip")
    assert proc.returncode == 1 and "可以先交" in proc.stdout
    assert (folder / ZIP).is_file()


def test_a_missing_file_writes_no_zip(answered_folder):
    (answered_folder / CONFIG.notebook).unlink()
    proc = run_in_folder(answered_folder, "selfcheck.py", "--zip")
    assert proc.returncode == 1 and "没有打包" in proc.stdout and CONFIG.notebook in proc.stdout
    assert not (answered_folder / ZIP).exists() and "Traceback" not in proc.stderr


def test_the_gradescope_runner_grades_the_zip_as_uploaded(answered_folder, tmp_path):
    from autograder.gradescope import runtime

    assert run_in_folder(answered_folder, "selfcheck.py", "--zip").returncode == 0
    gradescope = tmp_path / "autograder"
    with zipfile.ZipFile(answered_folder / ZIP) as archive:  # Gradescope unpacks a zip upload
        archive.extractall(gradescope / "submission")
    (gradescope / "submission_metadata.json").write_text(  # alice's own upload: Gradescope's sid is hers
        json.dumps({"users": [{"sid": "alice", "email": "alice@example.edu"}]}), encoding="utf-8")
    assert runtime.main([NAME, "--root", str(gradescope)]) == 0
    results = json.loads((gradescope / "results" / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == sum(i.points for i in CONFIG.items if i.kind.is_automatic)


@pytest.mark.slow
def test_zip_collect_takes_the_zip_from_a_canvas_download(answered_folder, tmp_path):
    assert run_in_folder(answered_folder, "selfcheck.py", "--zip").returncode == 0
    course = copy_course(tmp_path / "course")
    archive = course / "downloaded" / NAME / "archive"
    archive.mkdir(parents=True)
    shutil.copyfile(answered_folder / ZIP, archive / f"alice_LATE_1001_2002_{ZIP}")  # Canvas renames uploads
    done = run(course, "-m", "nbgrader", "zip_collect", NAME, "--force")
    assert done.returncode == 0, done.stdout + done.stderr
    submitted = course / "submitted" / "alice" / NAME
    assert sorted(p.name for p in submitted.iterdir()) == sorted(CONFIG.student_files)
    for name in CONFIG.student_files:
        assert (submitted / name).read_bytes() == (answered_folder / name).read_bytes()
