"""The kit's collect (GuardedExchangeCollect) over a whole inbound/, in this process: one student's
folder, whatever it holds, never stops the class's collect; it is listed and the others are
collected. Folders are laid out as `nbgrader submit` writes them and handed to real accounts
(tests/nbgrader_bridge/test_inbound.py's helpers); the end-to-end run with nbgrader's own submit
is tests/nbgrader/test_exchange.py."""

from __future__ import annotations

import contextlib
import csv
import re
import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")

from memory_peak import traced_peak  # noqa: E402
from test_inbound import ASSIGNMENT, OTHER, STUDENT, give, handed_in, uid  # noqa: E402

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="hands folders to other accounts: needs root")

THIRD = "cs349e-cat"


@contextlib.contextmanager
def _gradebook(course: Path):
    """The course's nbgrader gradebook, opened as nbgrader does (its alembic found on PATH)."""
    import sys

    from nbgrader.api import Gradebook

    path = os.environ.get("PATH", "")
    os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), path])
    try:
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            yield gb
    finally:
        os.environ["PATH"] = path


def exchange_root(tmp_path: Path, mode: int = 0o1777) -> Path:
    root = tmp_path / "exchange"
    (root / "cs349e" / "inbound").mkdir(parents=True)
    root.chmod(mode)
    (root / "cs349e").chmod(0o755)
    (root / "cs349e" / "inbound").chmod(0o3733)
    return root


def collect(tmp_path: Path, root: Path, *, update: bool = False):
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory

    from autograder.nbgrader_bridge.exchange import GuardedExchangeCollect

    course = tmp_path / "course"
    course.mkdir(exist_ok=True)
    coursedir = CourseDirectory(root=str(course), course_id="cs349e")
    coursedir.assignment_id = ASSIGNMENT
    collector = GuardedExchangeCollect(coursedir=coursedir, authenticator=Authenticator(), root=str(root),
                                       update=update)
    collector.start()
    return course


