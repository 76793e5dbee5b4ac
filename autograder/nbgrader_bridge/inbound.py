"""One submission folder in nbgrader's exchange inbound/, read as data a student wrote.

`nbgrader submit` names each folder `<student>+<assignment>+<time>+<random>` and leaves it
writable by everyone (mode 0777); any account can create a folder of any name there. So nothing in
it is taken on its word:

- who: the folder counts only if it is owned by the account it names, or by the account running
  collect (an instructor who submitted for a student with `--student`);
- what: only regular files owned by that same account are copied, each opened without following a
  link (O_NOFOLLOW, relative to its already opened folder), so a link to solutions/ or to a
  classmate's files, a file another account put in, a pipe or a device is never read; nor is
  anything on another filesystem (a mount in the folder answers with any owner, time and content);
- when: the time in the folder's name, as submit wrote it, if the folder's change time (ctime,
  which no student can set back) is no earlier and at most `tolerance` later; otherwise the ctime.
  A file rewritten in place (same inode) leaves the folder's ctime as it was, so the ctime of every
  file and folder copied counts too: the latest, if more than `tolerance` after that time. Anything
  changed after the folder was read refuses it (collect again). The student's timestamp.txt is
  only compared with it.
- how much: at most MAX_ENTRIES entries (empty files cost collect time and inodes, not bytes),
  counted as a folder is listed, never after holding all its names; MAX_DEPTH nested folders and
  paths of MAX_PATH_BYTES; whatever cannot be read or written is left out, never a crash of the
  whole collect.

Everything refused or corrected is a Flag for the instructor's list. No nbgrader import.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import pwd
import re
import shutil
import stat
import warnings
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from autograder.engine.locate import MAX_STUDENT_FILE_BYTES
from autograder.engine.outputs import invisible

NOT_COLLECTED = "not collected"
FILE_LEFT_OUT = "file left out"
TIME_TAKEN = "time corrected"
TIMESTAMP_FILE = "timestamp.txt"
# What `nbgrader submit` writes and nbgrader's release_feedback names the student's page by.
SECRET_FILE = "submission_secret.txt"
SECRET_WRITTEN = "secret written"
# Written by the collector from the trusted time, never copied from the student.
NOT_COPIED = (TIMESTAMP_FILE,)
CHUNK = 1 << 16
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")   # and bytes that are no UTF-8 (surrogates)
# Markup in HTML or Markdown, glob characters and spaces: no account name holds one; formgrader
# shows the student id unescaped (nbgrader's formgrade_macros.html.j2, rendered without
# autoescaping), and nbgrader reads it as a glob pattern (`--student`, release_feedback's
# feedback/<student>/: a student named `*` is every student there).
_NOT_IN_AN_ID = re.compile("[<>&\"'`*?\\[\\]\\s]")
MAX_DEPTH = 16          # nested folders below the submission's; deeper ones are left out
MAX_ENTRIES = 10_000    # files and folders in one submission; more refuses it
# bytes of a path inside the submission; longer ones are left out: sixteen folders of 255-byte
# names pass PATH_MAX below submitted/ (and again below autograded/, where nbgrader copies them)
MAX_PATH_BYTES = 1024


@dataclass(frozen=True)
class Flag:
    """One row of the instructor's list."""
    student: str
    inbound: str          # the inbound folder's name
    file: str             # path inside it, "" for the folder itself
    outcome: str          # NOT_COLLECTED, FILE_LEFT_OUT or TIME_TAKEN
    reason: str


@dataclass(frozen=True)
class Submission:
    """An inbound folder that may be collected."""
    path: Path
    student: str
    uid: int              # its owner: every file copied must be owned by this uid too
    time: datetime        # the submission time taken (UTC)
    flags: tuple[Flag, ...]
    changed: float = float("inf")   # the latest ctime seen when it was read: anything later refuses the copy
    inode: tuple[int, int] | None = None   # (st_dev, st_ino) of the folder read: another one in its place refuses the copy


class Refused(Exception):
    """The whole folder is not collected; args[0] is the Flag."""


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, timezone.utc)


