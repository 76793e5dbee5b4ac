"""Which entries of the exchange's inbound/ collect reads: bounded by accounts, never by what
students create there.

Every account may create entries in inbound/ (nbgrader makes it 2733, the kit's release 3733),
with any names. Collect reads, for each student, the newest `per_student` folders that student's
own account made in their name (by change time, which no student can set back): what another
account made in a student's name never counts among them, so it cannot push the student's own
submission out. Of what each account made in other names, or that is no folder, at most
READ_PER_OWNER entries are read (so that their refusal names the reason, inbound.read_submission)
and the rest are one listed row naming that account. inbound/ is read as a stream: what is kept is
at most `per_student` names per student and READ_PER_OWNER per account, whatever the entries' count.
"""

from __future__ import annotations

import fnmatch
import heapq
import os
import pwd
import stat
from dataclasses import dataclass, field

from autograder.nbgrader_bridge.inbound import NOT_COLLECTED, Flag

READ_PER_OWNER = 5      # an account's entries in others' names that are read (each refused with its reason)
MOST_STUDENTS = 20_000  # names collect keeps folders for: an account allowed to use any name (the
                        # instructor's, a hub's shared uid) could otherwise make the kept names grow


def _account(uid: int, known: dict[int, str]) -> str:
    if uid not in known:
        try:
            known[uid] = pwd.getpwuid(uid).pw_name
        except KeyError:
            known[uid] = f"uid {uid}"
    return known[uid]


@dataclass
class _Newest:
    """A student's newest folders by change time, at most `keep`; of the others a count and the newest."""
    keep: int
    folders: list[tuple[float, str]] = field(default_factory=list)   # a heap, oldest first
    left: int = 0
    newest_left: tuple[float, str] = (float("-inf"), "")

    def add(self, changed: float, path: str) -> None:
        heapq.heappush(self.folders, (changed, path))
        if len(self.folders) > self.keep:
            self.left += 1
            self.newest_left = max(self.newest_left, heapq.heappop(self.folders))


@dataclass
class _Foreign:
    """What one account made in other accounts' names (or that is no folder): the first few, and a count."""
    read: list[str] = field(default_factory=list)
    more: int = 0
    example: str = ""


def list_inbound(inbound: str, assignment: str, student_glob: str, *, per_student: int, collector_uid: int,
                 shared_uid: int | None) -> tuple[list[str], list[Flag]]:
    """The inbound entries of `assignment` whose student matches `student_glob` that collect reads
    (sorted), and the rows for what it leaves unread."""
    accounts: dict[int, str] = {}
    newest: dict[str, _Newest] = {}
    foreign: dict[int, _Foreign] = {}
    beyond_students = 0
    with os.scandir(inbound) as entries:
        for entry in entries:
            parts = entry.name.split("+")
            # nbgrader's own pattern, <student>+<assignment>+*, as glob matched it (no hidden names)
            if len(parts) < 3 or parts[1] != assignment or entry.name.startswith(".") \
                    or not fnmatch.fnmatchcase(parts[0], student_glob):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue   # gone meanwhile
            student = parts[0]
            anyone = info.st_uid == collector_uid or info.st_uid == shared_uid   # may hand in under any name
            if stat.S_ISDIR(info.st_mode) and (anyone or _account(info.st_uid, accounts) == student):
                if student not in newest and len(newest) >= MOST_STUDENTS:
                    beyond_students += 1
                    continue
                newest.setdefault(student, _Newest(per_student)).add(info.st_ctime, entry.path)
                continue
            theirs = foreign.setdefault(info.st_uid, _Foreign())
            if len(theirs.read) < READ_PER_OWNER:
                theirs.read.append(entry.path)
            else:
                theirs.more += 1
                theirs.example = theirs.example or entry.name
    paths = [path for kept in newest.values() for _, path in kept.folders]
    paths += [path for theirs in foreign.values() for path in theirs.read]
    flags = [_left_flag(student, kept, per_student) for student, kept in sorted(newest.items()) if kept.left]
    flags += [_foreign_flag(_account(uid, accounts), theirs) for uid, theirs in sorted(foreign.items()) if theirs.more]
    if beyond_students:
        flags.append(Flag("", "", "", NOT_COLLECTED, f"{beyond_students} inbound folders named for more than "
                                                     f"{MOST_STUDENTS:,} students were not read"))
    return sorted(paths), flags


def _left_flag(student: str, kept: _Newest, per_student: int) -> Flag:
    return Flag(student, os.path.basename(kept.newest_left[1]), "", NOT_COLLECTED,
                f"{kept.left} more inbound folders of {student} were not read (this one and {kept.left - 1} older): "
                f"collect reads the newest {per_student} by change time "
                f"(c.GuardedExchangeCollect.max_folders_per_student); remove the old ones")


def _foreign_flag(owner: str, theirs: _Foreign) -> Flag:
    return Flag(owner, theirs.example, "", NOT_COLLECTED,
                f"{theirs.more:,} more inbound entries made by {owner} in other students' names, or that are no "
                f"folders, were not read (the first {READ_PER_OWNER} were, and are listed): no one's submission, "
                f"but an account filling inbound/")