def flagged(course: Path) -> list[dict]:
    with open(course / "collect_flagged" / f"{ASSIGNMENT}.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def students(course: Path) -> list[str]:
    return sorted(p.name for p in (course / "submitted").iterdir() if (p / ASSIGNMENT / "codesign.py").is_file())


@pytest.mark.parametrize("edge", ["1:99999999999999999999999999999", "2030-01-01 00:00:00 .."])
def test_a_time_no_parser_can_read_stops_nobody_elses_collect(tmp_path, edge):
    """A student's own timestamp.txt, and her own folder renamed to that time: before, collect died
    with decimal.InvalidOperation (or dateutil's DeprecatedTzKeyWarning) and nobody was collected."""
    root = exchange_root(tmp_path)
    inbound = root / "cs349e" / "inbound"
    handed_in(inbound, owner=STUDENT, named=STUDENT)
    own = handed_in(inbound, owner=OTHER, named=OTHER)
    (own / "timestamp.txt").write_text(edge)
    renamed = handed_in(inbound / "x", owner=OTHER, named=OTHER)
    renamed.rename(inbound / f"{OTHER}+{ASSIGNMENT}+{edge}+zz")
    (inbound / "x").rmdir()
    course = collect(tmp_path, root)
    assert students(course) == sorted([STUDENT, OTHER])
    rows = [r for r in flagged(course) if r["student"] == OTHER]
    assert any(r["file"] == "timestamp.txt" for r in rows), rows
    assert any(r["inbound"].endswith("+zz") for r in rows), rows


def test_a_folder_whose_reading_fails_unforeseen_is_listed_and_the_class_collected(tmp_path, monkeypatch):
    """A failure no rule foresaw (here: made to happen) in one student's folder, while reading it or
    while copying it, leaves that student out and listed; the others are collected."""
    from autograder.nbgrader_bridge import exchange, inbound

    root = exchange_root(tmp_path)
    for student in (STUDENT, OTHER, THIRD):
        handed_in(root / "cs349e" / "inbound", owner=student, named=student)
    real_read, real_copy = inbound.read_submission, inbound.copy_submission

    def read(path, *args, **kwargs):
        if path.name.startswith(OTHER):
            raise RuntimeError("unforeseen while reading")
        return real_read(path, *args, **kwargs)

    def copy(sub, dest, rules):
        if sub.student == THIRD:
            dest.mkdir(parents=True)
            raise MemoryError("unforeseen while copying")
        return real_copy(sub, dest, rules)
    monkeypatch.setattr(exchange, "read_submission", read)
    monkeypatch.setattr(exchange, "copy_submission", copy)
    course = collect(tmp_path, root)
    assert students(course) == [STUDENT]
    rows = {r["student"]: r for r in flagged(course)}
    assert "RuntimeError" in rows[OTHER]["reason"] and rows[OTHER]["outcome"] == "not collected"
    assert "MemoryError" in rows[THIRD]["reason"]
    assert not (course / "submitted" / THIRD / f"{ASSIGNMENT}.collecting").exists()


def test_collect_warns_of_a_students_home_other_accounts_can_read(tmp_path, caplog):
    """Debian's `useradd -m` makes homes 0755, and nbgrader writes 0644 files: a classmate read a
    student's VARIANT_TOKEN from her notebook and computed her parameters. Collect names every
    collected student whose home is open, with the chmod that closes it."""
    import logging
    import subprocess

    home = tmp_path / "home-ann"
    home.mkdir()
    uid(STUDENT)
    subprocess.run(["usermod", "-d", str(home), STUDENT], check=True, capture_output=True)
    try:
        home.chmod(0o755)
        root = exchange_root(tmp_path)
        handed_in(root / "cs349e" / "inbound", owner=STUDENT, named=STUDENT)
        with caplog.at_level(logging.WARNING):
            collect(tmp_path, root)
        assert f"chmod 700 {home}" in caplog.text and "VARIANT_TOKEN" in caplog.text, caplog.text
        caplog.clear()
        home.chmod(0o700)
        with caplog.at_level(logging.WARNING):
            collect(tmp_path, root, update=True)
        assert "chmod 700" not in caplog.text, caplog.text
    finally:
        subprocess.run(["usermod", "-d", "/nonexistent", STUDENT], capture_output=True)


def test_the_login_defaults_that_open_new_homes_are_named(tmp_path):
    from autograder.nbgrader_bridge.exchange_root import home_mode_default
    defs = tmp_path / "login.defs"
    defs.write_text("UMASK\t\t022\n#HOME_MODE\t0700\n")
    assert "HOME_MODE 0700" in home_mode_default(str(defs))
    defs.write_text("UMASK\t\t022\nHOME_MODE\t0700\n")
    assert home_mode_default(str(defs)) is None
    defs.write_text("UMASK\t\t077\n")
    assert home_mode_default(str(defs)) is None


def test_only_the_newest_folders_of_a_student_are_read_and_the_rest_listed(tmp_path):
    """Each folder is read whole (up to 10,000 entries): a student's hundreds of folders of hard
    links cost collect seconds per million entries. Collect reads the newest by change time."""
    import time as clock

    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory

    from autograder.nbgrader_bridge.exchange import GuardedExchangeCollect

    root = exchange_root(tmp_path)
    inbound = root / "cs349e" / "inbound"
    handed_in(inbound, owner=OTHER, named=OTHER)
    made = []
    for index in range(8):
        made.append(handed_in(inbound / f"t{index}", owner=STUDENT, named=STUDENT))
        clock.sleep(0.01)
    for index, folder in enumerate(made):       # out of the staging folders, in the order made
        folder.rename(inbound / folder.name)
        (inbound / f"t{index}").rmdir()
    course = tmp_path / "course"
    course.mkdir()
    coursedir = CourseDirectory(root=str(course), course_id="cs349e")
    coursedir.assignment_id = ASSIGNMENT
    collector = GuardedExchangeCollect(coursedir=coursedir, authenticator=Authenticator(), root=str(root))
    collector.max_folders_per_student = 3
    collector.start()
    assert students(course) == sorted([STUDENT, OTHER])
    rows = [r for r in flagged(course) if r["student"] == STUDENT]
    assert len(rows) == 1 and "5 more inbound folders" in rows[0]["reason"], rows


def test_a_classmates_folders_in_my_name_do_not_push_out_my_own(tmp_path):
    """Collect reads the newest 50 folders of each student: counted among them were folders another
    account made in the student's name, which it then refused, so 51 empty folders a classmate made
    after the student's honest submission left the student uncollected."""
    import time as clock
    root = exchange_root(tmp_path)
    inbound = root / "cs349e" / "inbound"
    own = handed_in(inbound / "stage", owner=STUDENT, named=STUDENT)
    own.rename(inbound / own.name)
    clock.sleep(0.05)
    for index in range(51):                      # the classmate's, newer by change time
        forged = handed_in(inbound / f"s{index}", owner=OTHER, named=STUDENT)
        forged.rename(inbound / forged.name)
    course = collect(tmp_path, root)
    assert students(course) == [STUDENT]
    rows = [r for r in flagged(course) if r["student"] == STUDENT]
    assert rows and all(OTHER in r["reason"] for r in rows), rows   # the classmate is named


def _forged_entries(inbound: Path, count: int, *, named: str = STUDENT, owner: str = OTHER) -> None:
    """`count` empty files an account made in inbound/ with names like `named`'s submissions."""
    for index in range(count):
        path = inbound / f"{named}+{ASSIGNMENT}+2030-01-01 00:00:00.{index:06d} UTC+x"
        path.touch()
        os.chown(path, uid(owner), -1)


def test_collects_memory_and_list_do_not_grow_with_what_classmates_put_in_inbound(tmp_path):
    """Any account may create entries in inbound/ (it is 3733): 300,000 names like a classmate's
    submissions held every name in collect's memory (308 MB against 173 MB) and gave a listed row
    each. Now what one account made in others' names is read at most a few times and counted in one
    row; collect's own memory stays within a bound whatever the count."""
    from autograder.nbgrader_bridge.inbound_listing import READ_PER_OWNER

    def peak(count: int) -> tuple[int, list[dict], list[str]]:
        where = tmp_path / str(count)
        where.mkdir()
        root = exchange_root(where)
        inbound = root / "cs349e" / "inbound"
        own = handed_in(inbound / "stage", owner=STUDENT, named=STUDENT)
        own.rename(inbound / own.name)
        _forged_entries(inbound, count)
        with traced_peak() as peak:
            course = collect(where, root)
        return peak.bytes, flagged(course), students(course)

    small, small_rows, small_students = peak(200)
    large, large_rows, large_students = peak(20_000)
    assert small_students == large_students == [STUDENT]
    assert len(large_rows) == len(small_rows) <= READ_PER_OWNER + 1, large_rows
    assert any(f"{20_000 - READ_PER_OWNER:,} more inbound entries made by {OTHER}" in r["reason"]
               for r in large_rows), large_rows
    assert large - small < 1_000_000, (small, large)   # was ~450 bytes a name: 9 MB for these 19,800


def test_a_row_whose_entry_is_gone_leaves_the_list_at_the_next_collect(tmp_path):
    """The instructor removes what another account made in a student's name, as docs/exchange.md
    says, and collects again: the rows about it went on being listed (and printed by reconcile) on
    every run, since a student this run did not collect kept every earlier row."""
    import shutil
    root = exchange_root(tmp_path)
    inbound = root / "cs349e" / "inbound"
    own = handed_in(inbound / "stage", owner=STUDENT, named=STUDENT)
    own.rename(inbound / own.name)
    forged = handed_in(inbound / "forged", owner=OTHER, named=STUDENT)
    forged.rename(inbound / forged.name)
    course = collect(tmp_path, root)
    assert students(course) == [STUDENT] and any(OTHER in r["reason"] for r in flagged(course))
    shutil.rmtree(inbound / forged.name)
    collect(tmp_path, root, update=True)
    assert not [r for r in flagged(course) if OTHER in r["reason"]], flagged(course)
    assert students(course) == [STUDENT]


def _feedback_as_generate_feedback_leaves_it(course: Path, student: str) -> None:
    """feedback/<student>/<assignment>/: every file autograde copied from submitted/ (nbgrader's
    converters copy all but the notebooks), and the page."""
    import shutil

    source, dest = course / "submitted" / student / ASSIGNMENT, course / "feedback" / student / ASSIGNMENT
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("*.ipynb"))
    (dest / "handout.html").write_text(f"<p>feedback of {student}</p>")