def _owner_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def read_submission(path: Path, parse_time, *, collector_uid: int, tolerance: float,
                    shared_uid: int | None = None, max_entries: int = MAX_ENTRIES) -> Submission:
    """The folder at `path` (an inbound entry) as a Submission, or Refused. `parse_time` reads the
    time in its name (nbgrader's parse_utc). `shared_uid`: the one uid every student runs as (a
    hub whose notebooks all run as jovyan), accepted for any name, since the owner cannot tell
    students apart there; only when the instructor sets it."""
    name = path.name
    student = name.split("+")[0]

    def refuse(reason: str) -> Refused:
        return Refused(Flag(student, name, "", NOT_COLLECTED, reason))

    parts = name.rsplit("+", 3)
    if len(parts) < 3:
        raise refuse("its name is not <student>+<assignment>+<time>[+<random>] as nbgrader submit writes it")
    if student in ("", ".", ".."):
        # collect would write submitted/<student>/<assignment>: outside submitted/, or as a student
        # named after the assignment
        raise refuse(f"{student!r} is not a student id but a step in a path")
    if _CONTROLS.search(student) or any(invisible(c) for c in student):
        # no account name holds one; the id would reach terminals and reports raw (pregrade, nbgrader)
        raise refuse(f"the student id {student.encode('utf-8', 'backslashreplace')!r} holds a control character "
                     f"(or an invisible one: a bidi override, a zero-width mark)")
    if _NOT_IN_AN_ID.search(student):
        # only where students share a uid can such a name be handed in; it would run as script in
        # the instructor's formgrader
        raise refuse(f"the student id {student!r} holds markup (one of < > & \" ' `), a glob character (* ? [ ]) "
                     f"or a space: no account name does")
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise refuse(f"cannot be read ({exc.strerror})") from None
    if stat.S_ISLNK(info.st_mode):
        raise refuse(f"is a symbolic link{_link_target(path)}, not a folder submit wrote")
    if not stat.S_ISDIR(info.st_mode):
        raise refuse("is not a folder")
    try:
        inbound_dev = os.stat(path.parent).st_dev
    except OSError as exc:
        raise refuse(f"cannot be read ({exc.strerror})") from None
    if info.st_dev != inbound_dev:
        raise refuse("is on another filesystem than inbound/ (a mount: a student's FUSE filesystem answers with any "
                     "owner, time and content); collect never crosses one")
    try:
        student_uid = pwd.getpwnam(student).pw_uid
    except KeyError:
        student_uid = None
    if info.st_uid not in (student_uid, collector_uid, shared_uid):
        if student_uid is None:
            raise refuse(f"there is no account named {student} on this machine, so its owner "
                         f"({_owner_name(info.st_uid)}) cannot be checked; if every student runs as one uid (a hub's "
                         f"jovyan), set c.GuardedExchangeCollect.students_share_uid to it (then anyone may hand in "
                         f"under any name: prefer a per-user exchange such as ngshare)")
        raise refuse(f"is owned by {_owner_name(info.st_uid)}, not by {student}: another account's submission "
                     f"in {student}'s name")
    named, unreadable = read_time(parse_time, parts[2])
    if named is None:
        raise refuse(f"the time in its name ({parts[2][:40]!r}) cannot be read: {unreadable}")
    # What was looked at by name decides nothing: the folder opened (never through a link) must be
    # the one whose kind and owner were checked, else the student swapped it meanwhile.
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise refuse("was replaced by a link or a file while it was read: collect again") from None
        raise refuse(f"cannot be opened ({exc.strerror})") from None
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino, opened.st_uid) != (info.st_dev, info.st_ino, info.st_uid):
            raise refuse("was replaced by another folder while it was read: collect again")
        return _read_opened(fd, path, student, opened, named, tolerance, max_entries, parse_time, refuse)
    finally:
        os.close(fd)


