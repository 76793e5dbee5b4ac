"""What collect takes from one inbound folder: whose it is, which files, what time. Folders are made
here as `nbgrader submit` lays them out and handed to real accounts (useradd, chown); the
end-to-end run with nbgrader's own submit and collect is tests/nbgrader/test_exchange.py."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from memory_peak import traced_peak

from autograder.engine.lateness import parse_time
from autograder.nbgrader_bridge.inbound import (FILE_LEFT_OUT, NOT_COLLECTED, TIME_TAKEN, CopyRules, Refused,
                                                Submission, copy_submission, read_submission)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="hands folders to other accounts: needs root")

STUDENT, OTHER = "cs349e-ann", "cs349e-ben"
ASSIGNMENT = "lec01_codesign"
TOLERANCE = 120.0


def uid(name: str) -> int:
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        made = subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", name],
                              capture_output=True, text=True)
        assert made.returncode in (0, 9), made.stderr
        return pwd.getpwnam(name).pw_uid


def stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def handed_in(inbound: Path, *, owner: str = STUDENT, named: str = STUDENT, when: datetime | None = None) -> Path:
    """A folder as `nbgrader submit` leaves it, owned by `owner`, in `named`'s name."""
    when = when or datetime.now(timezone.utc)
    folder = inbound / f"{named}+{ASSIGNMENT}+{stamp(when)}+rAnD0m"
    folder.mkdir(parents=True)
    (folder / "codesign.py").write_text("def f():\n    return 1\n")
    (folder / "handout.ipynb").write_text("{}")
    (folder / "timestamp.txt").write_text(stamp(when))
    give(folder, owner)
    return folder


def give(path: Path, owner: str) -> None:
    subprocess.run(["chown", "-hR", f"{uid(owner)}:{uid(owner)}", str(path)], check=True)


def read(folder: Path, collector_uid: int = 0):
    return read_submission(folder, parse_time, collector_uid=collector_uid, tolerance=TOLERANCE)


def test_an_honest_folder_is_taken_at_its_names_time(tmp_path):
    when = datetime.now(timezone.utc) - timedelta(seconds=5)
    sub = read(handed_in(tmp_path, when=when))
    assert sub.student == STUDENT and sub.uid == uid(STUDENT) and sub.flags == ()
    assert abs((sub.time - when).total_seconds()) < 1e-3
    flags = copy_submission(sub, tmp_path / "out", CopyRules())
    assert flags == [] and sorted(p.name for p in (tmp_path / "out").iterdir()) == ["codesign.py", "handout.ipynb"]


def test_a_folder_owned_by_another_student_is_refused(tmp_path):
    with pytest.raises(Refused) as refused:
        read(handed_in(tmp_path, owner=OTHER))
    flag = refused.value.args[0]
    assert flag.student == STUDENT and flag.outcome == NOT_COLLECTED and OTHER in flag.reason


def test_a_name_with_no_account_is_refused_unless_the_instructor_says_students_share_one_uid(tmp_path):
    folder = handed_in(tmp_path, owner=OTHER, named="nobody-here")
    with pytest.raises(Refused, match="students_share_uid"):
        read(folder)
    sub = read_submission(folder, parse_time, collector_uid=0, tolerance=TOLERANCE, shared_uid=uid(OTHER))
    assert sub.student == "nobody-here" and sub.uid == uid(OTHER)


@pytest.mark.parametrize("named", ["..", ".", ""])
def test_a_name_that_is_a_path_step_is_refused_even_where_students_share_one_uid(tmp_path, named):
    """Where students share a uid, any name is taken: `..+lec01_codesign+...` was collected as
    student "..", into submitted/../lec01_codesign, i.e. outside submitted/ (and "" or "." into
    submitted/lec01_codesign, a student named after the assignment)."""
    folder = handed_in(tmp_path, owner=OTHER, named=named)
    with pytest.raises(Refused, match="is not a student id"):
        read_submission(folder, parse_time, collector_uid=0, tolerance=TOLERANCE, shared_uid=uid(OTHER))
    with pytest.raises(Refused, match="is not a student id"):
        read(folder, collector_uid=uid(OTHER))   # nor when the collecting account made it