@pytest.mark.parametrize("secret", ["", None, "folder"])
def test_a_students_own_submission_secret_cannot_stop_the_class_feedback_release(tmp_path, secret):
    """nbgrader's release_feedback names each page in the exchange by the submission_secret.txt the
    student's own `nbgrader submit` wrote, read from the feedback folder, where autograde and
    generate_feedback copy it from submitted/. A student who hands in an empty one (or none, or a
    folder of that name) stopped `nbgrader release_feedback` for the class (AssertionError in
    notebook_hash, FileNotFoundError, IsADirectoryError): classmates after her got no feedback.
    Collect writes a secret of its own in its place, and lists the one it replaced."""
    def plant(folder):
        if secret == "folder":
            (folder / "submission_secret.txt").mkdir()
        elif secret is not None:
            (folder / "submission_secret.txt").write_text(secret)

    course, released = _class_feedback_released(tmp_path, plant)
    assert (course / "submitted" / STUDENT / ASSIGNMENT / "submission_secret.txt").read_text() == f"secret of {STUDENT}"
    listed = [r for r in flagged(course) if r["student"] == OTHER and r["file"] == "submission_secret.txt"]
    assert len(listed) == (secret is not None), flagged(course)     # none at all: a folder made by hand
    assert {f"<p>feedback of {s}</p>" for s in (STUDENT, THIRD)} <= released


def test_a_submission_secret_that_is_no_utf8_cannot_stop_the_class_feedback_release(tmp_path):
    """release_feedback reads each submission_secret.txt as text: a student's own non-empty secret
    of bytes that are no UTF-8 (b"\\xff\\xfe") was kept by collect and raised UnicodeDecodeError in
    `nbgrader release_feedback`, so every classmate after her (by name) got no feedback."""
    course, released = _class_feedback_released(
        tmp_path, lambda folder: (folder / "submission_secret.txt").write_bytes(b"\xff\xfe"))
    assert {f"<p>feedback of {s}</p>" for s in (STUDENT, THIRD)} <= released
    listed = [r for r in flagged(course) if r["student"] == OTHER and r["file"] == "submission_secret.txt"]
    assert len(listed) == 1, flagged(course)


def test_a_folder_named_like_a_page_cannot_stop_the_class_feedback_release(tmp_path):
    """release_feedback releases every `*.html` of feedback/<student>/<assignment>/, where autograde
    and generate_feedback copy every other file and folder the student handed in: a folder
    `notes.html/` (holding any file) was globbed as a page, shutil.copy raised IsADirectoryError and
    `nbgrader release_feedback` stopped, so classmates after her got no feedback."""
    def plant(folder):
        (folder / "submission_secret.txt").write_text(f"secret of {OTHER}")
        (folder / "notes.html").mkdir()
        (folder / "notes.html" / "a.txt").write_text("x")

    course, released = _class_feedback_released(tmp_path, plant)
    assert {f"<p>feedback of {s}</p>" for s in (STUDENT, THIRD)} <= released




