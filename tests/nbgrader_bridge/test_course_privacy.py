"""The course folder closed to students before every command that writes their work into it:
release and collect (tests/nbgrader_bridge/test_exchange_collect.py), and zip_collect and pregrade
here; and "closed" means closed to a group that holds students too, not only to "others"."""

from __future__ import annotations

import grp
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from course_copy import copy_course
from course_copy import run as run_in
from test_inbound import ASSIGNMENT, OTHER, STUDENT, handed_in, uid

pytest.importorskip("nbgrader")
pytestmark = pytest.mark.skipif(__import__("os").geteuid() != 0, reason="makes groups and folders of other accounts: needs root")

GROUP = "cs349e-everyone"     # a group every account is in (Debian's `users` where accounts share one)


@pytest.fixture
def everyone_group():
    """GROUP, holding the student STUDENT (and the TA OTHER, who is no roster student)."""
    for name in (STUDENT, OTHER):
        uid(name)
    subprocess.run(["groupadd", "-f", GROUP], check=True, capture_output=True)
    subprocess.run(["gpasswd", "-M", f"{STUDENT},{OTHER}", GROUP], check=True, capture_output=True)
    yield grp.getgrnam(GROUP).gr_gid
    subprocess.run(["groupdel", GROUP], capture_output=True)


def group_open_course(gid: int) -> tuple[Path, Path]:
    """(a 0750 folder of root and GROUP, the course inside it, 0755 as the umask leaves it)."""
    base = Path(tempfile.mkdtemp(prefix="cs349e-group-course-"))
    course = base / "course"
    solved = course / "solutions" / ASSIGNMENT / "codesign.py"
    solved.parent.mkdir(parents=True)
    solved.write_text("SOLVED = True\n")
    (course / "roster.txt").write_text(f"{STUDENT}\n")
    course.chmod(0o755)
    import os
    os.chown(base, 0, gid)
    base.chmod(0o750)
    return base, course