@pytest.mark.parametrize("named", ["\x1b]52;c;aGk=\x07alice", "bob\nalice: collected", "carol\x9b2J", "ecila\u202e"])
def test_a_name_with_control_characters_is_refused_even_where_students_share_one_uid(tmp_path, named):
    """No account name holds a control character, but where students share a uid any folder name
    was collected, and became the student id that pregrade, reconcile and nbgrader print raw on
    the instructor's terminal (OSC 52 writes their clipboard) and write into every report."""
    folder = handed_in(tmp_path, owner=OTHER, named=named)
    with pytest.raises(Refused, match="control character") as refused:
        read_submission(folder, parse_time, collector_uid=0, tolerance=TOLERANCE, shared_uid=uid(OTHER))
    assert "\x1b" not in refused.value.args[0].reason and "\n" not in refused.value.args[0].reason


def test_a_folder_the_collecting_account_made_is_taken(tmp_path):
    """An instructor who submitted for a student (`nbgrader submit --student`)."""
    assert read(handed_in(tmp_path, owner=OTHER), collector_uid=uid(OTHER)).student == STUDENT


def test_a_link_in_the_inbound_folder_is_refused(tmp_path):
    target = handed_in(tmp_path / "elsewhere")
    (tmp_path / "inbound").mkdir()
    link = tmp_path / "inbound" / f"{STUDENT}+{ASSIGNMENT}+{stamp(datetime.now(timezone.utc))}+x"
    link.symlink_to(target)
    give(link, STUDENT)
    with pytest.raises(Refused, match="symbolic link"):
        read(link)


def test_links_foreign_files_and_pipes_are_left_out(tmp_path):
    secret = tmp_path / "solutions.py"
    secret.write_text("SOLVED = True\n")
    folder = handed_in(tmp_path / "inbound")
    (folder / "codesign.py").unlink()
    (folder / "codesign.py").symlink_to(secret)
    (folder / "sub").mkdir()
    (folder / "sub" / "linked").symlink_to(tmp_path)
    (folder / "planted.py").write_text("x = 1\n")
    os.mkfifo(folder / "fifo")
    give(folder, STUDENT)
    give(folder / "planted.py", OTHER)          # a classmate wrote into the 0777 folder
    sub = read(folder)
    flags = {f.file: f for f in copy_submission(sub, tmp_path / "out", CopyRules())}
    assert set(flags) == {"codesign.py", "sub/linked", "planted.py", "fifo"}
    assert all(f.outcome == FILE_LEFT_OUT for f in flags.values())
    assert "link" in flags["codesign.py"].reason and OTHER in flags["planted.py"].reason
    copied = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*"))
    assert copied == ["handout.ipynb", "sub"]


def test_a_hard_link_to_another_accounts_file_is_left_out(tmp_path):
    secret = tmp_path / "solutions.py"
    secret.write_text("SOLVED = True\n")
    folder = handed_in(tmp_path / "inbound")
    (folder / "codesign.py").unlink()
    os.link(secret, folder / "codesign.py")     # root makes it; protected_hardlinks stops a student
    flags = copy_submission(read(folder), tmp_path / "out", CopyRules())
    assert [f.file for f in flags] == ["codesign.py"] and not (tmp_path / "out" / "codesign.py").exists()


def test_a_rewritten_timestamp_file_is_flagged_and_the_names_time_kept(tmp_path):
    folder = handed_in(tmp_path)
    (folder / "timestamp.txt").write_text(stamp(datetime(2020, 1, 1, tzinfo=timezone.utc)))
    sub = read(folder)
    assert abs((sub.time - parse_time(folder.name.split("+")[2])).total_seconds()) < 1e-3
    assert [(f.file, f.outcome) for f in sub.flags] == [("timestamp.txt", TIME_TAKEN)]
    assert not (tmp_path / "out").exists()
    copy_submission(sub, tmp_path / "out", CopyRules())
    assert not (tmp_path / "out" / "timestamp.txt").exists()     # collect writes its own