def _class_feedback_released(tmp_path, plant):
    """Three students hand in; OTHER's folder is what `plant` makes of it (her secret included). Then
    collect, the pages generate_feedback leaves, and nbgrader's own release_feedback: the course and
    the text of every page released."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback

    root = exchange_root(tmp_path)
    inbound = root / "cs349e" / "inbound"
    for student in (STUDENT, THIRD, OTHER):
        folder = handed_in(inbound, owner=student, named=student)
        if student == OTHER:
            plant(folder)
        else:
            (folder / "submission_secret.txt").write_text(f"secret of {student}")
        give(folder, student)
    course = collect(tmp_path, root)
    assert students(course) == sorted([STUDENT, THIRD, OTHER])
    for student in (STUDENT, THIRD, OTHER):
        _feedback_as_generate_feedback_leaves_it(course, student)
    coursedir = CourseDirectory(root=str(course), course_id="cs349e")
    coursedir.assignment_id = ASSIGNMENT
    ExchangeReleaseFeedback(coursedir=coursedir, authenticator=Authenticator(), root=str(root)).start()
    return course, {p.read_text() for p in (root / "cs349e" / "feedback").iterdir() if p.is_file()}


def test_release_and_collect_refuse_a_course_folder_other_accounts_can_enter(tmp_path):
    """The course folder holds solutions/, the hidden tests, the gradebook and, once collected, every
    classmate's submitted/, autograded/, feedback/ and pinned results, which nbgrader and the kit write
    0755/0644. A course kept where other accounts can enter (in /srv, or a home left 0755): a student's
    own account read the solutions by their path, and release and collect went on. Both now stop,
    naming the chmod, until the folder is closed."""
    import pwd
    import tempfile

    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange import ExchangeError

    from autograder.nbgrader_bridge.exchange import GuardedExchangeCollect, GuardedReleaseAssignment

    base = Path(tempfile.mkdtemp(prefix="cs349e-open-course-"))
    try:
        base.chmod(0o755)
        course = base / "course"
        solved = course / "solutions" / ASSIGNMENT / "codesign.py"
        solved.parent.mkdir(parents=True)
        solved.write_text("SOLVED = True\n")
        course.chmod(0o755)
        student = pwd.getpwuid(uid(OTHER))
        read = subprocess.run(["setpriv", f"--reuid={student.pw_uid}", f"--regid={student.pw_gid}", "--clear-groups",
                               "cat", str(solved)], capture_output=True, text=True)
        assert read.stdout == "SOLVED = True\n"          # what a student can do in such a folder
        root = exchange_root(tmp_path)
        handed_in(root / "cs349e" / "inbound", owner=STUDENT, named=STUDENT)

        def run(kind):
            coursedir = CourseDirectory(root=str(course), course_id="cs349e")
            coursedir.assignment_id = ASSIGNMENT
            kind(coursedir=coursedir, authenticator=Authenticator(), root=str(root)).start()

        for kind in (GuardedReleaseAssignment, GuardedExchangeCollect):
            with pytest.raises(ExchangeError, match=f"chmod 700 {course}"):
                run(kind)
        assert not (course / "submitted").exists()
        course.chmod(0o700)
        run(GuardedExchangeCollect)
        assert students(course) == [STUDENT]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_folder_of_thousands_of_links_gives_a_bounded_list(tmp_path):
    """A student's own submission holding 3,000 links (to /etc/passwd): each was one row of
    collect_flagged/, one error line at each collect and one line of every reconcile (10,000, the
    most a folder may hold, buried the class's list). Now the first rows and one that counts the rest."""
    from autograder.nbgrader_bridge.flagged import FILE_ROWS_PER_FOLDER

    root = exchange_root(tmp_path)
    inbound = root / "cs349e" / "inbound"
    own = handed_in(inbound / "stage", owner=STUDENT, named=STUDENT)
    for index in range(3000):
        os.symlink("/etc/passwd", own / f"link{index}.py")
    subprocess.run(["chown", "-h", f"{uid(STUDENT)}:{uid(STUDENT)}", *map(str, own.iterdir())], check=True)
    own.rename(inbound / own.name)
    course = collect(tmp_path, root)
    assert students(course) == [STUDENT]
    rows = flagged(course)
    assert len(rows) == FILE_ROWS_PER_FOLDER + 1, len(rows)
    assert all("symbolic link" in r["reason"] for r in rows[:-1]), rows[:-1]
    assert rows[-1]["file"] == "" and f"{3000 - FILE_ROWS_PER_FOLDER:,} more rows" in rows[-1]["reason"], rows[-1]
    assert "file left out" in rows[-1]["reason"], rows[-1]


def test_an_account_off_the_roster_is_refused_and_listed(tmp_path, caplog):
    """The exchange is shared by every account of the server (another course's students too): any
    account may `nbgrader submit --course cs349e`. Collect took her folder (a warning only), and
    autograde then made her a row of the gradebook. Now a folder of an account not on the course
    roster (roster.txt) is not collected, and listed for the instructor (reconcile prints the row);
    no one on the roster is named."""
    import logging

    root = exchange_root(tmp_path)
    handed_in(root / "cs349e" / "inbound", owner=STUDENT, named=STUDENT)
    off = handed_in(root / "cs349e" / "inbound", owner=OTHER, named=OTHER)
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "roster.txt").write_text(f"{STUDENT}\n")
    with caplog.at_level(logging.WARNING):
        course = collect(tmp_path, root)
    assert students(course) == [STUDENT]
    assert not (course / "submitted" / OTHER).exists()
    rows = flagged(course)
    assert [(r["student"], r["inbound"], r["outcome"]) for r in rows] == [(OTHER, off.name, "not collected")], rows
    assert "roster.txt" in rows[0]["reason"], rows
    assert STUDENT not in caplog.text.replace(OTHER, ""), caplog.text


