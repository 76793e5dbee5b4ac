"""nbgrader's exchange for the course: release and collect that treat inbound/ as student data.

Set in nbgrader_config.py (`c.ExchangeFactory.collect`, `c.ExchangeFactory.release_assignment`);
students' `fetch_assignment` and `submit` stay nbgrader's own. How it is set up on a server and
what a student can and cannot do to it: docs/exchange.md.

GuardedExchangeCollect takes nbgrader 0.9.6's default collect and changes what it trusts
(autograder/nbgrader_bridge/inbound.py): a folder owned by another account than the student it
names is refused, not warned about, and so is one of an account not on the course roster; only regular files owned by the submitter are copied, never
through a link; the submission time comes from the folder's name checked against its ctime, and is
what collect writes to submitted/<student>/<assignment>/timestamp.txt (the student's own file is
not copied). Every refusal and correction is logged as an error and listed in
collect_flagged/<assignment>.csv (flagged.py), which `reconcile` prints.

GuardedReleaseAssignment is nbgrader's release plus the sticky bit on inbound/, so that a student
cannot rename or remove a classmate's submission folder (nbgrader makes inbound/ 2733).
GuardedExchangeList is nbgrader's list with every field of a folder's name shown as collect's
table shows it (control characters as escapes): `list --inbound` prints students' folder names; it
parses inbound/ one folder at a time, each read with bounds of its own (submission_listing.py).
Both say what to do when the exchange folder is missing, instead of nbgrader's "please contact
your instructor" (the instructor is the one reading it). Loaded only by nbgrader.
"""

import glob
import logging
import os
import shutil
import stat
import tempfile
import time
import uuid
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.list import ExchangeList
from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.utils import check_directory, get_osusername
from traitlets import Bool, Float, Int

from autograder.engine.lateness import parse_time
from autograder.engine.outputs import student_cell
from autograder.engine.roster import roster_or_empty
from autograder.nbgrader_bridge.course import Course
from autograder.nbgrader_bridge.course_privacy import open_course
from autograder.nbgrader_bridge.exchange_root import (exchange_problems, foreign_course_folders, fuse_lets_students_in,
                                                      home_mode_default, instructors, logins_the_exchange_cannot_name,
                                                      open_homes)
from autograder.nbgrader_bridge.flagged import bounded_file_rows, collect_csv, shown, write_collect_flags
from autograder.nbgrader_bridge.due_dates import DueDates, judged_at_due_date, read_due_dates
from autograder.nbgrader_bridge.inbound import (NOT_COLLECTED, SECRET_FILE, SECRET_WRITTEN, TIMESTAMP_FILE, CopyRules,
                                                Flag, Refused, Submission, copy_submission, read_submission)
from autograder.nbgrader_bridge.inbound_listing import list_inbound
from autograder.nbgrader_bridge.submission_listing import listed_submission

SETUP_DOC = "docs/exchange.md"
SHOWN_LEAKS = 12     # a solved module holds hundreds of solution lines: the first say enough


def _aware(when):
    """nbgrader's times are naive UTC; the collector's are aware."""
    return when.replace(tzinfo=timezone.utc) if when is not None and when.tzinfo is None else when


def _now() -> float:
    return time.time()


def _missing_exchange(root: str) -> str:
    return (f"The exchange folder {root} does not exist or this account ({get_osusername()}) cannot write to it. "
            f"Create it once, as root: mkdir -p {root} && chmod 1777 {root} ; or, if the exchange is elsewhere, "
            f"set c.Exchange.root in a config every account reads (e.g. /etc/jupyter/nbgrader_config.py). "
            f"See {SETUP_DOC}.")


def _sticky_or_fail(exchange) -> None:
    """The exchange root made sticky if this account owns it (nbgrader creates it 0777), else the
    command fails while other accounts can write to it without the sticky bit."""
    info = os.stat(exchange.root)
    if info.st_uid == os.geteuid() and info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
        os.chmod(exchange.root, stat.S_IMODE(info.st_mode) | stat.S_ISVTX)
        exchange.log.warning("the exchange folder made sticky (students cannot rename or remove the course's "
                             "folder there): %s", exchange.root)
    students = roster_or_empty(exchange.coursedir.root)
    problems = exchange_problems(exchange.root, "", instructors(exchange.coursedir.groupshared, students), students)
    if problems:
        exchange.fail("\n".join(problems))


