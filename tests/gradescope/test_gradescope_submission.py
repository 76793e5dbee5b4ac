"""Are a student's files found wherever Gradescope put the upload, and copied rather than linked?"""

import json
from pathlib import Path

import pytest

from autograder.gradescope import runtime
from autograder.gradescope.schema import check_results
from autograder.gradescope.submission import UploadTooLarge, collect_submission, submission_student
from autograder.sandbox.workdir import MAX_DEPTH, MAX_ENTRIES, remove_tree
from nested_folders import nest_folders

FILES = ("codesign.py", "handout.ipynb")


def test_files_at_the_top_are_copied(tmp_path):
    upload = tmp_path / "upload"
    upload.mkdir()
    (upload / "codesign.py").write_text("x = 1\n")
    (upload / "handout.ipynb").write_text("{}")
    got = collect_submission(upload, FILES, tmp_path / "class" / "student")
    assert got.found == {"codesign.py": "codesign.py", "handout.ipynb": "handout.ipynb"} and got.missing == ()
    copied = tmp_path / "class" / "student" / "codesign.py"
    assert copied.read_text() == "x = 1\n" and not copied.is_symlink()


def test_the_shallowest_match_wins_and_junk_folders_are_ignored(tmp_path):
    upload = tmp_path / "upload"
    (upload / "repo" / "old").mkdir(parents=True)
    (upload / "__MACOSX" ).mkdir()
    (upload / "__MACOSX" / "codesign.py").write_text("resource fork\n")
    (upload / "repo" / "codesign.py").write_text("good\n")
    (upload / "repo" / "old" / "codesign.py").write_text("old\n")
    got = collect_submission(upload, FILES, tmp_path / "dest")
    assert got.found == {"codesign.py": "repo/codesign.py"} and got.missing == ("handout.ipynb",)
    assert (tmp_path / "dest" / "codesign.py").read_text() == "good\n"


def test_symlinks_are_not_followed(tmp_path):
    upload = tmp_path / "upload"
    upload.mkdir()
    (tmp_path / "secret.py").write_text("secret\n")
    (upload / "codesign.py").symlink_to(tmp_path / "secret.py")
    assert collect_submission(upload, FILES, tmp_path / "dest").missing == FILES


def test_a_missing_upload_folder_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        collect_submission(tmp_path / "nothing", FILES, tmp_path / "dest")


def _metadata(tmp_path, users) -> Path:
    (tmp_path / "submission_metadata.json").write_text(json.dumps({"users": users}), encoding="utf-8")
    return tmp_path


def test_the_student_id_is_the_first_submitters_sid_else_their_email(tmp_path):
    two = [{"sid": " 2026001 ", "email": "a@x.edu"}, {"sid": "2026002", "email": "b@x.edu"}]
    assert submission_student(_metadata(tmp_path, two)) == ("2026001", "gradescope sid")
    assert submission_student(_metadata(tmp_path, [{"sid": "", "email": "a@x.edu"}])) == ("a@x.edu", "gradescope email")
    assert submission_student(_metadata(tmp_path, [{"sid": None, "email": None}])) is None
    assert submission_student(_metadata(tmp_path, [])) is None
    (tmp_path / "submission_metadata.json").write_text("not json", encoding="utf-8")
    assert submission_student(tmp_path) is None


def test_without_a_submitter_in_the_metadata_a_variant_assignment_is_not_graded(tmp_path, capsys):
    """The runner's own folder name is nobody's id: grading under it would use a variant no
    student was given, so the upload fails with the reason instead."""
    import shutil

    from autograder.engine.variants import has_variants
    from autograder.gradescope.runtime import main
    from autograder.engine.registry import REPO_ROOT

    assert has_variants("lec01_codesign")
    shutil.copytree(REPO_ROOT / "examples" / "lec01_codesign" / "submissions" / "alice", tmp_path / "submission")
    (tmp_path / "results").mkdir()
    assert main(["lec01_codesign", "--root", str(tmp_path)]) == 1
    results = json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == 0
    assert "submission_metadata.json names no submitter" in capsys.readouterr().err