def test_without_a_roster_every_account_is_collected_and_the_instructor_told(tmp_path, caplog):
    """No roster.txt: collect cannot tell the course's students from the server's other accounts; it
    collects every folder its owner handed in and says so, naming the file to write."""
    import logging

    root = exchange_root(tmp_path)
    handed_in(root / "cs349e" / "inbound", owner=STUDENT, named=STUDENT)
    with caplog.at_level(logging.WARNING):
        course = collect(tmp_path, root)
    assert students(course) == [STUDENT]
    assert "no course roster" in caplog.text and "roster.txt" in caplog.text, caplog.text


@pytest.mark.parametrize("case", ["the exchange is a student's", "a folder above it is open to all"])
def test_collect_refuses_an_exchange_a_student_can_rename_things_in(tmp_path, case):
    """The owner of a folder renames or removes anything in it, sticky or not; and a folder others may
    write to without the sticky bit lets anyone rename what is in it. Either way a student can put a
    course folder of her own in the class's path: collect refuses, naming what to run."""
    from nbgrader.exchange.abc.exchange import ExchangeError

    above = tmp_path / "shared"
    above.mkdir()
    root = exchange_root(above)
    handed_in(root / "cs349e" / "inbound", owner=STUDENT, named=STUDENT)
    if case == "the exchange is a student's":
        subprocess.run(["chown", OTHER, str(root)], check=True)
        said = f"the exchange folder {root} is owned by {OTHER}"
    else:
        above.chmod(0o777)
        said = f"chmod +t {above}"
    with pytest.raises(ExchangeError, match=re.escape(said)):
        collect(tmp_path, root)
    assert not (tmp_path / "course" / "submitted").exists()


def _course_release_feedback():
    """The release_feedback class the course's nbgrader_config.py sets (nbgrader's own if none)."""
    import importlib

    from traitlets.config.loader import PyFileConfigLoader

    from process_state import process_state_restored

    with process_state_restored():
        config = PyFileConfigLoader("nbgrader_config.py", path=str(Path(__file__).resolve().parents[2])).load_config()
    name = config.ExchangeFactory.get("release_feedback",
                                      "nbgrader.exchange.default.release_feedback.ExchangeReleaseFeedback")
    module, _, cls = name.rpartition(".")
    return getattr(importlib.import_module(module), cls)


@pytest.mark.parametrize("case", ["the exchange is a student's", "the course's feedback folder is a student's link"])
def test_the_courses_release_feedback_refuses_an_exchange_a_student_steers(tmp_path, case):
    """nbgrader's release_feedback checked nothing of the exchange: in an exchange a student owns (or with
    a course feedback/ that is hers, a link to a folder of the instructor's) it wrote every student's
    page where she reads or chooses. The course's release_feedback runs the checks of release and
    collect, feedback/ included, and writes nothing."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.abc.exchange import ExchangeError

    root = exchange_root(tmp_path)
    inbound = root / "cs349e" / "inbound"
    folder = handed_in(inbound, owner=STUDENT, named=STUDENT)
    (folder / "submission_secret.txt").write_text(f"secret of {STUDENT}")
    give(folder, STUDENT)
    course = collect(tmp_path, root)
    _feedback_as_generate_feedback_leaves_it(course, STUDENT)
    target = tmp_path / "instructors-folder"
    target.mkdir()
    if case == "the exchange is a student's":
        subprocess.run(["chown", OTHER, str(root)], check=True)
        said = f"{root} is owned by {OTHER}"
    else:
        (root / "cs349e" / "feedback").symlink_to(target)
        subprocess.run(["chown", "-h", OTHER, str(root / "cs349e" / "feedback")], check=True)
        said = f"{root / 'cs349e' / 'feedback'} is a link"
    coursedir = CourseDirectory(root=str(course), course_id="cs349e")
    coursedir.assignment_id = ASSIGNMENT
    release = _course_release_feedback()
    with pytest.raises(ExchangeError, match=re.escape(said)):
        release(coursedir=coursedir, authenticator=Authenticator(), root=str(root)).start()
    assert list(target.iterdir()) == []
    assert not any(p.suffix == ".html" for p in root.rglob("*") if not p.is_symlink())


def test_reconcile_names_a_course_folder_that_is_a_students_dangling_link(tmp_path):
    """reconcile looked at the exchange only when the course's folder existed, following a link: a
    student's link there to nowhere (to be pointed at her own folder later) went unnamed."""
    from types import SimpleNamespace

    from autograder.commands.reconcile import exchange_lines

    root = tmp_path / "exchange"
    root.mkdir()
    root.chmod(0o1777)
    (root / "cs349e").symlink_to(tmp_path / "not-yet")
    subprocess.run(["chown", "-h", OTHER, str(root / "cs349e")], check=True)
    lines = exchange_lines(SimpleNamespace(course_id="cs349e", exchange_root=str(root), groupshared=False, root=tmp_path))
    assert any(f"{root / 'cs349e'} is a link" in line for line in lines), lines