def _claim_course_folder(exchange) -> None:
    """Makes the course's folder in the exchange if it is missing, before anything checks it: checked
    missing, nbgrader would make it later, or take whatever a student put there meanwhile (a link is
    followed). mkdir never follows a link and fails on anything that stands there, which the checks
    then name."""
    course = os.path.join(exchange.root, exchange.coursedir.course_id)
    if not exchange.coursedir.course_id or not os.path.isdir(exchange.root):
        return
    try:
        os.mkdir(course, 0o700)
    except FileExistsError:
        return
    except OSError:
        return                  # nbgrader's own steps say why it cannot be made
    shared = stat.S_ISGID | stat.S_IWGRP if exchange.coursedir.groupshared else 0
    os.chmod(course, 0o755 | shared)      # nbgrader's modes for it
    exchange.log.info("the course's folder made in the exchange: %s", course)


def _existing_or_fail(exchange) -> None:
    """The exchange folder exists (under groupshared nbgrader neither creates nor checks it)."""
    if not os.path.isdir(exchange.root):
        exchange.fail(_missing_exchange(exchange.root))


def _check_under_groupshared(exchange, checks) -> None:
    """nbgrader's start skips ensure_root under CourseDirectory.groupshared, and the kit's checks with it:
    run them there, after making sure the exchange exists."""
    if exchange.coursedir.groupshared:
        _existing_or_fail(exchange)
        checks()


def _closed_course_or_fail(exchange) -> None:
    """The command stops while other accounts can reach the course folder (solutions/, submitted/)."""
    problem = open_course(exchange.coursedir.root, staff_group=exchange.coursedir.groupshared)
    if problem:
        exchange.fail(problem)


def _warn_open_homes(exchange, students, new_accounts: bool = False) -> None:
    """Warns (it does not stop the command) for every student home other accounts may read, and for
    a FUSE set-up that lets students' mounts be entered."""
    problems = open_homes(students) + ([problem] if new_accounts and (problem := home_mode_default()) else [])
    problems += [problem] if (problem := fuse_lets_students_in()) else []
    problems += [problem] if new_accounts and (problem := logins_the_exchange_cannot_name(students)) else []
    for problem in problems:
        exchange.log.warning("%s", shown(problem))


def _course_roster_or_fail(exchange) -> set[str]:
    """The roster's ids; the command stops on a roster it cannot read (collect would otherwise take
    every account of the server for the course's)."""
    from autograder.engine.roster import RosterError, read_roster, roster_path
    try:
        return set(read_roster(roster_path(Path(exchange.coursedir.root))))
    except (RosterError, OSError, UnicodeDecodeError) as exc:
        exchange.fail(f"the course roster cannot be read: {exc}")


def _refuse_off_roster(exchange, accepted: dict) -> None:
    """Leaves out (and lists) every student not on the course roster: the exchange is every
    account's (another course's students too), and autograde would make each a row of the
    gradebook. Without a roster no one can be told apart: all are collected, and the instructor told."""
    roster = _course_roster_or_fail(exchange)
    if problem := logins_the_exchange_cannot_name(roster):
        exchange.log.warning("%s", shown(problem))
    if not roster:
        exchange.log.warning("no course roster (%s in the course folder, one student login per line): every account "
                             "of the server that handed in is collected as a student of the course",
                             "roster.txt")
        return
    for student in sorted(set(accepted) - roster):
        subs = sorted(accepted.pop(student), key=lambda s: s.time, reverse=True)
        more = f" (and {len(subs) - 1} older folders)" if len(subs) > 1 else ""
        exchange.flags.append(Flag(student, subs[0].path.name, "", NOT_COLLECTED,
                                   f"{student} is not on the course roster (roster.txt){more}: another course's "
                                   f"student, or a login missing from the roster. If they are in the course, add "
                                   f"them to roster.txt and collect again; if not, remove their folders from inbound/"))


