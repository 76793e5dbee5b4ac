"""The private copy: the submission is copied (never modified), trusted files laid over it."""

from __future__ import annotations

import os

import pytest

from nested_folders import nest_folders

from autograder.sandbox.workdir import (MAX_DEPTH, MAX_ENTRIES, SubmissionTooLarge, check_overlay, copy_submission,
                                         lay_overlay, remove_tree)


def test_copy_skips_symlinks_compiled_code_and_caches(tmp_path):
    """A symlink to the reference or a .pyc/.so that would run instead of the source is not copied."""
    secret = tmp_path / "secret.py"
    secret.write_text("ANSWER = 42\n")
    src = tmp_path / "sub"
    (src / "pkg" / "__pycache__").mkdir(parents=True)
    (src / "codesign.py").write_text("x = 1\n")
    (src / "pkg" / "helper.py").write_text("y = 2\n")
    (src / "pkg" / "__pycache__" / "helper.cpython-311.pyc").write_bytes(b"\x00")
    (src / "codesign.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    (src / "linked.py").symlink_to(secret)
    (src / "linked_dir").symlink_to(tmp_path)
    os.mkfifo(src / "pipe")
    dest = tmp_path / "copy"
    skipped = copy_submission(src, dest)
    copied = sorted(str(p.relative_to(dest)) for p in dest.rglob("*"))
    assert copied == ["codesign.py", "pkg", "pkg/helper.py"]
    assert set(skipped) == {"linked.py", "linked_dir", "pipe", "pkg/__pycache__",
                            "codesign.cpython-311-x86_64-linux-gnu.so"}


def test_overlay_replaces_the_students_copy_and_keeps_the_original(tmp_path):
    src = tmp_path / "sub"
    src.mkdir()
    (src / "hw_specs.py").write_text("FAKE = True\n")
    (src / "console.py").mkdir()  # even a directory in the way is replaced
    trusted = tmp_path / "trusted_hw_specs.py"
    trusted.write_text("REAL = True\n")
    dest = tmp_path / "copy"
    copy_submission(src, dest)
    lay_overlay(dest, check_overlay({"hw_specs.py": trusted, "console.py": trusted}))
    assert (dest / "hw_specs.py").read_text() == "REAL = True\n"
    assert (dest / "console.py").read_text() == "REAL = True\n"
    assert (src / "hw_specs.py").read_text() == "FAKE = True\n"


@pytest.mark.parametrize("name", ["/etc/passwd", "../x.py", "a/../../x.py", "", "__pycache__/x.py"])
def test_overlay_names_must_stay_inside(tmp_path, name):
    trusted = tmp_path / "t.py"
    trusted.write_text("")
    with pytest.raises(ValueError, match="overlay name"):
        check_overlay({name: trusted})


def test_overlay_file_must_exist(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        check_overlay({"hw_specs.py": tmp_path / "missing.py"})


def test_remove_tree_copes_with_permissions_taken_away(tmp_path):
    root = tmp_path / "box"
    locked = root / "a" / "b"
    locked.mkdir(parents=True)
    (locked / "f").write_text("x")
    os.chmod(locked, 0)
    os.chmod(root / "a", 0)
    remove_tree(root)
    assert not root.exists()


def test_remove_tree_removes_folders_nested_past_the_recursion_limit(tmp_path):
    """Student code's mkdir/chdir loop: shutil.rmtree ended with RecursionError."""
    root = tmp_path / "box"
    root.mkdir()
    nest_folders(root, 1500, leaf_file=True)
    remove_tree(root)
    assert not root.exists()


def test_copy_refuses_folders_nested_a_thousand_deep(tmp_path):
    """Before: os.walk recursed and the grader died with RecursionError; now a clear refusal."""
    src = tmp_path / "sub"
    src.mkdir()
    nest_folders(src, 1000)
    try:
        with pytest.raises(SubmissionTooLarge, match=f"more than {MAX_DEPTH} levels deep"):
            copy_submission(src, tmp_path / "dest")
    finally:
        remove_tree(src)   # deeper than pytest's own clean-up of tmp_path reaches
        remove_tree(tmp_path / "dest")


def test_copy_refuses_more_files_than_the_bound(tmp_path):
    src = tmp_path / "sub"
    src.mkdir()
    for index in range(MAX_ENTRIES + 1):
        (src / f"{index}").touch()
    with pytest.raises(SubmissionTooLarge, match=f"more than {MAX_ENTRIES} files and folders"):
        copy_submission(src, tmp_path / "dest")


def test_copy_keeps_a_submission_at_the_bounds(tmp_path):
    src = tmp_path / "sub"
    src.mkdir()
    nest_folders(src, MAX_DEPTH)
    src.joinpath(*["d"] * MAX_DEPTH, "codesign.py").write_text("deep\n")
    assert copy_submission(src, tmp_path / "dest") == []
    assert (tmp_path / "dest").joinpath(*["d"] * MAX_DEPTH, "codesign.py").read_text() == "deep\n"
