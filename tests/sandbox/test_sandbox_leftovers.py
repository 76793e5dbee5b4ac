"""What a uid left in the host's shared folders is removed, and nothing else (leftovers.py): its
files and folders, also inside world-writable folders of others; never a link's target, never
another uid's file, never a folder others cannot write to."""

from __future__ import annotations

import os

import pytest

from autograder.sandbox import leftovers

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="files of another uid are made by chown")
UID, OTHER = 0x7FFF_FF00, 0x7FFF_FF01


def _own(path, uid=UID):
    os.chown(path, uid, uid, follow_symlinks=False)
    return path


def test_every_file_of_the_uid_goes_and_nothing_else(tmp_path):
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    target = tmp_path / "grader-file"
    target.write_text("the grader's")
    (shared / "note").write_text("x")
    _own(shared / "note")
    (shared / "dir" / "deep").mkdir(parents=True)
    (shared / "dir" / "deep" / "f").write_text("x")
    for path in (shared / "dir", shared / "dir" / "deep", shared / "dir" / "deep" / "f"):
        _own(path)
    (shared / "link").symlink_to(target)
    _own(shared / "link")
    (shared / "open").mkdir()
    os.chmod(shared / "open", 0o777)
    (shared / "open" / "mine").write_text("x")
    _own(shared / "open" / "mine")
    (shared / "open" / "theirs").write_text("x")
    _own(shared / "open" / "theirs", OTHER)
    (shared / "closed").mkdir()
    (shared / "closed" / "mine").write_text("x")   # where the uid could not have written it
    _own(shared / "closed" / "mine")

    assert leftovers.remove_all_of(UID, folders=(str(shared),)) == []
    assert sorted(p.name for p in shared.iterdir()) == ["closed", "open"]
    assert sorted(p.name for p in (shared / "open").iterdir()) == ["theirs"]
    assert (shared / "closed" / "mine").exists() and target.read_text() == "the grader's"


def test_a_missing_folder_is_nothing_to_remove_and_root_is_refused(tmp_path):
    assert leftovers.remove_all_of(UID, folders=(str(tmp_path / "absent"),)) == []
    with pytest.raises(ValueError):
        leftovers.remove_all_of(0)


def test_folders_nested_past_the_recursion_limit_go_too(tmp_path):
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    fd = os.open(shared, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(1500):
        os.mkdir("d", dir_fd=fd)
        os.chown("d", UID, UID, dir_fd=fd)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    assert leftovers.remove_all_of(UID, (str(shared),)) == []
    assert list(shared.iterdir()) == []


@pytest.fixture
def deep_open_folder():
    """A world-writable folder two levels below /var/lib, as PHP's /var/lib/php/sessions (1733)."""
    import secrets
    import shutil

    outer = f"/var/lib/cs349e-sweep-{secrets.token_hex(4)}"
    os.makedirs(f"{outer}/sessions")
    os.chmod(f"{outer}/sessions", 0o1733)
    yield f"{outer}/sessions"
    shutil.rmtree(outer)


def test_a_world_writable_folder_deeper_than_one_level_is_swept_too(deep_open_folder):
    getattr(leftovers, "forget_world_writable_folders", lambda: None)()   # looked for once, then kept
    assert deep_open_folder in leftovers.world_writable_folders()
    left = f"{deep_open_folder}/sess_classmate"
    with open(left, "w") as handle:
        handle.write("a previous student's secret")
    _own(left)
    assert leftovers.remove_all_of(UID) == []
    assert not os.path.lexists(left)