def test_a_course_a_group_of_students_can_enter_is_refused_by_release_and_collect(tmp_path, everyone_group):
    """A home 0750 whose group holds students (`users`): nothing lets "others" in, so the check let it
    by, and a student of the group read the solutions by their path. Release and collect now stop,
    naming the student; with groupshared (the group is the staff's on purpose) a roster student in it
    still stops them, a TA alone in it does not."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange import ExchangeError

    from autograder.nbgrader_bridge.course_privacy import open_course
    from autograder.nbgrader_bridge.exchange import GuardedExchangeCollect, GuardedReleaseAssignment
    from test_exchange_collect import exchange_root, students

    base, course = group_open_course(everyone_group)
    try:
        student = pwd.getpwnam(STUDENT)
        read = subprocess.run(["setpriv", f"--reuid={student.pw_uid}", f"--regid={student.pw_gid}", "--init-groups",
                               "cat", str(course / "solutions" / ASSIGNMENT / "codesign.py")],
                              capture_output=True, text=True)
        assert read.stdout == "SOLVED = True\n"          # what a student of the group can do
        root = exchange_root(tmp_path)
        handed_in(root / "cs349e" / "inbound", owner=STUDENT, named=STUDENT)

        def run(kind, groupshared=False):
            coursedir = CourseDirectory(root=str(course), course_id="cs349e", groupshared=groupshared)
            coursedir.assignment_id = ASSIGNMENT
            kind(coursedir=coursedir, authenticator=Authenticator(), root=str(root)).start()

        for kind in (GuardedReleaseAssignment, GuardedExchangeCollect):
            with pytest.raises(ExchangeError, match=f"{STUDENT}.*{GROUP}.*chmod g-rwx {base}"):
                run(kind)
            with pytest.raises(ExchangeError, match=f"roster students: {STUDENT}"):
                run(kind, groupshared=True)
        assert not (course / "submitted").exists()
        (course / "roster.txt").write_text("someone-else\n")      # the group: the TA alone among accounts
        assert open_course(course, staff_group=True) is None
        assert OTHER in open_course(course)
        base.chmod(0o700)
        assert open_course(course) is None
        (course / "roster.txt").write_text(f"{STUDENT}\n")     # collect takes roster students only
        run(GuardedExchangeCollect)
        assert students(course) == [STUDENT]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def open_course_copy(name: str) -> tuple[Path, Path]:
    """(an open 0755 folder in /tmp, a copy of the course in it: every account can enter it)."""
    base = Path(tempfile.mkdtemp(prefix=f"cs349e-open-{name}-"))
    base.chmod(0o755)
    return base, copy_course(base / "course")


def test_zip_collect_refuses_a_course_folder_other_accounts_can_enter():
    """zip_collect writes every student's upload into submitted/: it went on in an open course
    (release and collect already stopped). It now stops before unpacking, naming the chmod."""
    base, course = open_course_copy("zip")
    try:
        archive = course / "downloaded" / ASSIGNMENT / "archive"
        archive.mkdir(parents=True)
        (archive / f"{STUDENT}_codesign.py").write_text("OWNER = 'ann'\n")
        done = run_in(course, "-m", "nbgrader", "zip_collect", ASSIGNMENT)
        assert done.returncode != 0, done.stderr
        assert f"chmod 700 {course}" in done.stderr, done.stderr
        assert not (course / "submitted").exists()
        base.chmod(0o700)
        done = run_in(course, "-m", "nbgrader", "zip_collect", ASSIGNMENT)
        assert done.returncode == 0, done.stderr
        assert (course / "submitted" / STUDENT / ASSIGNMENT / "codesign.py").is_file()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_pregrade_refuses_a_course_folder_other_accounts_can_enter():
    """pregrade writes every student's pinned results and executed notebook into the course folder:
    it went on in an open course. It now refuses before grading anything, naming the chmod."""
    base, course = open_course_copy("pregrade")
    try:
        (course / "submitted" / STUDENT / ASSIGNMENT).mkdir(parents=True)
        done = run_in(course, "-m", "autograder", "pregrade", ASSIGNMENT)
        assert done.returncode != 0, done.stderr
        assert f"chmod 700 {course}" in done.stderr, done.stderr
        assert not (course / ".pinned_results").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_groupshared_does_not_turn_the_exchange_checks_off(tmp_path):
    """nbgrader's exchange skips ensure_root under CourseDirectory.groupshared, and the kit's checks
    lived there: with groupshared on, release and collect went on in a course every account can
    enter (and in an exchange others can write to without the sticky bit). They now stop all the same."""
    from test_exchange_collect import exchange_root

    base, course = open_course_copy("groupshared")
    try:
        root = exchange_root(tmp_path)
        handed_in(root / "cs349e" / "inbound", owner=STUDENT, named=STUDENT)
        groupshared_starts_refused(course, root, match=f"chmod 700 {course}")
        assert not (course / "submitted").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_the_courses_own_account_in_its_group_is_no_student(everyone_group):
    """The instructor's course in a 0750 folder of her own group, the command run by root: she is in
    the group but is the course's owner, not a student; a classmate in the group still is one."""
    import os

    from autograder.nbgrader_bridge.course_privacy import open_course

    base, course = group_open_course(everyone_group)
    try:
        os.chown(course, uid(OTHER), -1)
        subprocess.run(["gpasswd", "-M", OTHER, GROUP], check=True, capture_output=True)
        assert open_course(course) is None
        subprocess.run(["gpasswd", "-M", f"{STUDENT},{OTHER}", GROUP], check=True, capture_output=True)
        assert STUDENT in open_course(course) and f"{OTHER}," not in open_course(course)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_under_groupshared_a_group_that_holds_students_cannot_own_the_courses_exchange_folders(tmp_path, everyone_group):
    """groupshared with an instructor whose login group holds the students (`users`, where accounts
    share one): nbgrader's release makes the course's exchange folder 2775 in that group, so any
    student may rename inbound/ away and make her own (classmates then hand in into her folder, and
    she reads their work) or do the same to outbound/ (they fetch her files). The kit took any folder
    in one of the instructor's groups for the staff's; collect went on and read her inbound/. Now the
    course's exchange folders must not be writable by, nor belong to, a group holding roster students."""
    import os

    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory

    from autograder.nbgrader_bridge.exchange import GuardedExchangeCollect
    root, course, theirs = _a_student_of_the_group_made_her_own_inbound(tmp_path, everyone_group)
    exchange_course = root / "cs349e"
    (course / "roster.txt").write_text(f"{STUDENT}\n")
    groups = os.getgroups()
    os.setgroups([*groups, everyone_group])                    # the instructor is in the group
    try:
        groupshared_starts_refused(course, root, match=f"{GROUP}.*roster students.*{STUDENT}")
        assert not (course / "submitted").exists()
        # put right as the message says: the course's folder the staff's alone; inbound/ (writable by
        # everyone and sticky on purpose) may stay in the group
        shutil.rmtree(theirs)
        (exchange_course / "moved").rename(theirs)
        os.chown(exchange_course, 0, 0)
        exchange_course.chmod(0o755)
        os.chown(theirs, 0, everyone_group)
        handed_in(theirs, owner=STUDENT, named=STUDENT)
        coursedir = CourseDirectory(root=str(course), course_id="cs349e", groupshared=True)
        coursedir.assignment_id = ASSIGNMENT
        GuardedExchangeCollect(coursedir=coursedir, authenticator=Authenticator(), root=str(root)).start()
        assert (course / "submitted" / STUDENT).is_dir()
    finally:
        os.setgroups(groups)


