"""`nbgrader zip_collect` on LMS downloads where one student's upload tries to steer a classmate's
collection, or is hostile to the instructor's machine. Student ids come only from the LMS's own
file names in downloaded/<assignment>/archive/; whatever is inside a student's archive is that
student's problem only: their upload is flagged (downloaded/<assignment>/flagged.csv and an error
in the log) and everyone else is collected.

Each class is one real `nbgrader zip_collect` run in a scratch copy of the course.
"""

from __future__ import annotations

import csv
import io
import stat
import subprocess
import tarfile
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from autograder.engine.lateness import parse_time
from course_copy import copy_course
from course_copy import run as run_in
from test_lms_upload import pax_bomb, zip_index_bomb

pytest.importorskip("nbgrader")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ASSIGNMENT = "lec01_codesign"
DUE = datetime(2030, 1, 31, 23, 59, tzinfo=timezone(timedelta(hours=8)))
FOLDER = f"{ASSIGNMENT}/"        # how a student zips their work: the folder as it was released


def own_code(student: str) -> str:
    return f"# {student}'s own work\nOWNER = {student!r}\n"


FORGED = "# planted by a classmate\nOWNER = 'forger'\n"


def zip_bytes(entries: list[tuple[zipfile.ZipInfo | str, bytes | str]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, data in entries:
            zf.writestr(info, data)
    return buf.getvalue()


def student_zip(student: str, *extra: tuple[zipfile.ZipInfo | str, bytes | str]) -> bytes:
    return zip_bytes([(FOLDER + "codesign.py", own_code(student)), *extra])


def collect(tmp_path_factory, name: str, uploads: dict[str, bytes | str], due: bool = False):
    """(course root, the finished zip_collect) for a download holding `uploads` (LMS file name ->
    content)."""
    root = copy_course(tmp_path_factory.mktemp(name))
    if due:
        done = run_in(root, "-m", "nbgrader", "db", "assignment", "add", ASSIGNMENT, f"--duedate={DUE.isoformat()}")
        assert done.returncode == 0, done.stderr[-3000:]
    archive = root / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    for lms_name, content in uploads.items():
        path = archive / lms_name
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root, run_in(root, "-m", "nbgrader", "zip_collect", ASSIGNMENT, "--force", timeout=300)


def submitted(root: Path, student: str) -> dict[str, str]:
    folder = root / "submitted" / student / ASSIGNMENT
    if not folder.is_dir():
        return {}
    return {p.name: p.read_text(encoding="utf-8", errors="replace") for p in folder.iterdir()}


def flagged(root: Path) -> dict[str, list[str]]:
    """student -> reasons, from downloaded/<assignment>/flagged.csv."""
    path = root / "downloaded" / ASSIGNMENT / "flagged.csv"
    assert path.is_file(), "zip_collect wrote no flagged.csv"
    rows: dict[str, list[str]] = {}
    with open(path, encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            rows.setdefault(row["student"], []).append(f"{row['lms_file']}: {row['reason']}")
    return rows


def explain(done: subprocess.CompletedProcess) -> str:
    return f"exit {done.returncode}\n{done.stderr[-4000:]}"


# ---------------------------------------------------------------------------------------------
# a classmate's upload steers victor's and walt's collection
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def steered(tmp_path_factory):
    return collect(tmp_path_factory, "steered", {
        "victor_LATE_9_9_codesign.py": own_code("victor"),              # victor hands in late, on his own
        "walt_7_7_codesign.py": own_code("walt"),                       # walt on time
        # zoe's zip imitates the collector's own folder: a late file "of victor's"
        "zoe_8_8_lec01.zip": student_zip("zoe", ("extracted/victor_LATE_9_9_codesign.py", FORGED)),
        # mallory's: a late extra file "of walt's", deep in her folder
        "mallory_6_6_lec01.zip": student_zip("mallory", (FOLDER + "extracted/walt_LATE_7_7_notes.py", FORGED)),
    }, due=True)


def test_a_classmates_archive_cannot_replace_victors_file(steered):
    root, done = steered
    assert done.returncode == 0, explain(done)
    assert submitted(root, "victor")["codesign.py"] == own_code("victor")


def test_a_nested_late_marker_does_not_make_a_classmate_late(steered):
    root, done = steered
    assert done.returncode == 0, explain(done)
    assert submitted(root, "walt") == {"codesign.py": own_code("walt")}       # no planted file, no timestamp.txt
    stamp = submitted(root, "victor")["timestamp.txt"]                          # victor's own _LATE still counts
    assert parse_time(stamp) == DUE + timedelta(seconds=1)


def test_the_steering_uploads_are_flagged_and_not_collected(steered):
    root, done = steered
    reasons = flagged(root)
    for student in ("zoe", "mallory"):
        assert submitted(root, student) == {}
        assert any("extracted/" in r for r in reasons[student]), reasons
        assert f"{student}:" in done.stderr and "not collected" in done.stderr
    assert set(reasons) == {"zoe", "mallory"}


def test_a_classmate_who_takes_a_students_name_in_the_lms_hands_in_nothing_for_her(tmp_path_factory):
    """Canvas names a download `<name>_<user id>_<submission id>_<file>`, the name being the one a
    student may edit in her profile where the school allows it. Bob, Canvas user 2002, renamed
    himself "alice" and handed in the notebook alice had not: it was collected as alice's
    (submitted/alice/ held his handout.ipynb beside her codesign.py). Two LMS users under one name
    are now both refused and listed, naming their user ids; the class is collected."""
    bobs = "# bob's notebook, not alice's\n"
    root, done = collect(tmp_path_factory, "renamed", {
        "alice_1001_5001_codesign.py": own_code("alice"),
        "alice_2002_5002_handout.ipynb": bobs,                          # bob, renamed in Canvas
        "carol_3003_5003_codesign.py": own_code("carol"),
    })
    assert done.returncode == 0, explain(done)
    assert submitted(root, "carol") == {"codesign.py": own_code("carol")}
    assert bobs not in submitted(root, "alice").values()
    reasons = flagged(root)["alice"]
    assert any("1001" in r and "2002" in r for r in reasons), reasons


# ---------------------------------------------------------------------------------------------
# the same plant while victor handed in his own file: nbgrader 0.9.6 aborted the whole class
# ---------------------------------------------------------------------------------------------
def test_a_planted_duplicate_does_not_abort_the_class(tmp_path_factory):
    root, done = collect(tmp_path_factory, "duplicate", {
        "amy_1_1_codesign.py": own_code("amy"),
        "victor_9_9_codesign.py": own_code("victor"),
        "mallory_6_6_lec01.zip": student_zip("mallory", ("extracted/victor_9_9_codesign.py", FORGED)),
    })
    assert done.returncode == 0, explain(done)
    assert "Duplicate submission file" not in done.stderr
    assert submitted(root, "amy") == {"codesign.py": own_code("amy")}
    assert submitted(root, "victor") == {"codesign.py": own_code("victor")}
    assert submitted(root, "mallory") == {} and set(flagged(root)) == {"mallory"}


# ---------------------------------------------------------------------------------------------
# uploads hostile to the instructor's machine, or ambiguous: each flagged, the class collected
# ---------------------------------------------------------------------------------------------
MIB = 1 << 20
BOMB_MIB = 256           # well past the extractor's default cap, ~260 KB compressed


def symlink_entry(name: str, target: str) -> tuple[zipfile.ZipInfo, str]:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    info.create_system = 3                                   # unix: the mode bits count
    return info, target


def bomb_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(FOLDER + "codesign.py", own_code("bo"))
        info = zipfile.ZipInfo(FOLDER + "handout.ipynb")
        info.compress_type = zipfile.ZIP_DEFLATED
        with zf.open(info, "w", force_zip64=True) as out:
            for _ in range(BOMB_MIB):
                out.write(bytes(MIB))
    return buf.getvalue()


def symlink_tar() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        data = own_code("tara").encode()
        info = tarfile.TarInfo(FOLDER + "handout.py")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo(FOLDER + "codesign.py")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(link)
    return buf.getvalue()


def corrupt_zip(student: str, method: int) -> bytes:
    """A zip whose index is sound but whose compressed data is not (a download cut short, or made
    so): deflate and LZMA say so with their own exceptions, not zipfile's."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        zf.writestr(FOLDER + "codesign.py", own_code(student) * 500)
    raw = bytearray(buf.getvalue())
    start = 30 + len(FOLDER + "codesign.py") + 10    # past the local header, inside the data
    for i in range(start, start + 40):
        raw[i] ^= 0x5A
    return bytes(raw)


HOSTILE = {   # student -> (LMS file name, content, what the flag must say)
    "nina": ("nina_1_1_lec01.zip", lambda: student_zip("nina", (FOLDER + "old.zip", zip_bytes([("codesign.py", "x")]))),
             "nested archive"),
    "tom": ("tom_1_1_lec01.zip", lambda: student_zip("tom", ("../../../../escape_tom.py", FORGED)), ".."),
    "abe": ("abe_1_1_lec01.zip", lambda: student_zip("abe", ("/tmp/escape_abe.py", FORGED)), "absolute path"),
    "sam": ("sam_1_1_lec01.zip", lambda: zip_bytes([symlink_entry(FOLDER + "codesign.py", "/etc/passwd")]),
            "symbolic link"),
    "tara": ("tara_1_1_lec01.tar.gz", symlink_tar, "symbolic link"),
    "bo": ("bo_1_1_lec01.zip", bomb_zip, "MiB"),
    "dana": ("dana_1_1_lec01.zip", lambda: student_zip("dana", ("old/codesign.py", FORGED)), "codesign.py twice"),
    "cora": ("cora_1_1_lec01.zip", lambda: b"PK\x03\x04 this is no zip", "not a readable"),
    "dora": ("dora_1_1_lec01.zip", lambda: corrupt_zip("dora", zipfile.ZIP_DEFLATED), "could not be unpacked"),
    "lena": ("lena_1_1_lec01.zip", lambda: corrupt_zip("lena", zipfile.ZIP_LZMA), "could not be unpacked"),
    # a few MB whose pax header claims 1 GiB (before: read into memory, MemoryError, nobody collected)
    "paxton": ("paxton_1_1_lec01.tar.gz", lambda: pax_bomb(1 << 30), "header"),
    "zed": ("zed_1_1_lec01.zip", lambda: zip_index_bomb(100_000), "entries"),
    # a notebook the grader would not read (over 20 MB), within the upload's 64 MiB: nbgrader's autograde
    # read all of it, cell by cell, in the one process that autogrades the class
    "nora": ("nora_1_1_lec01.zip", lambda: student_zip("nora", (FOLDER + "handout.ipynb", bytes(21 * MIB))),
             "larger than the grader reads"),
}


HIDDEN = "._amy_1001_2001_lec01.zip"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    uploads = {name: make() for name, make, _ in HOSTILE.values()}
    uploads.update({
        "amy_1001_2001_lec01.zip": student_zip("amy", (f"__MACOSX/{FOLDER}._codesign.py", "resource fork")),
        "bob_1002_2002_codesign.py": own_code("bob"),                       # Canvas: loose files
        # carl's two loose files both end up as codesign.py, and there is no time to choose by
        "carl_1003_2003_codesign.py": own_code("carl"),
        "carl_1003_2003_codesign-1.py": own_code("carl") + "# again\n",
        "submissions.zip": zip_bytes([("x_1_1_codesign.py", FORGED)]),      # no student's name
        HIDDEN: zip_bytes([("codesign.py", FORGED)]),                       # a macOS resource fork's name
    })
    return collect(tmp_path_factory, "hostile", uploads)


def test_honest_classmates_of_hostile_uploads_are_collected(hostile):
    root, done = hostile
    assert done.returncode == 0, explain(done)
    assert submitted(root, "amy") == {"codesign.py": own_code("amy")}
    assert submitted(root, "bob") == {"codesign.py": own_code("bob")}


@pytest.mark.parametrize("student", sorted(HOSTILE))
def test_a_hostile_upload_is_flagged_with_its_reason_and_not_collected(hostile, student):
    root, done = hostile
    lms_name, _, reason = HOSTILE[student]
    assert submitted(root, student) == {}
    reasons = flagged(root)
    assert any(r.startswith(f"{lms_name}: ") and reason in r for r in reasons.get(student, [])), reasons
    assert not (root / "downloaded" / ASSIGNMENT / "extracted" / lms_name).exists()   # nothing of it unpacked


def test_two_files_of_the_same_name_without_times_flag_that_student_only(hostile):
    root, _ = hostile
    assert submitted(root, "carl") == {}
    assert any("codesign.py twice" in r for r in flagged(root)["carl"])


def test_a_file_named_for_no_student_is_reported(hostile):
    root, _ = hostile
    assert any(r.startswith("submissions.zip: ") for r in flagged(root)[""])
    assert not (root / "submitted" / "x").exists()


def test_nothing_is_written_outside_the_extracted_folder(hostile):
    root, _ = hostile
    assert not list(root.parent.rglob("escape_tom.py")) and not Path("/tmp/escape_abe.py").exists()
    extracted = root / "downloaded" / ASSIGNMENT / "extracted"
    assert all(p.stat().st_size < MIB for p in extracted.rglob("*") if p.is_file())
    assert not [p for p in extracted.rglob("*") if p.is_symlink()]


def test_a_hidden_lms_file_is_logged_and_flagged_not_skipped_silently(hostile):
    root, done = hostile
    assert any(r.startswith(f"{HIDDEN}: ") and "hidden" in r for r in flagged(root)[""]), flagged(root)
    assert HIDDEN in done.stderr
    assert "FORGED" not in str(submitted(root, "amy")) and not (root / "submitted" / ".").joinpath("_amy").exists()


def test_students_without_a_submission_time_are_named_in_a_warning(hostile):
    _, done = hostile
    warning = next(line for line in done.stderr.splitlines() if "No submission time known" in line)
    assert "amy" in warning and "bob" in warning and "timestamp.txt" in warning


ESCAPING_NAME = "\x1b]52;c;aGk=\x07\x1b[2Jnotes.py"   # OSC 52 (writes the clipboard), then clears the screen


def test_a_file_in_an_upload_named_with_terminal_escapes_reaches_no_terminal(tmp_path_factory):
    """A student's zip holds, beside codesign.py, a .py file whose name is a terminal escape
    sequence: zip_collect collected it under that name, and nbgrader (zip_collect's own copy, then
    autograde's and generate_feedback's "Copying <file> -> <dest>") printed it raw on the
    instructor's terminal. The upload is refused and listed, the name shown escaped."""
    root, done = collect(tmp_path_factory, "escaping", {
        "ivy_1_1_lec01.zip": student_zip("ivy", (FOLDER + ESCAPING_NAME, "x = 1\n")),
        f"ida_1_1_{ESCAPING_NAME}": "x = 1\n",     # a loose file: the LMS keeps the student's own name
        "bob_1002_2002_codesign.py": own_code("bob"),
        # what macOS adds (never unpacked) does not refuse an honest upload
        "amy_1001_2001_lec01.zip": student_zip("amy", (f"__MACOSX/{FOLDER}._Icon\r", "resource fork")),
    })
    assert done.returncode == 0, explain(done)
    assert submitted(root, "amy") == {"codesign.py": own_code("amy")}
    assert "\x1b" not in done.stderr + done.stdout
    assert not [p for p in (root / "submitted").rglob("*") if "\x1b" in p.name]
    assert submitted(root, "bob") == {"codesign.py": own_code("bob")}
    assert any("control character" in r for r in flagged(root).get("ivy", [])), flagged(root)
    assert any(r.startswith("ida_1_1_\\u001b") and "control character" in r for r in flagged(root)["ida"]), flagged(root)


def test_a_timestamp_a_late_student_puts_in_their_upload_is_not_the_submission_time(tmp_path_factory):
    """kim hands in late (Canvas marks the file _LATE) a zip holding a timestamp.txt of their own,
    dated before the due date, beside it a loose one, and a `timestamp.txt.py`: nbgrader autograde
    and the trusted grader read submitted/kim/lec01_codesign/timestamp.txt, so a student's file
    collected there would have cancelled the late penalty. Only the LMS's _LATE counts."""
    early = "2000-01-01 00:00:00.000000 UTC"
    root, done = collect(tmp_path_factory, "own_time", {
        "kim_LATE_5_5_lec01.zip": student_zip("kim", (FOLDER + "timestamp.txt", early),
                                              (FOLDER + "timestamp.txt.py", early)),
        "kim_LATE_5_5_timestamp.txt": early,
    }, due=True)
    assert done.returncode == 0, explain(done)
    stamp = submitted(root, "kim").get("timestamp.txt", "")
    assert stamp and parse_time(stamp.strip(), "timestamp.txt") > DUE, stamp


def deep_zip(student: str, levels: int) -> bytes:
    """The student's own codesign.py, and a note in each of `levels` nested folders (one entry per
    level, in order: each is unpacked one folder below the last one)."""
    entries, folder = [(FOLDER + "codesign.py", own_code(student))], FOLDER
    for _ in range(levels):
        folder += "d/"
        entries.append((folder + "n.txt", "x"))
    return zip_bytes(entries)


def test_an_upload_of_very_deep_folders_is_flagged_and_the_class_collected(tmp_path_factory):
    """A zip of 1,100 nested folders (2,200 bytes of path, 1,101 small entries: within every cap of
    the extractor) was unpacked as it came; nbgrader then listed extracted/ with os.walk, which
    recurses once a folder (Python 3.11) and raised RecursionError: zip_collect stopped, nobody
    collected. The next run's --force clears extracted/ with shutil.rmtree, recursive too."""
    root, done = collect(tmp_path_factory, "deep", {
        "amy_1_1_codesign.py": own_code("amy"),
        "mallory_6_6_lec01.zip": deep_zip("mallory", 1100),
    })
    assert done.returncode == 0, explain(done)
    assert "RecursionError" not in done.stderr
    assert submitted(root, "amy") == {"codesign.py": own_code("amy")}
    assert submitted(root, "mallory") == {} and set(flagged(root)) == {"mallory"}


def test_a_flood_of_one_students_unreadable_names_is_counted_not_listed_row_by_row(tmp_path_factory):
    """Canvas keeps a student's own file names after its prefix; one student hands in 300 files
    whose names hold a zero-width space. Each was a row of flagged.csv and an error line, none
    named for her ("(no student)"): a classmate's one refused upload was row 150 of 302. Now her
    rows are hers, at most 20 and one that counts the rest; the classmate's row is still listed."""
    uploads = {f"eve_1_1_notes\u200b{i:03d}.py": "x = 1\n" for i in range(300)}
    uploads.update({"eve_1_1_codesign.py": own_code("eve"), "amy_1001_2001_codesign.py": own_code("amy"),
                    "ben_1002_2002_lec01.zip": zip_bytes([(FOLDER + "codesign.py", own_code("ben")),
                                                          (FOLDER + "link.py", "x")])[:40]})   # a broken zip
    root, done = collect(tmp_path_factory, "flood", uploads)
    assert done.returncode == 0, explain(done)
    assert submitted(root, "amy") == {"codesign.py": own_code("amy")}
    assert submitted(root, "eve") == {"codesign.py": own_code("eve")}
    rows = flagged(root)
    assert "ben" in rows, rows
    assert len(rows.get("eve", [])) == 21, {k: len(v) for k, v in rows.items()}
    assert "280 more" in rows["eve"][-1], rows["eve"][-1]
    assert len(rows.get("", [])) == 0, rows.get("")
    assert done.stderr.count("notes\\u200b") <= 20


def test_a_name_inside_a_folder_of_the_download_is_no_lms_name(tmp_path_factory):
    """An LMS that downloads in folders (Moodle: `Full Name_id_assignsubmission_file_/<the student's
    own file name>`): inside the folder the name is the student's. Eve named hers like Amy's Canvas-style
    file: it was read as Amy's, two codesign.py with no time to choose by, and none of Amy's own was
    collected. Only the names in archive/ itself say who handed in; a file in a folder is listed."""
    root = copy_course(tmp_path_factory.mktemp("folders"))
    archive = root / "downloaded" / ASSIGNMENT / "archive"
    (archive / "Eve Evil_1009_assignsubmission_file_").mkdir(parents=True)
    (archive / "amy_1001_2001_codesign.py").write_text(own_code("amy"))
    (archive / "Eve Evil_1009_assignsubmission_file_" / "amy_1001_2001_codesign.py").write_text(FORGED)
    done = run_in(root, "-m", "nbgrader", "zip_collect", ASSIGNMENT, "--force", timeout=300)
    assert done.returncode == 0, explain(done)
    assert submitted(root, "amy") == {"codesign.py": own_code("amy")}
    rows = flagged(root)
    assert any(r.startswith("Eve Evil_1009_assignsubmission_file_/amy_1001_2001_codesign.py: ") and "folder" in r
               for r in rows.get("", [])), rows


def test_a_late_marker_collected_after_the_last_day_scores_nothing_and_an_extension_moves_it(tmp_path_factory):
    """Canvas's _LATE says late, not when: zip_collect recorded one second after the class's due date.
    lia hands in on Canvas after the late policy's last day, when the solutions are out, and was
    charged one day (10 %) for them; max, whose extension ended yesterday, was recorded before her
    own due date and charged nothing."""
    import os
    import sys

    from nbgrader.api import Gradebook

    from autograder.engine.lateness import DAY, load_policy
    from autograder.engine.registry import load_config

    policy = load_policy(load_config(ASSIGNMENT))
    now = datetime.now(timezone.utc).replace(microsecond=0)
    due = now - timedelta(seconds=policy.open_seconds() + 2 * DAY)
    root = copy_course(tmp_path_factory.mktemp("after_last_day"))
    done = run_in(root, "-m", "nbgrader", "db", "assignment", "add", ASSIGNMENT, f"--duedate={due.isoformat()}")
    assert done.returncode == 0, done.stderr[-3000:]
    extension = timedelta(seconds=policy.open_seconds() + DAY)   # her own due date: yesterday
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), path])   # nbgrader's alembic
    try:
        with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
            gb.update_or_create_student("max")
            gb.update_or_create_submission(ASSIGNMENT, "max")
            gb.grant_extension(ASSIGNMENT, "max", minutes=extension.total_seconds() / 60)
    finally:
        os.environ["PATH"] = path
    archive = root / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    for student in ("lia", "max"):
        (archive / f"{student}_LATE_5_5_codesign.py").write_text(own_code(student))
    done = run_in(root, "-m", "nbgrader", "zip_collect", ASSIGNMENT, "--force", timeout=300)
    assert done.returncode == 0, explain(done)
    lia = parse_time(submitted(root, "lia")["timestamp.txt"].strip(), "timestamp.txt")
    assert policy.past_last_day((lia - due).total_seconds()), lia
    assert "lia" in done.stderr and "last day" in done.stderr, explain(done)
    max_at = parse_time(submitted(root, "max")["timestamp.txt"].strip(), "timestamp.txt")
    assert max_at > due + extension, max_at