def _read_opened(fd: int, path: Path, student: str, info: os.stat_result, named: datetime, tolerance: float,
                 max_entries: int, parse_time, refuse) -> Submission:
    name = path.name
    changed = _utc(info.st_ctime)
    flags = []
    lag = (changed - named).total_seconds()
    if -1.0 <= lag <= tolerance:      # ctime is whole-tick precise; submit names the folder before it writes it
        when = named
    else:
        when = changed
        flags.append(Flag(student, name, "", TIME_TAKEN,
                          f"its name says {named:%Y-%m-%d %H:%M:%S} UTC but the folder was last changed (ctime) at "
                          f"{changed:%Y-%m-%d %H:%M:%S} UTC (renamed or changed after it was handed in?): "
                          f"the ctime is taken"))
    try:
        latest, which = _latest_change(fd, info.st_uid, max_entries, info.st_dev)
    except OSError as exc:
        raise refuse(f"cannot be opened ({exc.strerror})") from None
    if latest is None:
        raise refuse(f"holds more than {max_entries} files and folders")
    if (_utc(latest) - when).total_seconds() > tolerance:
        flags.append(Flag(student, name, which, TIME_TAKEN,
                          f"{which} was last changed (ctime) at {_utc(latest):%Y-%m-%d %H:%M:%S} UTC, after the "
                          f"submission time {when:%Y-%m-%d %H:%M:%S} UTC (edited after it was handed in?): its ctime "
                          f"is taken"))
        when = _utc(latest)
    flags += _timestamp_file_flags(fd, student, name, when, parse_time)
    return Submission(path, student, info.st_uid, when, tuple(flags), max(latest, info.st_ctime),
                      (info.st_dev, info.st_ino))


def read_time(parse_time, text: str) -> tuple[datetime | None, str]:
    """The time `text` (a student wrote it: a folder name's part, timestamp.txt) says, as an aware
    UTC datetime, and "" ; or None and why it cannot be read. Whatever the parser raises or warns
    (dateutil raised decimal.InvalidOperation on `1:999...9` and its DeprecatedTzKeyWarning on a
    zone named `..`) is "cannot be read", never an error out of collect."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            when = parse_time(text)
            when = when.astimezone(timezone.utc) if when.tzinfo else when.replace(tzinfo=timezone.utc)
            when.timestamp()           # within what the arithmetic below can take
    except Exception as exc:           # noqa: BLE001 - any failure on a student's text is that text's
        words = str(exc).encode("ascii", "backslashreplace").decode()[:120]
        return None, f"{type(exc).__name__}: {words}" if words else type(exc).__name__
    return when, ""


def _link_target(path: Path, dir_fd: int | None = None) -> str:
    """ " (to <target>)" for the refusal's wording, or "" if it is no link by now."""
    try:
        return f" (to {os.readlink(path, dir_fd=dir_fd)})"
    except (OSError, ValueError):
        return ""


def _latest_change(top: int, uid: int, max_entries: int, dev: int) -> tuple[float | None, str]:
    """The latest ctime among the files and folders of `uid` on filesystem `dev` collect would copy
    (links and mounts are not followed) and the path of that entry; (None, "") past `max_entries` entries."""
    found = {"latest": 0.0, "which": "", "seen": 0}

    def visit(fd: int, rel: str, depth: int) -> bool:
        try:
            listing = os.scandir(fd)
        except OSError:
            return True          # left out by the copy, which says so
        with listing:            # read as counted: a folder of millions of names is never held whole
            return all(visit_entry(fd, rel, depth, entry) for entry in listing)

    def visit_entry(fd: int, rel: str, depth: int, entry) -> bool:
        found["seen"] += 1
        if found["seen"] > max_entries:
            return False
        if not rel and entry.name in NOT_COPIED:
            return True
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            return True
        if info.st_uid != uid or info.st_dev != dev or not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            return True
        if info.st_ctime > found["latest"]:
            found["latest"], found["which"] = info.st_ctime, f"{rel}{entry.name}"
        if not stat.S_ISDIR(info.st_mode) or depth >= MAX_DEPTH:
            return True
        try:
            child = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        except OSError:
            return True
        try:
            return visit(child, f"{rel}{entry.name}/", depth + 1)
        finally:
            os.close(child)

    within = visit(top, "", 0)
    return (found["latest"], found["which"]) if within else (None, "")


