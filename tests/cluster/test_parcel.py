"""Does a submission packed on the instructor's side and unpacked on a worker (in memory, no
folder) look to the engine exactly like the original folder: same files found, same fingerprint,
same reasons a file is not graded (a link, an oversized file, a renamed file)? And is it graded
exactly as the folder is?"""

from __future__ import annotations

import os
import pickle
import shutil

import pytest

from autograder.cluster.parcel import Parcel, ParcelError, pack
from autograder.engine.grader import grade_submission
from autograder.engine.locate import MAX_STUDENT_FILE_BYTES, StudentFiles, locate
from engine.corpus import ASSIGNMENT, CONFIG, EXAMPLES_DIR


def seen_by_engine(folder_or_files):
    files = folder_or_files if isinstance(folder_or_files, StudentFiles) else locate(folder_or_files, CONFIG)
    return (files.student, files.present, files.missing, files.others, files.linked, files.oversized,
            files.fingerprint(CONFIG))


def round_trip(folder):
    parcel = pickle.loads(pickle.dumps(pack(folder, CONFIG)))   # as it crosses the wire
    return parcel, parcel.student_files(CONFIG)


def test_a_complete_submission_arrives_byte_for_byte(tmp_path):
    parcel, copy = round_trip(EXAMPLES_DIR / "bob")
    assert seen_by_engine(copy) == seen_by_engine(EXAMPLES_DIR / "bob")
    assert parcel.size == sum(p.stat().st_size for p in (EXAMPLES_DIR / "bob").iterdir())


def test_nbgrader_layout_renamed_and_oversized_files_keep_their_reasons(tmp_path):
    folder = tmp_path / "subs" / "olga" / ASSIGNMENT   # nbgrader's layout
    folder.mkdir(parents=True)
    (folder / "codesign_final.py").write_text("x = 1\n")   # renamed: named in the feedback
    with open(folder / "handout.ipynb", "wb") as f:           # too large: graded by its size only
        f.truncate(MAX_STUDENT_FILE_BYTES + 1)
    (folder / "notes.txt").write_text("not a student file")
    parcel, copy = round_trip(tmp_path / "subs" / "olga")
    original = seen_by_engine(tmp_path / "subs" / "olga")
    assert seen_by_engine(copy) == original
    assert original[3] == ("codesign_final.py",) and original[5] == ("handout.ipynb",)
    assert parcel.files == () and parcel.oversized == (("handout.ipynb", MAX_STUDENT_FILE_BYTES + 1),)
    # nothing of it was sent: only its size
    assert copy.contents == {} and copy.size("handout.ipynb") == MAX_STUDENT_FILE_BYTES + 1


def test_a_linked_student_folder_sends_nothing(tmp_path):
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "lena").symlink_to(EXAMPLES_DIR / "alice")
    parcel, copy = round_trip(tmp_path / "subs" / "lena")
    assert parcel.linked and parcel.files == ()
    assert seen_by_engine(copy) == seen_by_engine(tmp_path / "subs" / "lena")


@pytest.mark.parametrize("name", ["..", "../escape", ".hidden", "a/b", ""])
def test_a_worker_refuses_names_that_are_not_plain_file_names(tmp_path, name):
    with pytest.raises(ParcelError):
        Parcel("mia", ((name, b"x = 1\n"),)).student_files(CONFIG)
    with pytest.raises(ParcelError):
        Parcel(name, ()).student_files(CONFIG)
    assert os.listdir(tmp_path) == []


def test_a_parcel_in_memory_is_graded_as_its_folder(tmp_path):
    """The worker grades the parcel's bytes without writing them out: the same score, items and
    fingerprint as grading the folder itself."""
    folder = EXAMPLES_DIR / "bob"
    _, files = round_trip(folder)
    from_folder, from_memory = grade_submission(ASSIGNMENT, folder), grade_submission(ASSIGNMENT, files)
    assert files.folder is None
    assert (from_memory.student, from_memory.score, from_memory.fingerprint) == \
        (from_folder.student, from_folder.score, from_folder.fingerprint)
    assert [(i.id, i.score, i.status) for i in from_memory.items] == [(i.id, i.score, i.status) for i in from_folder.items]


def test_a_parcel_naming_a_file_the_assignment_does_not_grade_is_refused():
    with pytest.raises(ParcelError):
        Parcel("mia", (("notes.py", b"x = 1\n"),)).student_files(CONFIG)


def test_a_pipe_named_like_a_student_file_is_not_read_into_the_parcel(tmp_path):
    """The client reads each student file to send it: a FIFO would stall the whole batch."""
    import time

    (tmp_path / "subs" / "mia").mkdir(parents=True)
    os.mkfifo(tmp_path / "subs" / "mia" / "codesign.py")
    started = time.monotonic()
    parcel, files = round_trip(tmp_path / "subs" / "mia")
    assert time.monotonic() - started < 5
    assert parcel.files == () and "codesign.py" not in files.present


def test_a_dot_file_beside_the_student_files_is_graded_on_a_cluster_as_locally(tmp_path):
    """Is a folder holding a Mac's `._codesign.py` (a zip made on a Mac carries one for each file)
    graded on a worker as it is here? The worker refused the parcel (a name starting with "."),
    so the student got a grader error on every run while a local run scored the folder."""
    folder = tmp_path / "subs" / "mac"
    shutil.copytree(EXAMPLES_DIR / "bob", folder)
    (folder / "._codesign.py").write_bytes(b"\x00\x05\x16\x07")
    _, files = round_trip(folder)
    assert seen_by_engine(files) == seen_by_engine(folder)
    assert files.others == ("._codesign.py",)
    local, remote = grade_submission(ASSIGNMENT, folder), grade_submission(ASSIGNMENT, files)
    assert local.score > 0
    assert (remote.score, remote.fingerprint) == (local.score, local.fingerprint)


@pytest.mark.parametrize("name", ["../escape.py", "a/b.py", ".", "", "notes.txt", "codesign.py"])
def test_a_worker_refuses_other_names_its_folder_could_not_have_listed(name):
    """A parcel's other .py / .ipynb names are the ones the engine lists in a folder (locate):
    not a path, not another kind of file, not a student file."""
    with pytest.raises(ParcelError):
        Parcel("mia", (), others=(name,)).student_files(CONFIG)