def _release_leaks(exchange) -> list[str]:
    """The leak scan of `check` (build/leaks.py) over the release about to be handed out."""
    from autograder.build.leaks import release_leaks
    from autograder.engine.assignment import load_assignment
    from autograder.errors import InstructorError

    name = exchange.coursedir.assignment_id
    try:
        return release_leaks(name, Path(exchange.src_path), dict(load_assignment(name).answer_key))
    except InstructorError as err:
        return [f"the release of {name!r} cannot be checked: {err}"]


def _course_of(exchange) -> Course:
    """The course the exchange command runs for, as its course directory names it."""
    coursedir = exchange.coursedir
    return Course(root=Path(coursedir.root), course_id=coursedir.course_id, db_url=coursedir.db_url,
                  submitted_directory=coursedir.submitted_directory)


def _release_checks(exchange) -> None:
    """What release and release_feedback check before writing into the exchange: a sticky root
    that is the instructor's, a closed course folder, the course's exchange folder claimed and
    none of its folders another account's or open to students."""
    _sticky_or_fail(exchange)
    _closed_course_or_fail(exchange)
    _claim_course_folder(exchange)
    students = roster_or_empty(exchange.coursedir.root)
    problems = foreign_course_folders(exchange.root, exchange.coursedir.course_id,
                                      instructors(exchange.coursedir.groupshared, students), students)
    if problems:
        exchange.fail("\n".join(problems))


class _ReleaseChecked:
    """Release's checks before nbgrader's start, under groupshared too (where nbgrader skips ensure_root)."""

    def start(self):
        _check_under_groupshared(self, self._guard)
        return super().start()

    def _guard(self):
        _release_checks(self)


class GuardedReleaseAssignment(_ReleaseChecked, ExchangeReleaseAssignment):
    def ensure_root(self):
        """nbgrader's (it creates a missing exchange if it can), with what to do when it cannot."""
        existing = Path(self.root)
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if not os.path.isdir(self.root) and not check_directory(str(existing), write=True, execute=True):
            self.fail(_missing_exchange(self.root))
        super().ensure_root()
        self._guard()


    def init_dest(self):
        super().init_dest()
        _warn_open_homes(self, roster_or_empty(self.coursedir.root), new_accounts=True)
        mode = os.stat(self.inbound_path).st_mode
        if not mode & stat.S_ISVTX:
            os.chmod(self.inbound_path, stat.S_IMODE(mode) | stat.S_ISVTX)
            self.log.info("inbound/ made sticky (students cannot rename or remove each other's submissions): %s",
                          self.inbound_path)

    def copy_files(self):
        """Nothing reaches the class from a release that holds the solutions or a key: generate_assignment
        copies every file of the source folder as it stands (a module solved in place, a duplicate of
        the answered notebook)."""
        leaks = _release_leaks(self)
        if leaks:
            self.fail(f"release not handed out: {self.src_path} holds the assignment's solutions or keys "
                      f"(an earlier release in the exchange stays as it was):\n  " + "\n  ".join(leaks[:SHOWN_LEAKS]) +
                      (f"\n  ... and {len(leaks) - SHOWN_LEAKS} more" if len(leaks) > SHOWN_LEAKS else "") +
                      "\nRemove or rebuild those files in the source folder (python -m autograder build "
                      f"{self.coursedir.assignment_id}), run nbgrader generate_assignment again, then release.")
        super().copy_files()