def _timestamp_file_flags(folder: int, student: str, name: str, when: datetime, parse_time) -> list[Flag]:
    """A timestamp.txt that disagrees with the time taken (more than a second) is listed."""
    try:
        fd = os.open(TIMESTAMP_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return [Flag(student, name, TIMESTAMP_FILE, TIME_TAKEN, "timestamp.txt is not a regular file; not used")]
        text = os.read(fd, 200).decode("utf-8", errors="replace").strip()
    finally:
        os.close(fd)
    said = read_time(parse_time, text)[0]
    agrees = said is not None and abs((said - when).total_seconds()) <= 1.0
    if agrees:
        return []
    shown = f"{said:%Y-%m-%d %H:%M:%S} UTC" if said else repr(text[:40])
    return [Flag(student, name, TIMESTAMP_FILE, TIME_TAKEN,
                 f"timestamp.txt says {shown}, the exchange {when:%Y-%m-%d %H:%M:%S} UTC: timestamp.txt is not used")]


@dataclass
class CopyRules:
    ignore: tuple[str, ...] = ()          # name globs never copied (CourseDirectory.ignore)
    include: tuple[str, ...] = ("*",)     # file name globs copied (CourseDirectory.include)
    max_file_bytes: int = 100_000_000     # larger files are left out
    max_total_bytes: int = 100_000_000    # a larger folder is refused
    max_entries: int = MAX_ENTRIES        # a folder with more files and folders is refused
    max_notebook_bytes: int = MAX_STUDENT_FILE_BYTES   # larger notebooks are left out (the grader reads no more)


def copy_submission(sub: Submission, dest: Path, rules: CopyRules) -> list[Flag]:
    """Copies the regular files of `sub` owned by its owner into the new folder `dest`; what is
    left out is returned. Refused (dest removed) when the folder is over the size cap or cannot be
    opened."""
    flags: list[Flag] = []
    total = [0, 0]     # bytes, entries
    try:
        top = os.open(sub.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        raise Refused(Flag(sub.student, sub.path.name, "", NOT_COLLECTED, f"cannot be opened ({exc.strerror})")) from None
    dest.mkdir(parents=True)
    try:
        opened = os.fstat(top)
        if opened.st_uid != sub.uid:
            raise Refused(Flag(sub.student, sub.path.name, "", NOT_COLLECTED, "its owner changed while it was read"))
        if sub.inode is not None and (opened.st_dev, opened.st_ino) != sub.inode:
            raise Refused(Flag(sub.student, sub.path.name, "", NOT_COLLECTED,
                               "was replaced by another folder after it was read: collect again"))
        _copy_folder(top, "", dest, sub, rules, flags, total)
        _unchanged(top, sub)
    except Refused:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    finally:
        os.close(top)
    return flags


def _copy_folder(fd: int, rel: str, dest: Path, sub: Submission, rules: CopyRules, flags: list, total: list) -> None:
    def left_out(name: str, reason: str) -> None:
        flags.append(Flag(sub.student, sub.path.name, f"{rel}{name}", FILE_LEFT_OUT, reason))

    names = []
    with os.scandir(fd) as listing:
        for entry in listing:            # counted as listed: at most max_entries names are held
            total[1] += 1
            if total[1] > rules.max_entries:
                raise Refused(Flag(sub.student, sub.path.name, "", NOT_COLLECTED,
                                   f"holds more than {rules.max_entries} files and folders"))
            names.append(entry.name)
    for name in sorted(names):
        try:
            _copy_entry(fd, rel, name, dest, sub, rules, flags, total, left_out)
        except OSError as exc:           # the entry changed under us (a student's rename, swap, removal)
            left_out(name, f"could not be copied ({exc.strerror or exc}; changed while it was copied?)")


def _copy_entry(fd: int, rel: str, name: str, dest: Path, sub: Submission, rules: CopyRules, flags: list,
                total: list, left_out) -> None:
    """One entry of the folder open as `fd`, decided by what is opened (never through a link), not by
    what its name showed a moment before."""
    if len(os.fsencode(f"{rel}{name}")) > MAX_PATH_BYTES:
        left_out(name, f"its path in the folder is longer than {MAX_PATH_BYTES} bytes")
        return
    if any(fnmatch.fnmatch(name, glob) for glob in rules.ignore) or (not rel and name in NOT_COPIED):
        return
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError as exc:
        left_out(name, f"cannot be read ({exc.strerror})")
        return
    if stat.S_ISLNK(info.st_mode):
        left_out(name, f"is a symbolic link{_link_target(name, fd)}; links are never followed")
    elif sub.inode is not None and info.st_dev != sub.inode[0]:
        # a mount in the folder (a student's FUSE filesystem, where /etc/fuse.conf allows others in)
        # answers with any owner, time and content
        left_out(name, "is on another filesystem than the folder (a mount in it); collect never crosses one")
    elif info.st_uid != sub.uid:
        left_out(name, f"is owned by {_owner_name(info.st_uid)}, not by the folder's owner "
                       f"{_owner_name(sub.uid)}")
    elif any(invisible(c) for c in name):
        # nbgrader's autograde and generate_feedback print every copied file's name raw ("Copying …")
        left_out(name, "its name holds a control character (or an invisible one: a bidi override, a zero-width "
                       "mark, bytes that are no UTF-8), which nbgrader would print raw on the instructor's terminal")
    elif stat.S_ISDIR(info.st_mode) and not rel and name.endswith(".html"):
        # autograde and generate_feedback copy it on; release_feedback takes every *.html there for a
        # page and stopped for the class on a folder (IsADirectoryError)
        left_out(name, "is a folder named like a feedback page (*.html), which would stop release_feedback "
                       "for the class")
    elif stat.S_ISDIR(info.st_mode):
        if rel.count("/") >= MAX_DEPTH:
            left_out(name, f"is a folder nested deeper than {MAX_DEPTH} folders")
            return
        try:
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        except OSError as exc:
            left_out(name, f"cannot be read ({exc.strerror})")
            return
        try:
            opened = os.fstat(child)
            if not stat.S_ISDIR(opened.st_mode) or opened.st_uid != sub.uid:
                left_out(name, "changed into another kind of file or owner while it was read")
                return
            try:
                with os.scandir(child) as listing:   # readable? (one entry, not the whole listing)
                    next(listing, None)
            except OSError as exc:
                left_out(name, f"cannot be read ({exc.strerror})")
                return
            try:
                (dest / name).mkdir()
            except OSError as exc:
                left_out(name, f"cannot be copied ({exc.strerror})")
                return
            _copy_folder(child, f"{rel}{name}/", dest / name, sub, rules, flags, total)
            _unchanged(child, sub)
        finally:
            os.close(child)
    elif not stat.S_ISREG(info.st_mode):
        left_out(name, "is not a regular file (a pipe, socket or device)")
    elif not any(fnmatch.fnmatch(name, glob) for glob in rules.include):
        return
    elif info.st_size > rules.max_file_bytes:
        left_out(name, f"is larger than {rules.max_file_bytes} bytes (CourseDirectory.max_file_size)")
    elif name.endswith(".ipynb") and info.st_size > rules.max_notebook_bytes:
        # the grader scores it nothing unread; nbgrader's autograde would read all of it, cell by cell,
        # in the one process that autogrades the class (100,000 cells: 34 s and 670 MB)
        left_out(name, f"is a notebook larger than the grader reads ({rules.max_notebook_bytes // 1024**2} MB): "
                       f"it would score nothing, and autograde would read it whole")
    else:
        _copy_file(fd, name, dest / name, sub, rules, total, left_out)


def _copy_file(fd: int, name: str, target: Path, sub: Submission, rules: CopyRules, total: list, left_out) -> None:
    try:
        source = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    except OSError as exc:
        left_out(name, f"cannot be opened ({exc.strerror})")
        return
    with os.fdopen(source, "rb") as handle:
        info = os.fstat(source)      # what was opened, whatever the name points to now
        if not stat.S_ISREG(info.st_mode) or info.st_uid != sub.uid:
            left_out(name, "changed into another kind of file or owner while it was read")
            return
        try:
            out = open(target, "xb")
        except OSError as exc:
            left_out(name, f"cannot be copied ({exc.strerror})")
            return
        try:
            with out:
                while chunk := handle.read(CHUNK):
                    total[0] += len(chunk)
                    if total[0] > rules.max_total_bytes:
                        raise Refused(Flag(sub.student, sub.path.name, "", NOT_COLLECTED,
                                           f"holds more than {rules.max_total_bytes} bytes "
                                           f"(CourseDirectory.max_dir_size)"))
                    out.write(chunk)
        except OSError:
            target.unlink(missing_ok=True)   # never half a file graded as the whole
            raise
        _unchanged(source, sub)


def _unchanged(fd: int, sub: Submission) -> None:
    """Refuses the folder if what `fd` holds changed after the folder was read (its time was taken
    from what it held then)."""
    if os.fstat(fd).st_ctime > sub.changed:
        raise Refused(Flag(sub.student, sub.path.name, "", NOT_COLLECTED,
                           "changed while it was collected (a file was written after the folder was read): "
                           "collect again"))