def test_the_first_release_claims_the_course_folder_before_a_student_can_link_it(tmp_path, monkeypatch):
    """At the first release the course's folder is missing: release checked that, and nbgrader then
    made it, or took what stood there by then, following a link. mallory, looping `ln -s` and `rm` in
    the sticky exchange, could win that race with a link to a folder of the instructor's: release
    wrote outbound/ and a world-writable inbound/ there, and the course's path in the exchange stayed
    her link (repointed later at a folder of her own: classmates fetch her files). The kit's release
    makes the course folder itself before it checks; the link comes too late."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory

    from autograder.nbgrader_bridge import exchange

    root = tmp_path / "exchange"
    root.mkdir()
    root.chmod(0o1777)
    course = tmp_path / "course"
    (course / "release" / ASSIGNMENT).mkdir(parents=True)
    (course / "release" / ASSIGNMENT / "handout.ipynb").write_text("{}")
    target = tmp_path / "instructors-folder"
    target.mkdir()
    real = exchange.foreign_course_folders

    def checked_then_raced(*args, **kwargs):
        problems = real(*args, **kwargs)
        try:                                    # mallory's link, just after the check
            (root / "cs349e").symlink_to(target)
            subprocess.run(["chown", "-h", OTHER, str(root / "cs349e")], check=True)
        except FileExistsError:
            pass
        return problems
    monkeypatch.setattr(exchange, "foreign_course_folders", checked_then_raced)
    coursedir = CourseDirectory(root=str(course), course_id="cs349e")
    coursedir.assignment_id = ASSIGNMENT
    try:
        exchange.GuardedReleaseAssignment(coursedir=coursedir, authenticator=Authenticator(), root=str(root)).start()
    except Exception:   # noqa: BLE001 - a refusal is as good as a release in the instructor's own folder
        pass
    assert list(target.iterdir()) == []
    assert not (root / "cs349e").is_symlink() and (root / "cs349e").stat().st_uid == os.geteuid()


@pytest.mark.parametrize("folder", ["cs349e", "cs349e/outbound", "cs349e/outbound/lec01_codesign", "cs349e/feedback"])
def test_a_course_exchange_folder_every_account_can_write_to_is_refused(tmp_path, folder):
    """`chmod -R 777` on the course's exchange folder (the usual answer to a student's "permission
    denied"): any student could then rename outbound/ or inbound/ away and put her own in their place,
    or replace a released file (classmates fetch her hw_specs.py, which runs as each of them). Release,
    collect and release_feedback refuse such a folder, naming the chmod; inbound/ alone is meant to be
    writable by everyone (sticky)."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.abc.exchange import ExchangeError

    from autograder.nbgrader_bridge.exchange import GuardedReleaseAssignment

    root = exchange_root(tmp_path)
    handed_in(root / "cs349e" / "inbound", owner=STUDENT, named=STUDENT)
    (root / folder).mkdir(parents=True, exist_ok=True)
    (root / folder).chmod(0o777)
    with pytest.raises(ExchangeError, match=re.escape(f"chmod o-w {root / folder}")):
        collect(tmp_path, root)
    assert not (tmp_path / "course" / "submitted").exists()
    course = tmp_path / "course"
    (course / "release" / ASSIGNMENT).mkdir(parents=True)
    (course / "release" / ASSIGNMENT / "handout.ipynb").write_text("{}")
    coursedir = CourseDirectory(root=str(course), course_id="cs349e")
    coursedir.assignment_id = ASSIGNMENT
    with pytest.raises(ExchangeError, match=re.escape(f"chmod o-w {root / folder}")):
        GuardedReleaseAssignment(coursedir=coursedir, authenticator=Authenticator(), root=str(root), force=True).start()


@pytest.mark.parametrize("mode", [0o3777, 0o3737])
def test_an_inbound_every_account_can_list_is_refused(tmp_path, mode):
    """`chmod -R 777` (or 1777) on the exchange makes inbound/ listable: every student sees every
    classmate's folder name, and nbgrader submit leaves each folder 0777 with 0644 files: she reads
    (copies) their notebooks, or removes their files. Collect and release refuse it, naming the chmod."""
    root = exchange_root(tmp_path)
    handed_in(root / "cs349e" / "inbound", owner=STUDENT, named=STUDENT)
    (root / "cs349e" / "inbound").chmod(mode)
    from nbgrader.exchange.abc.exchange import ExchangeError
    with pytest.raises(ExchangeError, match=re.escape(f"chmod o-r {root / 'cs349e' / 'inbound'}")):
        collect(tmp_path, root)
    assert not (tmp_path / "course" / "submitted").exists()