@pytest.mark.parametrize("shift", [timedelta(days=-30), timedelta(days=30)])
def test_a_name_whose_time_disagrees_with_the_ctime_gets_the_ctime(tmp_path, shift):
    """A folder renamed to an earlier time, or named with a future one."""
    before = datetime.now(timezone.utc) - timedelta(seconds=2)
    sub = read(handed_in(tmp_path, when=datetime.now(timezone.utc) + shift))
    assert before <= sub.time <= datetime.now(timezone.utc) + timedelta(seconds=2)
    assert any(f.outcome == TIME_TAKEN and f.file == "" and "ctime" in f.reason for f in sub.flags)


def test_a_folder_over_the_size_cap_is_refused_and_nothing_is_left(tmp_path):
    folder = handed_in(tmp_path / "inbound")
    (folder / "big.py").write_bytes(b"#" * 5000)
    give(folder, STUDENT)
    with pytest.raises(Refused, match="more than 1000 bytes"):
        copy_submission(read(folder), tmp_path / "out", CopyRules(max_total_bytes=1000))
    assert not (tmp_path / "out").exists()


def test_ignored_names_are_not_copied(tmp_path):
    folder = handed_in(tmp_path / "inbound")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "x.pyc").write_bytes(b"\0")
    give(folder, STUDENT)
    copy_submission(read(folder), tmp_path / "out", CopyRules(ignore=("__pycache__",)))
    assert not (tmp_path / "out" / "__pycache__").exists()


# -- a second hostile round: what a student can still do to a folder it owns ----------------------

def test_a_file_rewritten_in_place_after_handing_in_moves_the_time(tmp_path):
    """Editing codesign.py inside an on-time folder (same inode) leaves the folder's ctime as it was;
    the file's own ctime is what tells."""
    folder = handed_in(tmp_path / "inbound")
    named = parse_time(folder.name.split("+")[2])
    target = folder / "codesign.py"
    late = os.stat(target).st_ctime + 2.0
    while datetime.now(timezone.utc).timestamp() < late:   # the ctime must be later than the tolerance
        os.sched_yield()
    with open(target, "r+") as handle:                    # same inode, as the student's own editor
        handle.write("def f():\n    return 2\n")
    sub = read_submission(folder, parse_time, collector_uid=0, tolerance=1.0)
    assert (sub.time - named).total_seconds() > 1.0
    assert any(f.outcome == TIME_TAKEN and "codesign.py" in f.reason for f in sub.flags)


def test_a_file_changed_after_the_folder_was_read_refuses_it(tmp_path):
    """Between read_submission and the copy, the student adds or rewrites a file."""
    folder = handed_in(tmp_path / "inbound")
    sub = read(folder)
    late = max(os.stat(p).st_ctime for p in (folder, *folder.iterdir())) + 0.05
    while datetime.now(timezone.utc).timestamp() < late:
        os.sched_yield()
    (folder / "codesign.py").write_text("def f():\n    return 3\n")
    with pytest.raises(Refused, match="changed while"):
        copy_submission(sub, tmp_path / "out", CopyRules())
    assert not (tmp_path / "out").exists()


def test_a_deeply_nested_folder_is_left_out_not_a_crash(tmp_path):
    folder = handed_in(tmp_path / "inbound")
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(1200):        # deeper than PATH_MAX and Python's recursion limit: built one level at a time
        os.mkdir("d", dir_fd=fd)
        os.chown("d", uid(STUDENT), uid(STUDENT), dir_fd=fd)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    give(folder, STUDENT)
    try:
        flags = copy_submission(read(folder), tmp_path / "out", CopyRules())
        assert any(f.outcome == FILE_LEFT_OUT and "deeper" in f.reason for f in flags)
        assert (tmp_path / "out" / "codesign.py").is_file()
    finally:
        unnest(folder, "d")