def _a_student_of_the_group_made_her_own_inbound(tmp_path, everyone_group):
    """(exchange root, course folder, her inbound/): the course's exchange folder 2775 in a group
    holding students, as nbgrader's release makes it under groupshared, where a student of the group
    renamed inbound/ to moved/ and made her own, with her submission in it."""
    import os

    from test_exchange_collect import exchange_root

    root = exchange_root(tmp_path)
    exchange_course = root / "cs349e"
    os.chown(exchange_course, 0, everyone_group)
    exchange_course.chmod(0o2775)
    (exchange_course / "inbound").rename(exchange_course / "moved")
    theirs = exchange_course / "inbound"
    theirs.mkdir()
    os.chown(theirs, uid(STUDENT), everyone_group)
    theirs.chmod(0o2733)
    handed_in(theirs, owner=STUDENT, named=STUDENT)
    course = tmp_path / "course"
    course.mkdir()
    return root, course, theirs


def groupshared_starts_refused(course, root, match: str) -> None:
    """Release and collect, each started under groupshared, stop with a message matching `match`."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange import ExchangeError

    from autograder.nbgrader_bridge.exchange import GuardedExchangeCollect, GuardedReleaseAssignment

    for kind in (GuardedReleaseAssignment, GuardedExchangeCollect):
        coursedir = CourseDirectory(root=str(course), course_id="cs349e", groupshared=True)
        coursedir.assignment_id = ASSIGNMENT
        with pytest.raises(ExchangeError, match=match):
            kind(coursedir=coursedir, authenticator=Authenticator(), root=str(root)).start()


def test_without_a_roster_a_group_holding_other_accounts_is_not_taken_for_the_staffs(tmp_path, everyone_group):
    """The staff's group is told from a group of students by the roster: with no roster.txt (a course
    without variants needs none) every group passed for the staff's, and under groupshared the course's
    exchange folder in `users`, 2775 as nbgrader makes it, let a student put her own inbound/ there.
    Without a roster a group holding any account but the instructor's and root's is as open as to all."""
    import os

    root, course, _ = _a_student_of_the_group_made_her_own_inbound(tmp_path, everyone_group)   # no roster.txt
    groups = os.getgroups()
    os.setgroups([*groups, everyone_group])
    try:
        groupshared_starts_refused(course, root, match=f"{GROUP}.*{STUDENT}.*roster")
        assert not (course / "submitted").exists()
    finally:
        os.setgroups(groups)