class GuardedReleaseFeedback(_ReleaseChecked, ExchangeReleaseFeedback):
    """nbgrader's release_feedback checks nothing of the exchange and writes every student's page
    into <exchange>/<course>/feedback/, following a link there: the same checks as release and
    collect first (the root and the folders above it, the course's folders, feedback/ included).
    A page shows the expected value of every hidden case its student failed, which any classmate
    who can still hand in for points could use: it waits, as the solutions do (release_gate.py),
    for every student's own due date (extensions included) and the late policy's last day. A page
    also says which answers are right, and for an item whose key is the same for every student that
    is the key."""

    during_late_work = Bool(
        False, help="Release once every student's own due date (extensions included) has passed, while late "
                    "work still earns points: a late student can then read the expected values of the hidden "
                    "cases on a classmate's page, or on her own, and hand in again").tag(config=True)

    def ensure_root(self):
        if not check_directory(self.root, write=True, execute=True):
            self.fail(_missing_exchange(self.root))
        self._guard()

    def _guard(self):
        super()._guard()
        self._after_every_due_date()

    def _after_every_due_date(self):
        from autograder.engine.lateness import load_policy
        from autograder.engine.registry import load_config
        from autograder.errors import InstructorError
        from autograder.nbgrader_bridge.release_gate import refusal

        assignment = self.coursedir.assignment_id
        if not assignment or glob.has_magic(assignment):
            self.fail("release_feedback: name one assignment (its due date decides when its feedback may go out)")
        try:
            dues = read_due_dates(_course_of(self), assignment)
            policy = load_policy(load_config(assignment))
        except InstructorError as exc:
            self.fail(f"release_feedback: {exc}")
        now = datetime.now(timezone.utc)
        reason = refusal(dues.due, now, policy, dues.extended, late_work_may_score=self.during_late_work)
        if reason:
            late = "" if self.during_late_work else (
                "; to release while late work still scores (a late student then reads the hidden cases' "
                "expected values on a classmate's page), add --GuardedReleaseFeedback.during_late_work=True")
            self.fail(f"release_feedback refused: {reason}{late}")
        still = refusal(dues.due, now, policy, dues.extended)
        if still:
            self.log.warning("releasing feedback while late work still scores (during_late_work): %s", still)