def unnest(folder: Path, name: str) -> None:
    """Removes a chain of folders `name`/`name`/... too deep for shutil.rmtree's recursion."""
    fds = [os.open(folder, os.O_RDONLY | os.O_DIRECTORY)]
    while True:
        try:
            fds.append(os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fds[-1]))
        except FileNotFoundError:
            break
    os.close(fds.pop())
    while fds:
        os.rmdir(name, dir_fd=fds[-1])
        os.close(fds.pop())


def test_a_folder_with_too_many_entries_is_refused(tmp_path):
    """Millions of empty files cost collect time and inodes, never bytes."""
    folder = handed_in(tmp_path / "inbound")
    (folder / "many").mkdir()
    for index in range(60):
        (folder / "many" / f"{index}.py").touch()
    give(folder, STUDENT)
    with pytest.raises(Refused, match="more than 50"):
        copy_submission(read(folder), tmp_path / "out", CopyRules(max_entries=50))
    assert not (tmp_path / "out").exists()


def test_a_subfolder_the_instructor_cannot_read_is_left_out_not_a_crash():
    """collect runs as the instructor's account; a 0700 folder inside the student's 0777 one."""
    tmp_path = Path(tempfile.mkdtemp(dir="/var/tmp"))    # pytest's own tmp_path is root's only
    os.chmod(tmp_path, 0o711)
    folder = handed_in(tmp_path / "inbound")
    (folder / "private").mkdir()
    (folder / "private" / "x.py").write_text("x = 1\n")
    give(folder, STUDENT)
    os.chmod(folder, 0o777)
    os.chmod(folder / "private", 0o700)
    out = tmp_path / "collector"
    out.mkdir()
    give(out, OTHER)
    sub = read(folder, collector_uid=uid(OTHER))
    pid = os.fork()
    if pid == 0:     # the instructor's account
        code = 3
        try:
            os.setresgid(uid(OTHER), uid(OTHER), uid(OTHER))
            os.setresuid(uid(OTHER), uid(OTHER), uid(OTHER))
            flags = copy_submission(sub, out / "sub", CopyRules())
            code = 0 if [f.file for f in flags] == ["private"] and (out / "sub" / "codesign.py").is_file() else 1
        except BaseException:
            code = 2
        finally:
            os._exit(code)
    try:
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def test_a_huge_sparse_file_is_left_out_unread(tmp_path):
    """10 GiB that take no disk: its size alone leaves it out (and the folder's cap stops a file
    that grows after the check)."""
    folder = handed_in(tmp_path / "inbound")
    with open(folder / "weights.npy", "wb") as handle:
        handle.truncate(10 * 1024**3)
    give(folder, STUDENT)
    flags = copy_submission(read(folder), tmp_path / "out", CopyRules())
    assert [(f.file, f.outcome) for f in flags] == [("weights.npy", FILE_LEFT_OUT)]
    assert not (tmp_path / "out" / "weights.npy").exists()


def test_a_notebook_larger_than_the_grader_reads_is_left_out(tmp_path):
    """The trusted grader reads notebooks of up to 20 MB and scores a larger one nothing, but collect
    took up to nbgrader's 100 MB, and nbgrader's autograde then read all of it: about 0.3 ms and 7 KB
    of memory a cell (100,000 one-line cells, 11 MB: 34 s and 670 MB), so 100 MB of cells was minutes
    and gigabytes in the one process that autogrades the class. Left out and listed, unread; other
    files keep nbgrader's bound."""
    from autograder.engine.locate import MAX_STUDENT_FILE_BYTES

    folder = handed_in(tmp_path / "inbound")
    with open(folder / "handout.ipynb", "wb") as handle:
        handle.truncate(MAX_STUDENT_FILE_BYTES + 1)
    with open(folder / "data.bin", "wb") as handle:
        handle.truncate(MAX_STUDENT_FILE_BYTES + 1)
    give(folder, STUDENT)
    flags = copy_submission(read(folder), tmp_path / "out", CopyRules())
    assert [(f.file, f.outcome) for f in flags] == [("handout.ipynb", FILE_LEFT_OUT)]
    assert "20 MB" in flags[0].reason
    assert not (tmp_path / "out" / "handout.ipynb").exists() and (tmp_path / "out" / "data.bin").is_file()


