"""One submission folder in nbgrader's exchange inbound/, read as data a student wrote.

`nbgrader submit` names each folder `<student>+<assignment>+<time>+<random>` and leaves it
writable by everyone (mode 0777); any account can create a folder of any name there. So nothing in
it is taken on its word:

- who: the folder counts only if it is owned by the account it names, or by the account running
  collect (an instructor who submitted for a student with `--student`);
- what: only regular files owned by that same account are copied, each opened without following a
  link (O_NOFOLLOW, relative to its already opened folder), so a link to solutions/ or to a
  classmate's files, a file another account put in, a pipe or a device is never read;
- when: the time in the folder's name, as submit wrote it, if the folder's change time (ctime,
  which no student can set back) is no earlier and at most `tolerance` later; otherwise the ctime.
  The student's timestamp.txt is only compared with it.

Everything refused or corrected is a Flag for the instructor's list. No nbgrader import.
"""

from __future__ import annotations

import fnmatch
import os
import pwd
import shutil
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

NOT_COLLECTED = "not collected"
FILE_LEFT_OUT = "file left out"
TIME_TAKEN = "time corrected"
TIMESTAMP_FILE = "timestamp.txt"
# Written by the collector from the trusted time, never copied from the student.
NOT_COPIED = (TIMESTAMP_FILE,)
CHUNK = 1 << 16


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
                    shared_uid: int | None = None) -> Submission:
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
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise refuse(f"cannot be read ({exc.strerror})") from None
    if stat.S_ISLNK(info.st_mode):
        raise refuse(f"is a symbolic link (to {os.readlink(path)}), not a folder submit wrote")
    if not stat.S_ISDIR(info.st_mode):
        raise refuse("is not a folder")
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
    try:
        named = parse_time(parts[2])
    except (ValueError, OverflowError) as exc:
        raise refuse(f"the time in its name ({parts[2][:40]!r}) cannot be read: {exc}") from None
    named = named.astimezone(timezone.utc) if named.tzinfo else named.replace(tzinfo=timezone.utc)
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
    flags += _timestamp_file_flags(path, student, name, when, parse_time)
    return Submission(path, student, info.st_uid, when, tuple(flags))


def _timestamp_file_flags(path: Path, student: str, name: str, when: datetime, parse_time) -> list[Flag]:
    """A timestamp.txt that disagrees with the time taken (more than a second) is listed."""
    try:
        fd = os.open(path / TIMESTAMP_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return [Flag(student, name, TIMESTAMP_FILE, TIME_TAKEN, "timestamp.txt is not a regular file; not used")]
        text = os.read(fd, 200).decode("utf-8", errors="replace").strip()
    finally:
        os.close(fd)
    try:
        said = parse_time(text)
        said = said.astimezone(timezone.utc) if said.tzinfo else said.replace(tzinfo=timezone.utc)
        agrees = abs((said - when).total_seconds()) <= 1.0
    except (ValueError, OverflowError):
        agrees, said = False, None
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


def copy_submission(sub: Submission, dest: Path, rules: CopyRules) -> list[Flag]:
    """Copies the regular files of `sub` owned by its owner into the new folder `dest`; what is
    left out is returned. Refused (dest removed) when the folder is over the size cap or cannot be
    opened."""
    flags: list[Flag] = []
    total = [0]
    try:
        top = os.open(sub.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        raise Refused(Flag(sub.student, sub.path.name, "", NOT_COLLECTED, f"cannot be opened ({exc.strerror})")) from None
    dest.mkdir(parents=True)
    try:
        if os.fstat(top).st_uid != sub.uid:
            raise Refused(Flag(sub.student, sub.path.name, "", NOT_COLLECTED, "its owner changed while it was read"))
        _copy_folder(top, "", dest, sub, rules, flags, total)
    except Refused:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    finally:
        os.close(top)
    return flags


def _copy_folder(fd: int, rel: str, dest: Path, sub: Submission, rules: CopyRules, flags: list, total: list) -> None:
    def left_out(name: str, reason: str) -> None:
        flags.append(Flag(sub.student, sub.path.name, f"{rel}{name}", FILE_LEFT_OUT, reason))

    for name in sorted(os.listdir(fd)):
        if any(fnmatch.fnmatch(name, glob) for glob in rules.ignore) or (not rel and name in NOT_COPIED):
            continue
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            left_out(name, f"is a symbolic link (to {os.readlink(name, dir_fd=fd)}); links are never followed")
        elif info.st_uid != sub.uid:
            left_out(name, f"is owned by {_owner_name(info.st_uid)}, not by the folder's owner "
                           f"{_owner_name(sub.uid)}")
        elif stat.S_ISDIR(info.st_mode):
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            try:
                (dest / name).mkdir()
                _copy_folder(child, f"{rel}{name}/", dest / name, sub, rules, flags, total)
            finally:
                os.close(child)
        elif not stat.S_ISREG(info.st_mode):
            left_out(name, "is not a regular file (a pipe, socket or device)")
        elif not any(fnmatch.fnmatch(name, glob) for glob in rules.include):
            continue
        elif info.st_size > rules.max_file_bytes:
            left_out(name, f"is larger than {rules.max_file_bytes} bytes (CourseDirectory.max_file_size)")
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
        with open(target, "xb") as out:
            while chunk := handle.read(CHUNK):
                total[0] += len(chunk)
                if total[0] > rules.max_total_bytes:
                    raise Refused(Flag(sub.student, sub.path.name, "", NOT_COLLECTED,
                                       f"holds more than {rules.max_total_bytes} bytes (CourseDirectory.max_dir_size)"))
                out.write(chunk)