class GuardedExchangeCollect(ExchangeCollect):
    time_tolerance_seconds = Float(
        120.0, help="How much later than the time in its name a submission folder may have been changed "
                    "(ctime) and still be taken at its name's time").tag(config=True)

    students_share_uid = Int(
        -1, help="The uid every student's notebook runs as, when they all share one (a hub's jovyan, 1000): "
                 "folders owned by it are collected under any name. Off (-1) by default: the owner must be "
                 "the student's own account").tag(config=True)

    due_tolerance_seconds = Float(
        10.0, help="A folder named before the student's due date and last changed (ctime) after it is taken at its "
                   "name's time only if changed at most this much later (submit's copy); otherwise at its ctime, "
                   "listed: time_tolerance_seconds let a student rename a folder handed in late to just before the "
                   "due date").tag(config=True)

    max_folders_per_student = Int(
        50, help="Most inbound folders of one student that collect reads (the newest by change time of those "
                 "the student's own account made); the others are listed, not read").tag(config=True)

    def ensure_root(self):
        if not check_directory(self.root, write=True, execute=True):
            self.fail(_missing_exchange(self.root))
        _sticky_or_fail(self)
        _closed_course_or_fail(self)

    def start(self):
        _check_under_groupshared(self, self.ensure_root)
        return super().start()

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path} (run `nbgrader release_assignment` first; {SETUP_DOC})")
        self._check_inbound()
        self._warn_clock_skew()
        student = self.coursedir.student_id
        student = "*" if student in ("", "*") else glob.escape(student)     # nbgrader's default is "*"
        self.collected, accepted = set(), defaultdict(list)
        shared_uid = self.students_share_uid if self.students_share_uid >= 0 else None
        paths, self.flags = list_inbound(self.inbound_path, self.coursedir.assignment_id, student,
                                         per_student=self.max_folders_per_student, collector_uid=os.geteuid(),
                                         shared_uid=shared_uid)
        for path in paths:
            # The kit's strict reader of nbgrader's own time forms, not nbgrader's parse_utc: dateutil
            # reads any text, a zone name as a file path (gettz), and raised past every except on some.
            try:
                sub = read_submission(Path(path), parse_time, collector_uid=os.geteuid(),
                                      tolerance=self.time_tolerance_seconds, shared_uid=shared_uid)
            except Refused as exc:
                self.flags.append(exc.args[0])
                continue
            except Exception as exc:      # noqa: BLE001 - no one student's folder stops the class's collect
                self.flags.append(self._failed(Path(path).name, "could not be read", exc))
                continue
            accepted[sub.student].append(judged_at_due_date(sub, self._dues().of(sub.student),
                                                            self.due_tolerance_seconds))
        _refuse_off_roster(self, accepted)
        self.submissions = {s: self._choose(subs) for s, subs in accepted.items()}
        _warn_open_homes(self, self.submissions)

    def _warn_clock_skew(self):
        """Says when this machine's clock and the exchange filesystem's (an NFS server's sets the change
        times) are apart: a folder's time compares its name (the submitting machine's clock) with its
        change time, and a skew beyond due_tolerance_seconds misdates honest folders near the due date."""
        try:
            fd, probe = tempfile.mkstemp(prefix=".clock-", dir=self.course_path)
        except OSError:
            return
        try:
            skew = os.fstat(fd).st_ctime - _now()
        finally:
            os.close(fd)
            os.unlink(probe)
        if abs(skew) > 2.0:
            self.log.warning("the exchange's filesystem clock is %.0f s %s this machine's: submission times compare a "
                             "folder's name (the clock of the machine the student submitted from) with its change time "
                             "(the filesystem's); keep both in time (NTP) or the times near the due date are wrong (%s)",
                             abs(skew), "ahead of" if skew > 0 else "behind", SETUP_DOC)

    def _check_inbound(self):
        """inbound/ must be the instructor's (a student's own inbound/ would decide what is collected);
        with CourseDirectory.groupshared, the instructors' group's."""
        students = roster_or_empty(self.coursedir.root)
        problems = foreign_course_folders(self.root, self.coursedir.course_id,
                                          instructors(self.coursedir.groupshared, students), students)
        if problems:
            self.fail("\n".join(problems))
        mode = os.stat(self.inbound_path).st_mode
        if not mode & stat.S_ISVTX:
            try:
                os.chmod(self.inbound_path, stat.S_IMODE(mode) | stat.S_ISVTX)
                self.log.warning("inbound/ was not sticky (students could rename each other's submissions): "
                                 "made sticky now: %s", self.inbound_path)
            except PermissionError:
                self.log.warning("inbound/ is not sticky: students can rename each other's submissions: %s",
                                 self.inbound_path)

    def _dues(self) -> DueDates:
        """Each student's own due date, read once per collect; a gradebook that cannot be read stops it."""
        from autograder.errors import InstructorError
        if getattr(self, "_read_dues", None) is None:
            try:
                self._read_dues = read_due_dates(_course_of(self), self.coursedir.assignment_id)
            except InstructorError as exc:
                self.fail(f"collect: {exc}")
        return self._read_dues

    def _choose(self, subs: list[Submission]) -> Submission:
        """The newest by the time taken; with --before-duedate, the newest before the student's own
        due date (her extension included) if any."""
        subs = sorted(subs, key=lambda s: s.time, reverse=True)
        if self.before_duedate:
            due = self._dues().of(subs[0].student)
            if due is not None:
                early = [s for s in subs if s.time <= due]
                if early:
                    return early[0]
        return subs[0]

    def _due_date(self):
        """The assignment's due date (no gradebook yet: none to choose by)."""
        return read_due_dates(_course_of(self), self.coursedir.assignment_id).due

    def copy_files(self):
        assignment = self.coursedir.assignment_id
        if not self.submissions:
            self.log.warning("No submissions of '%s' for course '%s' to collect", assignment, self.coursedir.course_id)
        rules = CopyRules(ignore=tuple(self.coursedir.ignore), include=tuple(self.coursedir.include),
                          max_file_bytes=1000 * self.coursedir.max_file_size,
                          max_total_bytes=1000 * self.coursedir.max_dir_size)
        for student, sub in sorted(self.submissions.items()):
            try:
                self._collect(student, sub, rules)
            except Exception as exc:      # noqa: BLE001 - one student's folder never stops the others'
                shutil.rmtree(self._dest(student) + ".collecting", ignore_errors=True)
                self.collected.discard(student)
                self.flags.append(self._failed(sub.path.name, "could not be copied", exc))
        self._report(assignment)

    def _earlier_rows_kept(self):
        """Which of an earlier run's rows stay: every row of a student this run did not look at
        (`--student` another), and the rows of what was copied for a student whose collected folder
        this run read again but left as it was. Each run finds every refusal again for what is still
        in inbound/: a row whose entry was removed since (as docs/exchange.md says to) leaves the list."""
        student = self.coursedir.student_id
        only = student_cell(student) if student not in ("", "*") else None
        left_as_it_was = {student_cell(s) for s in self.submissions if s not in self.collected}   # as rows show them
        return lambda row: (only is not None and row["student"] != only) or (
            row["student"] in left_as_it_was and row["outcome"] != NOT_COLLECTED)

    def _failed(self, name: str, what: str, exc: Exception) -> Flag:
        """The row for a folder whose reading or copying failed in a way no rule foresaw: logged with its
        traceback for the kit's maintainers, listed for the instructor, and that student alone left out."""
        self.log.error("%s: %s", shown(name), what, exc_info=exc)
        words = str(exc).encode("ascii", "backslashreplace").decode()[:160]
        return Flag(name.split("+")[0], name, "", NOT_COLLECTED,
                    f"{what} ({type(exc).__name__}: {words}); the student's earlier collected submission is kept")

    def _dest(self, student: str) -> str:
        return self.coursedir.format_path(self.coursedir.submitted_directory, student, self.coursedir.assignment_id)

    def _collect(self, student: str, sub: Submission, rules: CopyRules) -> None:
        dest = self._dest(student)
        if os.path.isdir(dest):
            existing = _aware(self.coursedir.get_existing_timestamp(dest))
            newer = self.update and (existing is None or sub.time > existing)
            if not (newer or (self.before_duedate and existing != sub.time)):
                self.log.info("%s: %s", "No newer submission to collect" if self.update
                              else "Submission already exists, use --update to update", student)
                return
        self.collected.add(student)
        self.flags.extend(sub.flags)
        staging = f"{dest}.collecting"
        shutil.rmtree(staging, ignore_errors=True)
        try:
            self.flags.extend(bounded_file_rows(copy_submission(sub, Path(staging), rules)))
        except Refused as exc:
            self.flags.append(exc.args[0])
            return
        with open(os.path.join(staging, TIMESTAMP_FILE), "w", encoding="utf-8") as handle:
            handle.write(sub.time.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
        self._usable_secret(student, sub, staging)
        if os.path.isdir(dest):
            self.log.info("Updating submission: %s %s", student, self.coursedir.assignment_id)
            shutil.rmtree(dest)
        else:
            self.log.info("Collecting submission: %s %s", student, self.coursedir.assignment_id)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        os.rename(staging, dest)

    def _usable_secret(self, student: str, sub: Submission, staging: str) -> None:
        """nbgrader's release_feedback reads each student's submission_secret.txt (copied on by
        autograde and generate_feedback) and stops for the whole class on one it cannot use (none,
        empty, a folder): such a one is replaced by a secret of collect's own (listed unless there was
        none: a folder handed in without nbgrader submit). The student's own fetch_feedback cannot
        find that page; the class's release goes on."""
        path = os.path.join(staging, SECRET_FILE)
        if os.path.isfile(path) and not os.path.islink(path) and 0 < os.path.getsize(path) <= MAX_SECRET_BYTES:
            with open(path, "rb") as handle:
                try:
                    handle.read().decode("utf-8")   # release_feedback reads it as text
                    return
                except UnicodeDecodeError:
                    pass
        if os.path.lexists(path):   # nbgrader submit writes a non-empty one: this one the student made
            shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.unlink(path)
            self.flags.append(Flag(student, sub.path.name, SECRET_FILE, SECRET_WRITTEN,
                                   "an empty submission_secret.txt (or one that is no UTF-8 text, or over 4 KiB) or a folder "
                                   "of that name, which would stop "
                                   "release_feedback for the class; collect wrote its own, so the student cannot "
                                   "fetch this feedback: ask them to submit again"))
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(uuid.uuid4().hex)

    def _report(self, assignment: str) -> None:
        path = collect_csv(self.coursedir.root, assignment)
        write_collect_flags(path, self.flags, keep=self._earlier_rows_kept())
        for flag in self.flags:
            where = f"{flag.inbound}/{flag.file}" if flag.file else flag.inbound
            self.log.error("%s", shown(f"{flag.student}: {where}: {flag.outcome}: {flag.reason}"))
        if self.flags:
            self.log.error("%d problem(s) in the exchange, listed in %s (python -m autograder reconcile %s shows "
                           "them); a refused folder is not collected, the student's own submission is", len(self.flags),
                           path, assignment)



class GuardedExchangeList(ExchangeList):
    """nbgrader's list; a folder's name (student, assignment, time) is a student's text on the
    instructor's terminal: an escape sequence in it drove the terminal, a line break forged a
    line of the listing. Only what is printed is escaped: the parsed names still find the files.
    `--inbound` reads each folder through submission_listing.py (bounded, one folder at a time)."""

    def parse_assignments(self):
        log = self.log
        self.log = _ShownLog(log)   # its warnings quote folder paths
        try:
            return self._parse_inbound() if self.inbound else super().parse_assignments()
        finally:
            self.log = log

    def _parse_inbound(self):
        """nbgrader's parse of inbound/, one student's folder at a time: a folder it cannot read (an
        empty secret, a FIFO notebook, a sparse 4 GiB secret) or an entry that is a link is left out
        with a warning, never a stop of the class's listing; the others are grouped by course,
        student and assignment as nbgrader groups them."""
        student = self.coursedir.student_id
        courses = self.authenticator.get_student_courses(student) if student else None
        groups = {}
        for path in self.assignments:
            if os.path.islink(path):   # a link to a folder elsewhere (the course's source): collect refuses it too
                self.log.warning("%s: not listed (a link, not a folder of inbound/)", path)
                continue
            try:
                info = self.parse_assignment(path)
                if courses is not None and info["course_id"] not in courses:
                    continue
                parts = (info["course_id"], info["assignment_id"]) if self.path_includes_course else (info["assignment_id"],)
                info = listed_submission({**info, "path": path}, os.path.join(self.assignment_dir, *parts),
                                         os.path.join(self.root, info["course_id"], "feedback"), self.remove, self.log)
            except Exception as exc:   # noqa: BLE001 - one student's folder never stops the listing
                self.log.warning("%s: not listed (%s: %s)", path, type(exc).__name__, exc)
                continue
            key = (info["course_id"], info["student_id"], info["assignment_id"])
            groups.setdefault(key, []).append(info)
        listed = []
        for (course_id, student_id, assignment_id), submissions in sorted(groups.items()):
            submissions.sort(key=lambda x: x["timestamp"])
            listed.append({"course_id": course_id, "student_id": student_id, "assignment_id": assignment_id,
                           "status": submissions[0]["status"], "submissions": submissions})
        return listed

    def format_inbound_assignment(self, info):
        return super().format_inbound_assignment(_shown_fields(info))

    def format_outbound_assignment(self, info):
        return super().format_outbound_assignment(_shown_fields(info))


class _ShownLog(logging.LoggerAdapter):
    """A log whose every message is shown as collect's table shows names, its arguments included."""

    def log(self, level, msg, *args, **kwargs):
        try:
            text = str(msg) % args if args else str(msg)
        except (TypeError, ValueError):   # logging itself reports a bad format and goes on; so does this
            text = f"{msg} {args!r}"
        super().log(level, shown(text), **kwargs)


MAX_SECRET_BYTES = 4096        # nbgrader submit writes 128 hex digits; release_feedback reads the file whole


def _shown_fields(info: dict) -> dict:
    return {**info, **{key: shown(info[key]) for key in ("course_id", "student_id", "assignment_id", "timestamp")
                       if isinstance(info.get(key), str)}}