def test_file_names_that_are_not_utf8_are_listed_not_a_crash(tmp_path):
    """A student's folder holds a link named with bytes that are no UTF-8 (any bytes but '/' make a
    file name): before, writing the instructor's list stopped with UnicodeEncodeError, and the
    collect of everyone with it; now the row names the file with the bytes escaped."""
    from autograder.nbgrader_bridge.flagged import read_rows, write_collect_flags

    folder = handed_in(tmp_path / "inbound")
    odd = os.fsdecode(b"caf\xe9\xff.py")
    (folder / odd).symlink_to(tmp_path)
    give(folder, STUDENT)
    flags = copy_submission(read(folder), tmp_path / "out", CopyRules())
    assert [f.file for f in flags] == [odd]
    listed = tmp_path / "collect_flagged" / f"{ASSIGNMENT}.csv"
    write_collect_flags(listed, flags)
    (row,) = read_rows(listed)
    assert row["file"] == "caf\\xe9\\xff.py" and row["outcome"] == FILE_LEFT_OUT


EDGE_TIMES = ("0001-01-01 00:00:00 +0100", "9999-12-31 23:59:59 -0100", "9" * 400,
              "2020-01-01 00:00:00 +99999999999", "99999999999999999999-01-01", "nan", "\x00")


@pytest.mark.parametrize("parse", ["nbgrader", "lateness"])
@pytest.mark.parametrize("edge", EDGE_TIMES)
def test_a_time_at_the_edge_of_the_calendar_is_refused_or_flagged_not_a_crash(tmp_path, parse, edge):
    """A name or timestamp.txt whose time falls off the calendar once taken to UTC would stop collect
    for the whole class if it raised anything but a refusal."""
    from nbgrader.utils import parse_utc
    parse_time_of = parse_utc if parse == "nbgrader" else parse_time
    folder = handed_in(tmp_path / "a")
    (folder / "timestamp.txt").write_text(edge)
    sub = read_submission(folder, parse_time_of, collector_uid=0, tolerance=TOLERANCE)
    assert [f.file for f in sub.flags] == ["timestamp.txt"]
    named = handed_in(tmp_path / "b")
    renamed = named.with_name(f"{STUDENT}+{ASSIGNMENT}+{edge.replace('/', '')}+rAnD0m")
    try:
        named.rename(renamed)
    except (ValueError, OSError):
        return                                    # a name no file system takes
    try:
        taken = read_submission(renamed, parse_time_of, collector_uid=0, tolerance=TOLERANCE)
    except Refused as refused:
        assert refused.args[0].outcome == NOT_COLLECTED
    else:
        assert any(f.outcome == TIME_TAKEN for f in taken.flags), taken