def test_a_feedback_folder_every_account_can_list_is_refused_by_release_feedback(tmp_path):
    """`chmod -R a+rX` on the exchange (a usual fix for a student's failed fetch) makes feedback/
    listable: each page is named by its student's secret alone and readable by all, so any student
    reads every classmate's feedback (their code and answers in it). release_feedback refuses it."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.abc.exchange import ExchangeError

    root = exchange_root(tmp_path)
    (root / "cs349e" / "feedback").mkdir()
    (root / "cs349e" / "feedback").chmod(0o755)
    course = tmp_path / "course"
    course.mkdir()
    coursedir = CourseDirectory(root=str(course), course_id="cs349e")
    coursedir.assignment_id = ASSIGNMENT
    with pytest.raises(ExchangeError, match=re.escape(f"chmod o-r {root / 'cs349e' / 'feedback'}")):
        _course_release_feedback()(coursedir=coursedir, authenticator=Authenticator(), root=str(root)).start()


def test_a_folder_above_the_exchange_writable_by_a_staff_group_is_no_problem(tmp_path):
    """Debian made /usr/local (and share/ in it) 2775 root:staff: a group of administrators, no student.
    A folder above the exchange writable by such a group is no reason to refuse; one writable by a
    group holding a roster student is (she could rename the exchange away)."""
    from autograder.nbgrader_bridge.exchange_root import instructors, root_problems

    above = tmp_path / "local"
    above.mkdir()
    root = exchange_root(above)
    above.chmod(0o2775)
    subprocess.run(["chgrp", OTHER, str(above)], check=True)     # OTHER's own group
    assert root_problems(root, instructors(), students=[STUDENT]) == []
    problems = root_problems(root, instructors(), students=[OTHER])
    assert problems and f"chmod +t {above}" in problems[0], problems


def test_collect_warns_of_a_fuse_set_up_that_lets_students_mounts_be_entered(tmp_path, caplog, monkeypatch):
    """With `user_allow_other` in /etc/fuse.conf a student's FUSE mount in her folder is entered by
    collect, and may never answer a read: collect says to remove the line."""
    import logging

    from autograder.nbgrader_bridge import exchange_root as module

    conf = tmp_path / "fuse.conf"
    conf.write_text("# mount_max = 1000\nuser_allow_other\n")
    monkeypatch.setattr(module, "FUSE_CONF", str(conf))
    monkeypatch.setattr(module.fuse_lets_students_in, "__defaults__", (str(conf),))
    root = exchange_root(tmp_path)
    handed_in(root / "cs349e" / "inbound", owner=STUDENT, named=STUDENT)
    with caplog.at_level(logging.WARNING):
        collect(tmp_path, root)
    assert f"{conf} sets user_allow_other" in caplog.text, caplog.text
    conf.write_text("#user_allow_other\n")
    assert module.fuse_lets_students_in(str(conf)) is None


def test_a_roster_login_nbgraders_exchange_cannot_name_is_told(tmp_path, caplog):
    """nbgrader names a submission's folder `<student>+<assignment>+<time>+<random>` and reads the
    student back as the part before the first `+`: a login holding a `+` (useradd accepts one) is
    never collected, with no word from nbgrader. Collect names that login and why."""
    import logging

    root = exchange_root(tmp_path)
    handed_in(root / "cs349e" / "inbound", owner=STUDENT, named=STUDENT)
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "roster.txt").write_text(f"{STUDENT}\namy+lab\n")
    with caplog.at_level(logging.WARNING):
        course = collect(tmp_path, root)
    assert students(course) == [STUDENT]
    assert "amy+lab" in caplog.text and "'+'" in caplog.text, caplog.text


def _class_with_feedback_and_due_date(tmp_path, days_ago: float, extension_days: float = 0):
    """STUDENT and THIRD handed in and were collected, generate_feedback's pages are there, and the
    gradebook holds the assignment due `days_ago`, with THIRD's extension of `extension_days`."""
    from datetime import datetime, timedelta, timezone

    root = exchange_root(tmp_path)
    for student in (STUDENT, THIRD):
        folder = handed_in(root / "cs349e" / "inbound", owner=student, named=student)
        (folder / "submission_secret.txt").write_text(f"secret of {student}")
        give(folder, student)
    course = collect(tmp_path, root)
    for student in (STUDENT, THIRD):
        _feedback_as_generate_feedback_leaves_it(course, student)
    due = datetime.now(timezone.utc) - timedelta(days=days_ago)
    with _gradebook(course) as gb:
        gb.add_assignment(ASSIGNMENT, duedate=due.replace(tzinfo=None))
        for student in (STUDENT, THIRD):
            gb.add_student(student)
        if extension_days:
            gb.update_or_create_submission(ASSIGNMENT, THIRD)
            gb.grant_extension(ASSIGNMENT, THIRD, days=extension_days)
    return root, course


def _release_feedback(root, course, **config):
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory

    coursedir = CourseDirectory(root=str(course), course_id="cs349e")
    coursedir.assignment_id = ASSIGNMENT
    _course_release_feedback()(coursedir=coursedir, authenticator=Authenticator(), root=str(root), **config).start()
    return {p.read_text() for p in (root / "cs349e" / "feedback").iterdir() if p.is_file()}


def test_feedback_waits_while_late_work_still_scores(tmp_path):
    """A page shows the expected value of every hidden case its student failed. Released the day
    after the due date, it reached students whose late hand-in still scored (a classmate's page, or
    her own: read, fixed, handed in again): the course's release_feedback waits, as the solutions do,
    for the late policy's last day, unless the instructor releases during late work on purpose."""
    from nbgrader.exchange.abc.exchange import ExchangeError

    root, course = _class_with_feedback_and_due_date(tmp_path, days_ago=1)
    with pytest.raises(ExchangeError, match="late work is accepted until"):
        _release_feedback(root, course)
    assert not (root / "cs349e" / "feedback").exists() or not any((root / "cs349e" / "feedback").iterdir())
    released = _release_feedback(root, course, during_late_work=True)
    assert released == {f"<p>feedback of {s}</p>" for s in (STUDENT, THIRD)}


