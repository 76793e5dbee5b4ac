"""What a uid left in the host's shared folders is removed, and nothing else (leftovers.py): its
files and folders, also inside world-writable folders of others; never a link's target, never
another uid's file, never a folder others cannot write to."""

from __future__ import annotations

import os
import struct
from pathlib import Path

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
    (shared / "closed" / "theirs").write_text("x")

    assert leftovers.remove_all_of(UID, folders=(str(shared),)) == []
    assert sorted(p.name for p in shared.iterdir()) == ["closed", "open"]
    assert sorted(p.name for p in (shared / "open").iterdir()) == ["theirs"]
    assert (shared / "closed" / "theirs").exists() and target.read_text() == "the grader's"


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


def _chain(top, count, owner=OTHER, mode=0o777):
    """`count` nested folders below `top`, each of `owner` and `mode`; the deepest."""
    folder = top
    for level in range(count):
        folder = folder / f"d{level}"
        folder.mkdir()
        os.chmod(folder, mode)
        _own(folder, owner)
    return folder


def _leave(folder, name="left"):
    (folder / name).write_text("a previous student's answers")
    os.chmod(folder / name, 0o600)
    return _own(folder / name)


def test_a_file_below_any_number_of_open_folders_goes(tmp_path):
    """Is a file the uid left below twenty nested world-writable folders of another user removed?
    The sweep went eight such folders down: "nothing left", and the file stayed for the uid's next holder."""
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    left = _leave(_chain(shared, 20))
    assert leftovers.remove_all_of(UID, folders=(str(shared),)) == []
    assert not os.path.lexists(left)


def test_an_open_folder_inside_one_others_may_only_enter_is_swept(tmp_path):
    """Is a world-writable folder below a 0755 folder of another user in /tmp swept? The uid could
    reach it and write there; the sweep only went through world-writable folders."""
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    left = _leave(_chain(_chain(shared, 3, mode=0o755), 1))
    assert leftovers.remove_all_of(UID, folders=(str(shared),)) == []
    assert not os.path.lexists(left)


def test_a_file_of_the_uid_in_a_folder_closed_to_it_since_stays_but_the_uid_is_not_clean(tmp_path):
    """A folder's owner may close it (0755) after the uid wrote there: nothing is removed from a
    folder the uid may not write to, but the file is reported, so the uid is retired. It was
    neither removed nor reported: its next holder, owning it, could read it."""
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    closed = _chain(shared, 1, mode=0o755)
    kept = _leave(closed)
    left = leftovers.remove_all_of(UID, folders=(str(shared),))
    assert os.path.lexists(kept)
    assert len(left) == 1 and str(kept) in left[0], left


def test_a_sweep_past_its_bound_reports_the_uid_not_clean(tmp_path, monkeypatch):
    """Does a sweep that met more entries than it may look at say so (the uid is then retired),
    rather than report nothing left of what it never saw?"""
    monkeypatch.setattr(leftovers, "_MAX_SWEPT", 50, raising=False)
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    for index in range(60):
        (shared / f"other-{index}").write_text("x")
    left = leftovers.remove_all_of(UID, folders=(str(shared),))
    assert left and "50" in left[0], left


_ACL_USER_OBJ, _ACL_USER, _ACL_GROUP_OBJ, _ACL_MASK, _ACL_OTHER = 0x01, 0x02, 0x04, 0x10, 0x20


def _grant(folder, uid, perms, mask=0o7):
    """An access ACL (system.posix_acl_access, version 2) on a folder of mode 0700: `uid` gets `perms`."""
    os.chmod(folder, 0o700)
    everyone = 0xFFFF_FFFF
    entries = [(_ACL_USER_OBJ, 0o7, everyone), (_ACL_USER, perms, uid), (_ACL_GROUP_OBJ, 0, everyone),
               (_ACL_MASK, mask, everyone), (_ACL_OTHER, 0, everyone)]
    os.setxattr(folder, "system.posix_acl_access",
                struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in entries))


@pytest.fixture
def srv_folder():
    """A folder of another user directly in /srv (0755), as a login account's home holds."""
    import secrets
    import shutil

    folder = f"/srv/cs349e-acl-{secrets.token_hex(4)}"
    os.mkdir(folder)
    _own(folder, OTHER)
    yield folder
    shutil.rmtree(folder)


def test_a_folder_an_acl_opens_to_the_uid_is_swept(srv_folder):
    """Is what the uid left in a 0700 folder of another user, opened to it by an ACL entry
    (user:<uid>:rwx, behind a 0700 folder opened by user:<uid>:--x), removed? The sweep looked only
    at the mode bits and never went in."""
    passage = Path(srv_folder) / "passage"
    box = passage / "box"
    box.mkdir(parents=True)
    for folder in (passage, box):
        _own(folder, OTHER)
    _grant(passage, UID, 0o1)
    _grant(box, UID, 0o7)
    left = _leave(box)
    leftovers.forget_world_writable_folders()
    assert leftovers.remove_all_of(UID) == []
    assert not os.path.lexists(left)


def test_an_acl_whose_mask_takes_write_away_opens_nothing(tmp_path):
    """Is a folder whose ACL names the uid, but whose mask leaves it no write, taken as closed to
    the uid's writes (the kernel lets no named entry past the mask)? Nothing is removed there; the
    uid's file is reported as in a folder closed to it."""
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    box = _chain(shared, 1, mode=0o700)
    _grant(box, UID, 0o7, mask=0o5)
    kept = _leave(box)
    left = leftovers.remove_all_of(UID, folders=(str(shared),))
    assert os.path.lexists(kept)
    assert len(left) == 1 and "closed to it" in left[0], left


def test_a_walk_of_the_machine_past_its_bound_reports_the_uid_not_clean(monkeypatch):
    """Does a walk for open folders that stopped at its bound say so, rather than report nothing
    left in the folders it never reached?"""
    monkeypatch.setattr(leftovers, "_MAX_WALKED", 3)
    leftovers.forget_world_writable_folders()
    try:
        left = leftovers.remove_all_of(UID)
    finally:
        leftovers.forget_world_writable_folders()
    assert any("walk" in problem for problem in left), left