def _nest(folder: Path, name: str, levels: int, owner: str = STUDENT) -> None:
    """`levels` folders `name`/`name`/... below `folder`, made one at a time (as a student's shell
    can, past PATH_MAX)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(levels):
        os.mkdir(name, dir_fd=fd)
        os.chown(name, uid(owner), uid(owner), dir_fd=fd)
        inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)


def test_names_too_long_to_copy_are_left_out_not_a_crash_of_the_whole_collect(tmp_path):
    """Sixteen folders of 255-character names (within MAX_DEPTH): the copy's path passes PATH_MAX
    below submitted/. Before: OSError ENAMETOOLONG out of copy_submission, and nbgrader's collect
    stopped there, every classmate after this student uncollected."""
    folder = handed_in(tmp_path / "inbound")
    _nest(folder, "d" * 255, 16)
    try:
        flags = copy_submission(read(folder), tmp_path / "submitted" / STUDENT / ASSIGNMENT, CopyRules())
        assert any(f.outcome == FILE_LEFT_OUT and "d" * 255 in f.file for f in flags), flags
        assert (tmp_path / "submitted" / STUDENT / ASSIGNMENT / "codesign.py").is_file()
    finally:
        unnest(folder, "d" * 255)


def test_an_entry_bomb_is_refused_without_listing_it_whole(tmp_path):
    """Millions of empty names in one folder: reading and copying stop at the bound, they do not
    first hold every name in memory (before: os.listdir / list(os.scandir) of the whole folder)."""
    folder = handed_in(tmp_path / "inbound")
    (folder / "many").mkdir()
    many = os.open(folder / "many", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for index in range(40_000):
            os.close(os.open(f"{index:0>200}", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=many))
    finally:
        os.close(many)
    give(folder, STUDENT)
    with traced_peak() as peak:
        with pytest.raises(Refused, match="more than 50"):
            read_submission(folder, parse_time, collector_uid=0, tolerance=TOLERANCE, max_entries=50)
        sub = Submission(folder, STUDENT, uid(STUDENT), datetime.now(timezone.utc), ())
        with pytest.raises(Refused, match="more than 50"):
            copy_submission(sub, tmp_path / "out", CopyRules(max_entries=50))
    peak = peak.bytes
    assert peak < 2_000_000, f"{peak} bytes held to refuse a folder of 40 000 names"


def test_a_setuid_file_is_copied_as_plain_data(tmp_path):
    """A student's own file marked setuid, setgid and executable: a copy keeping its mode would be a
    program that runs as the instructor (who owns the copy) for anyone who can reach submitted/."""
    folder = handed_in(tmp_path / "inbound")
    (folder / "codesign.py").write_text("#!/bin/sh\nid\n")
    give(folder, STUDENT)
    os.chmod(folder / "codesign.py", 0o6777)
    copy_submission(read(folder), tmp_path / "out", CopyRules())
    mode = os.stat(tmp_path / "out" / "codesign.py").st_mode
    assert mode & 0o7111 == 0 and mode & 0o022 == 0, oct(mode)


# -- times no parser should crash on, and entries that change while they are read --------------

# nbgrader's parse_utc (dateutil) raised decimal.InvalidOperation on the first and dateutil's
# DeprecatedTzKeyWarning (an exception) on the second: collect stopped for the whole class.
CRASHING_TIMES = ("1:99999999999999999999999999999", "2030-01-01 00:00:00 ..", "2030-01-01 00:00:00 /etc/passwd",
                  "9" * 30 + ":1", "2030-01-01T00:00:00+25:00")


@pytest.mark.parametrize("parse", ["nbgrader", "lateness"])
@pytest.mark.parametrize("edge", CRASHING_TIMES)
def test_a_time_no_parser_can_read_is_flagged_not_a_crash(tmp_path, parse, edge):
    from nbgrader.utils import parse_utc
    parse_time_of = parse_utc if parse == "nbgrader" else parse_time
    folder = handed_in(tmp_path / "a")
    (folder / "timestamp.txt").write_text(edge)
    sub = read_submission(folder, parse_time_of, collector_uid=0, tolerance=TOLERANCE)
    assert [f.file for f in sub.flags] == ["timestamp.txt"]
    named = handed_in(tmp_path / "b")
    renamed = named.with_name(f"{STUDENT}+{ASSIGNMENT}+{edge.replace('/', '')}+rAnD0m")
    named.rename(renamed)
    try:
        taken = read_submission(renamed, parse_time_of, collector_uid=0, tolerance=TOLERANCE)
    except Refused as refused:
        assert refused.args[0].outcome == NOT_COLLECTED and "cannot be read" in refused.args[0].reason
    else:
        assert any(f.outcome == TIME_TAKEN for f in taken.flags), taken


def test_any_time_a_student_writes_is_taken_flagged_or_refused_never_a_crash(tmp_path):
    """Whatever a student writes as the time in the folder's name or in timestamp.txt, reading the
    folder ends in a Submission or a refusal (with nbgrader's parser as well as the kit's)."""
    from hypothesis import HealthCheck, given, settings, strategies as st
    from nbgrader.utils import parse_utc

    folder = handed_in(tmp_path / "inbound")
    digits = st.text("0123456789", min_size=1, max_size=40)
    times = st.one_of(
        st.text(max_size=60),
        st.builds(lambda a, b, c, z: f"{a}-{b}-{c} 00:00:{c}{z}", digits, digits, digits,
                  st.sampled_from(["", " UTC", " ..", " .", "+99:99", "Z", " /etc", ":", "."])),
        st.builds(lambda a, b: f"{a}:{b}", digits, digits),
        st.sampled_from(CRASHING_TIMES + EDGE_TIMES))
    current = [folder]

    @settings(max_examples=300, suppress_health_check=list(HealthCheck))
    @given(name_time=times, file_time=times, parser=st.sampled_from([parse_utc, parse_time]))
    def read_any(name_time, file_time, parser):
        (current[0] / "timestamp.txt").write_text(file_time, errors="surrogateescape")
        safe = name_time.replace("/", "").replace("\x00", "")
        target = current[0].with_name(f"{STUDENT}+{ASSIGNMENT}+{safe}+rAnD0m")
        try:
            current[0] = current[0].rename(target)
        except (OSError, ValueError):
            pass                          # a name no file system takes
        try:
            read_submission(current[0], parser, collector_uid=0, tolerance=TOLERANCE)
        except Refused:
            pass

    read_any()


def _renameat2_exchange():
    """renameat2(..., RENAME_EXCHANGE) through libc, as a student's own program calls it."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    exchange = libc.renameat2
    exchange.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return lambda a, b: exchange(-100, os.fsencode(a), -100, os.fsencode(b), 2)     # AT_FDCWD, RENAME_EXCHANGE


