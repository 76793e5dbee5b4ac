"""Does a submission packed on the instructor's side and written out on a worker look to the
engine exactly like the original folder: same files found, same fingerprint, same reasons a
file is not graded (a link, an oversized file, a renamed file)?"""

from __future__ import annotations

import os
import pickle

import pytest

from autograder.cluster.parcel import Parcel, ParcelError, pack
from autograder.engine.locate import MAX_STUDENT_FILE_BYTES, locate
from engine.corpus import ASSIGNMENT, CONFIG, EXAMPLES_DIR


def seen_by_engine(folder):
    files = locate(folder, CONFIG)
    return (files.student, files.present, files.missing, files.others, files.linked, files.oversized,
            files.fingerprint(CONFIG))


def round_trip(folder, tmp_path):
    parcel = pickle.loads(pickle.dumps(pack(folder, CONFIG)))   # as it crosses the wire
    (tmp_path / "worker").mkdir()
    return parcel, parcel.materialize(tmp_path / "worker")


def test_a_complete_submission_arrives_byte_for_byte(tmp_path):
    parcel, copy = round_trip(EXAMPLES_DIR / "bob", tmp_path)
    assert seen_by_engine(copy) == seen_by_engine(EXAMPLES_DIR / "bob")
    assert parcel.size == sum(p.stat().st_size for p in (EXAMPLES_DIR / "bob").iterdir())


def test_nbgrader_layout_renamed_and_oversized_files_keep_their_reasons(tmp_path):
    folder = tmp_path / "subs" / "olga" / ASSIGNMENT   # nbgrader's layout
    folder.mkdir(parents=True)
    (folder / "codesign_final.py").write_text("x = 1\n")   # renamed: named in the feedback
    with open(folder / "handout.ipynb", "wb") as f:           # too large: graded by its size only
        f.truncate(MAX_STUDENT_FILE_BYTES + 1)
    (folder / "notes.txt").write_text("not a student file")
    parcel, copy = round_trip(tmp_path / "subs" / "olga", tmp_path)
    original = seen_by_engine(tmp_path / "subs" / "olga")
    assert seen_by_engine(copy) == original
    assert original[3] == ("codesign_final.py",) and original[5] == ("handout.ipynb",)
    assert parcel.files == () and parcel.oversized == (("handout.ipynb", MAX_STUDENT_FILE_BYTES + 1),)
    assert (copy / "handout.ipynb").stat().st_blocks == 0   # sparse: nothing of it was sent


def test_a_linked_student_folder_sends_nothing(tmp_path):
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "lena").symlink_to(EXAMPLES_DIR / "alice")
    parcel, copy = round_trip(tmp_path / "subs" / "lena", tmp_path)
    assert parcel.linked and parcel.files == ()
    assert seen_by_engine(copy) == seen_by_engine(tmp_path / "subs" / "lena")


@pytest.mark.parametrize("name", ["..", "../escape", ".hidden", "a/b", ""])
def test_a_worker_refuses_names_that_are_not_plain_file_names(tmp_path, name):
    with pytest.raises(ParcelError):
        Parcel("mia", ((name, b"x = 1\n"),)).materialize(tmp_path)
    with pytest.raises(ParcelError):
        Parcel(name, ()).materialize(tmp_path)
    assert os.listdir(tmp_path) == []


def test_a_pipe_named_like_a_student_file_is_not_read_into_the_parcel(tmp_path):
    """The client reads each student file to send it: a FIFO would stall the whole batch."""
    import time

    (tmp_path / "subs" / "mia").mkdir(parents=True)
    os.mkfifo(tmp_path / "subs" / "mia" / "codesign.py")
    started = time.monotonic()
    parcel, copy = round_trip(tmp_path / "subs" / "mia", tmp_path)
    assert time.monotonic() - started < 5
    assert parcel.files == () and not (copy / "codesign.py").exists()