def test_feedback_waits_for_every_extension_even_during_late_work(tmp_path):
    """A classmate's extension still open: feedback released to the rest of the class handed her
    their pages' expected values before her own due date."""
    from nbgrader.exchange.abc.exchange import ExchangeError

    root, course = _class_with_feedback_and_due_date(tmp_path, days_ago=30, extension_days=31)
    with pytest.raises(ExchangeError, match=f"{THIRD} \\(an extension\\)"):
        _release_feedback(root, course, during_late_work=True)
    assert not (root / "cs349e" / "feedback").exists() or not any((root / "cs349e" / "feedback").iterdir())


def test_collect_before_the_due_date_gives_a_student_her_extension(tmp_path):
    """`nbgrader collect --before-duedate` took the newest folder before the class's due date: a
    student with an extension, who handed in again within it, was graded on her earlier folder."""
    from datetime import datetime, timedelta, timezone

    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory

    from autograder.nbgrader_bridge.exchange import GuardedExchangeCollect

    now = datetime.now(timezone.utc)
    due = now - timedelta(days=2)
    root = exchange_root(tmp_path)
    inbound = root / "cs349e" / "inbound"
    earlier = handed_in(inbound, owner=STUDENT, named=STUDENT, when=due - timedelta(hours=1))
    within = handed_in(inbound, owner=STUDENT, named=STUDENT, when=now - timedelta(hours=1))
    for folder, text in ((earlier, "earlier"), (within, "within her extension")):
        (folder / "codesign.py").write_text(f"# {text}\n")
    course = tmp_path / "course"
    course.mkdir()
    with _gradebook(course) as gb:
        gb.add_assignment(ASSIGNMENT, duedate=due.replace(tzinfo=None))
        gb.add_student(STUDENT)
        gb.update_or_create_submission(ASSIGNMENT, STUDENT)
        gb.grant_extension(ASSIGNMENT, STUDENT, days=3)
    coursedir = CourseDirectory(root=str(course), course_id="cs349e")
    coursedir.assignment_id = ASSIGNMENT
    # the folders' names are taken at their times, as if handed in then (their change time is now)
    GuardedExchangeCollect(coursedir=coursedir, authenticator=Authenticator(), root=str(root), before_duedate=True,
                           time_tolerance_seconds=3 * 86400.0).start()
    assert (course / "submitted" / STUDENT / ASSIGNMENT / "codesign.py").read_text() == "# within her extension\n"


def _collected_time(tmp_path, named_ago: float, due_ago: float):
    """STUDENT's folder made now, named `named_ago` seconds ago, for a due date `due_ago` seconds ago:
    the time collect writes, and its flagged rows."""
    from datetime import datetime, timedelta, timezone

    from autograder.engine.lateness import parse_time

    now = datetime.now(timezone.utc)
    root = exchange_root(tmp_path)
    handed_in(root / "cs349e" / "inbound", owner=STUDENT, named=STUDENT, when=now - timedelta(seconds=named_ago))
    course = tmp_path / "course"
    course.mkdir()
    with _gradebook(course) as gb:
        gb.add_assignment(ASSIGNMENT, duedate=(now - timedelta(seconds=due_ago)).replace(tzinfo=None))
    collect(tmp_path, root)
    stamp = (course / "submitted" / STUDENT / ASSIGNMENT / "timestamp.txt").read_text()
    return parse_time(stamp) - (now - timedelta(seconds=due_ago)), flagged(course)


def test_a_folder_renamed_to_just_before_the_due_date_is_late(tmp_path):
    """A name may be up to two minutes older than the folder's change time (submit names it before it
    copies); a student who handed in 90 s after the due date renamed her folder to a second before
    it and was on time: a whole day's penalty (10 %) saved. A name before the due date and a copy
    finished well after it is judged by the change time, and listed."""
    late_by, rows = _collected_time(tmp_path, named_ago=91, due_ago=90)
    assert late_by.total_seconds() > 0, late_by
    assert any(r["student"] == STUDENT and "due date" in r["reason"] for r in rows), rows


def test_a_submit_started_just_before_the_due_date_stays_on_time(tmp_path):
    late_by, rows = _collected_time(tmp_path, named_ago=1.5, due_ago=1)
    assert late_by.total_seconds() < 0, late_by


def test_collect_says_when_the_exchanges_clock_is_not_this_machines(tmp_path, monkeypatch, caplog):
    """Times are judged by comparing a folder's name (the clock of the machine the student submitted
    from) with its change time (the clock of the exchange's filesystem, an NFS server's): a minute
    apart, honest folders handed in just before the due date were judged late, without a word. Collect
    measures its own clock against the filesystem's and says so (here this machine's clock is made
    to run a minute behind)."""
    import logging
    import time

    from autograder.nbgrader_bridge import exchange

    root = exchange_root(tmp_path)
    handed_in(root / "cs349e" / "inbound", owner=STUDENT, named=STUDENT)
    real = time.time
    monkeypatch.setattr(exchange, "_now", lambda: real() - 60)
    with caplog.at_level(logging.WARNING):
        collect(tmp_path, root)
    assert any("clock" in r.getMessage() and "60 s" in r.getMessage() for r in caplog.records), caplog.text
    assert students(tmp_path / "course") == [STUDENT]