def _swapping(a: Path, b: Path):
    """A child process exchanging `a` and `b` as fast as it can, until the returned stop()."""
    swap = _renameat2_exchange()
    pid = os.fork()
    if pid == 0:
        try:
            while True:
                swap(a, b)
        finally:
            os._exit(0)

    def stop():
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    return stop


def _race(seconds: float, attempt) -> list[BaseException]:
    """Calls attempt() repeatedly for `seconds`; what it raised besides a refusal."""
    import time
    crashes, end = [], time.monotonic() + seconds
    while time.monotonic() < end and not crashes:
        try:
            attempt()
        except Refused:
            pass
        except Exception as exc:        # noqa: BLE001 - the test's point: nothing else may escape
            crashes.append(exc)
    return crashes


@pytest.mark.slow
def test_an_inbound_link_swapped_with_a_folder_while_collect_reads_it_is_refused_not_a_crash(tmp_path):
    """A student exchanges a link and a folder of her own in inbound/ (renameat2 RENAME_EXCHANGE) while
    collect reads it: before, os.readlink after lstat raised EINVAL and collect stopped for the class."""
    inbound = tmp_path / "inbound"
    folder = handed_in(inbound)
    link = folder.with_name(folder.name.replace("rAnD0m", "link"))
    link.symlink_to("/nowhere")
    give(link, STUDENT)
    stop = _swapping(link, folder)
    try:
        crashes = _race(6.0, lambda: (read(link), read(folder)))
    finally:
        stop()
    assert crashes == [], crashes


@pytest.mark.slow
def test_a_file_swapped_with_a_link_while_collect_copies_it_is_left_out_not_a_crash(tmp_path):
    """The same inside the folder: an entry exchanged between a link and a folder while it is copied."""
    import time
    folder = handed_in(tmp_path / "inbound")
    (folder / "sub").mkdir()
    (folder / "sub" / "x.py").write_text("x = 1\n")
    (folder / "ln").symlink_to("/nowhere")
    give(folder, STUDENT)
    sub = Submission(folder, STUDENT, uid(STUDENT), datetime.now(timezone.utc), (), changed=time.time() + 3600)
    stop = _swapping(folder / "ln", folder / "sub")
    runs = [0]

    def copy():
        runs[0] += 1
        out = tmp_path / f"out{runs[0]}"
        try:
            copy_submission(sub, out, CopyRules())
        finally:
            shutil.rmtree(out, ignore_errors=True)
    try:
        crashes = _race(6.0, copy)
    finally:
        stop()
    assert crashes == [], crashes