def test_an_upload_of_a_thousand_nested_folders_is_refused_with_a_message(tmp_path):
    """Before: Path.rglob recursed into them and the grader died with RecursionError (no
    results.json at all); now the upload is refused, the student told why, the result valid."""
    root = tmp_path / "autograder"
    upload = root / "submission"
    upload.mkdir(parents=True)
    (upload / "codesign.py").write_text("x = 1\n")
    nest_folders(upload, 1000)
    try:
        with pytest.raises(UploadTooLarge, match=f"more than {MAX_DEPTH} levels"):
            collect_submission(upload, FILES, tmp_path / "dest")
        assert runtime.main(["lec01_codesign", "--root", str(root)]) == 1
    finally:
        remove_tree(upload / "d")   # deeper than pytest's own clean-up of tmp_path reaches
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    check_results(results)
    assert results["score"] == 0 and "嵌套太深" in results["output"] and "codesign.py" in results["output"]
    assert "levels deep" in results["extra_data"]["grading_failed"]


def test_an_upload_of_more_files_than_the_bound_is_refused(tmp_path):
    upload = tmp_path / "upload"
    many = upload / "node_modules"
    many.mkdir(parents=True)
    for index in range(MAX_ENTRIES):
        (many / f"{index}.js").touch()
    (upload / "codesign.py").write_text("x = 1\n")
    with pytest.raises(UploadTooLarge, match=f"more than {MAX_ENTRIES} files and folders"):
        collect_submission(upload, FILES, tmp_path / "dest")
    assert not (tmp_path / "dest").exists()


def test_an_upload_at_the_bounds_is_collected(tmp_path):
    upload = tmp_path / "upload"
    upload.mkdir()
    nest_folders(upload, MAX_DEPTH)
    deepest = upload.joinpath(*["d"] * MAX_DEPTH)
    (deepest / "codesign.py").write_text("deep\n")
    for index in range(MAX_ENTRIES - MAX_DEPTH - 1):
        (upload / f"{index}.txt").touch()
    got = collect_submission(upload, FILES, tmp_path / "dest")
    assert got.found == {"codesign.py": "/".join(["d"] * MAX_DEPTH + ["codesign.py"])}


def test_an_oversized_file_in_the_upload_is_not_read_or_copied(tmp_path):
    """A sparse codesign.py of terabytes costs the student nothing to upload: before, collect copied
    it byte by byte (filling the container's disk, or the grading time); now an oversized file is
    laid out by its size only (sparse, nothing read) and the engine says it is too large, as it
    does for any folder."""
    from autograder.engine.locate import MAX_STUDENT_FILE_BYTES

    upload = tmp_path / "upload"
    upload.mkdir()
    with open(upload / "codesign.py", "wb") as handle:
        handle.truncate(MAX_STUDENT_FILE_BYTES + 1)
    got = collect_submission(upload, FILES, tmp_path / "dest")
    copied = (tmp_path / "dest" / "codesign.py").stat()
    assert got.found == {"codesign.py": "codesign.py"}
    assert copied.st_size == MAX_STUDENT_FILE_BYTES + 1 and copied.st_blocks == 0


def test_a_pipe_or_socket_named_like_a_student_file_is_never_read(tmp_path):
    """A zip cannot hold one, but a GitHub or Bitbucket upload is unpacked by Gradescope's own
    tooling: a FIFO named codesign.py would stall a reader forever. It counts as missing."""
    import os
    import socket
    import time

    upload = tmp_path / "submission"
    (upload / "deep").mkdir(parents=True)
    os.mkfifo(upload / "codesign.py")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(upload / "deep" / "handout.ipynb"))
        started = time.monotonic()
        collected = collect_submission(upload, ("codesign.py", "handout.ipynb"), tmp_path / "out")
    assert time.monotonic() - started < 5
    assert collected.found == {} and collected.missing == ("codesign.py", "handout.ipynb")


def test_a_group_submission_of_a_variant_assignment_is_not_graded_in_one_members_variant(tmp_path, capsys):
    """Where the instructor allows groups, the student who uploads may add classmates to her
    submission: it was graded in the first member's variant, so her work was scored against a
    classmate's parameters (and, once published, showed her the classmate's expected values), and
    Gradescope gave that score to every member. Each student has a variant of their own: such an
    upload now fails with the reason, for the staff to settle."""
    import shutil

    from autograder.engine.registry import REPO_ROOT
    from autograder.gradescope.runtime import main

    shutil.copytree(REPO_ROOT / "examples" / "lec01_codesign" / "submissions" / "alice", tmp_path / "submission")
    (tmp_path / "results").mkdir()
    _metadata(tmp_path, [{"sid": "amy", "email": "amy@x.edu"}, {"sid": "eve", "email": "eve@x.edu"}])
    assert main(["lec01_codesign", "--root", str(tmp_path)]) == 1
    results = json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == 0
    assert "2 students" in capsys.readouterr().err