@pytest.mark.parametrize("named", ['<img src=x onerror=alert(1)>', 'bob" autofocus onfocus="alert(1)', "amy&lt;b&gt;",
                                   "x`![t](https:attacker.example)`", "alice bob", "*", "a[lb]ice"])
def test_a_name_holding_markup_is_refused_even_where_students_share_one_uid(tmp_path, named):
    """Where students share a uid any name was collected, and became the student id formgrader
    shows raw in the instructor's Jupyter session (nbgrader 0.9.6's formgrade_macros.html.j2:
    `{{ resources.student }}` and a `data-link` attribute holding it, in a page nbconvert renders
    without escaping): a folder named `<img src=x onerror=…>+lec01_codesign+…` ran script there.
    nbgrader also reads a student id as a glob pattern: a student named `*` was every student for
    `--student` and release_feedback."""
    folder = handed_in(tmp_path, owner=OTHER, named=named)
    with pytest.raises(Refused, match="markup .* or a space"):
        read_submission(folder, parse_time, collector_uid=0, tolerance=TOLERANCE, shared_uid=uid(OTHER))


@pytest.mark.parametrize("odd", ["\x1b]52;c;aGk=\x07notes.py", "x\x1b[2J\x1b[Hnbgrader: all graded.py", "a\nb.py",
                                 "fdp.\u202eyp.py"])
def test_a_file_named_with_control_characters_is_left_out_and_listed(tmp_path, odd):
    """A student hands in a regular file of her own whose name holds a terminal escape sequence
    (OSC 52 writes the clipboard, ESC[2J clears the screen) or a bidi override: it was copied into
    submitted/, and `nbgrader autograde` and `generate_feedback` print every such file's name raw
    on the instructor's terminal ("Copying <file> -> <dest>"). No file the assignment asks for has
    such a name: it is left out and listed, shown escaped."""
    folder = handed_in(tmp_path / "inbound")
    (folder / odd).write_text("x = 1\n")
    give(folder, STUDENT)
    flags = copy_submission(read(folder), tmp_path / "out", CopyRules())
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["codesign.py", "handout.ipynb"]
    assert [(f.file, f.outcome) for f in flags] == [(odd, FILE_LEFT_OUT)]
    assert "control character" in flags[0].reason and "\x1b" not in flags[0].reason


def test_a_folder_named_with_control_characters_is_left_out_with_everything_in_it(tmp_path):
    """The same for a subfolder: nbgrader copies (and names on the terminal) every file under it."""
    folder = handed_in(tmp_path / "inbound")
    (folder / "notes\x1b]0;owned\x07").mkdir()
    (folder / "notes\x1b]0;owned\x07" / "plot.py").write_text("x = 1\n")
    give(folder, STUDENT)
    flags = copy_submission(read(folder), tmp_path / "out", CopyRules())
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["codesign.py", "handout.ipynb"]
    assert [f.file for f in flags] == ["notes\x1b]0;owned\x07"]


def test_a_mount_inside_a_submission_is_left_out(tmp_path):
    """Where fusermount is installed and /etc/fuse.conf allows `user_allow_other`, a student can mount
    a FUSE filesystem of her own in her inbound folder: it answers collect's reads as she likes (any
    owner, any ctime, content that changes between reads). Here a tmpfs stands for it, owned by her:
    collect never crosses into another filesystem; what is there is left out and listed."""
    folder = handed_in(tmp_path / "inbound")
    mounted = folder / "more"
    mounted.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"uid={uid(STUDENT)},size=1m", "tmpfs", str(mounted)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        (mounted / "codesign.py").write_text("SOLVED = True\n")
        give(mounted, STUDENT)
        sub = read(folder)
        flags = copy_submission(sub, tmp_path / "out", CopyRules())
        assert not (tmp_path / "out" / "more").exists()
        assert [f.file for f in flags] == ["more"] and "filesystem" in flags[0].reason, flags
    finally:
        subprocess.run(["umount", str(mounted)], check=False)
