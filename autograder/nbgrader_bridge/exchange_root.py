"""What an exchange folder must be before the kit's release, collect or reconcile trust it.

nbgrader's exchange is a folder every account can write to. Without the sticky bit (mode 0777, as
nbgrader documents it) any student may rename the course's folder there (`cs349e/`) away and put
her own in its place: classmates then fetch her files (her `hw_specs.py` runs as each of them) and
hand in into her folder. With the sticky bit (1777, as /tmp) only the folder's owner may rename or
remove it. So the exchange root must be sticky wherever other accounts can write to it, and the
course's folder, its outbound/ and inbound/ must be the instructor's (or root's), never a link.
Students' `nbgrader fetch_assignment` and `nbgrader submit` are nbgrader's own and check none of
this: these checks are what the instructor's commands can see. No nbgrader import (reconcile uses it).
"""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

SETUP_DOC = "docs/exchange.md"
# nbgrader 0.9.6's Exchange.root default, where the course's config does not set one.
DEFAULT_ROOT = "/usr/local/share/nbgrader/exchange"


def _owner(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def unsticky_root(root: str | os.PathLike) -> str | None:
    """Why the exchange root cannot be trusted (others may write to it without the sticky bit), or None."""
    try:
        info = os.stat(root)
    except OSError:
        return None                         # missing: the commands say so themselves
    if info.st_mode & (stat.S_IWOTH | stat.S_IWGRP) and not info.st_mode & stat.S_ISVTX:
        return (f"the exchange folder {root} is writable by other accounts (mode {stat.S_IMODE(info.st_mode):o}) "
                f"without the sticky bit: any student can rename the course's folder there away and put her own in "
                f"its place (classmates then fetch her files and hand in into her folder). Make it sticky, as root: "
                f"chmod 1777 {root} ; then check the course's folder there is the instructor's ({SETUP_DOC})")
    return None


def _students_in_group(gid: int, students) -> tuple[list[str], str]:
    """(the `students` in group `gid`, sorted; the group's name)."""
    from autograder.engine.others_access import group_members

    members, name = group_members(gid)
    return sorted(members & set(students)), name


def foreign_course_folders(root: str | os.PathLike, course_id: str, ours, students=()) -> list[str]:
    """The course's folders in the exchange (the course folder, outbound/, inbound/) that are a link,
    not owned as `ours(stat_result)` allows, or writable by a group holding any of `students` (the
    roster), each with what to do."""
    problems = []
    course = Path(root) / course_id
    for path in (course, course / "outbound", course / "inbound"):
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"{path} cannot be read ({exc.strerror})")
            continue
        if stat.S_ISLNK(info.st_mode) or not ours(info):
            what = "a link" if stat.S_ISLNK(info.st_mode) else f"owned by {_owner(info.st_uid)}"
            problems.append(f"{path} is {what}, not the instructor's or root's: someone replaced the course's exchange "
                            f"folder (her files would be fetched, submissions handed into her folder). Remove it, as "
                            f"root: rm -r {course} ; make the exchange sticky (chmod 1777 {root}) and release again "
                            f"({SETUP_DOC})")
            break
        # nbgrader's release under groupshared makes these 2775 in the instructor's login group: where
        # that group holds students (`users`), any of them could rename inbound/ or outbound/ away and
        # make her own (classmates hand in to her, or fetch her files). inbound/ is writable by everyone
        # on purpose (sticky: no one renames another's entry), whatever its group.
        writable = info.st_mode & stat.S_IWGRP and path != course / "inbound"
        who, group = _students_in_group(info.st_gid, students) if writable else ([], "")
        if who:
            problems.append(f"{path} is writable by group {group}, which holds roster students: {', '.join(who[:5])}"
                            f"{f' and {len(who) - 5} more' if len(who) > 5 else ''}: any of them could put her own "
                            f"inbound/ or outbound/ there (classmates would hand in to her, or fetch her files). As "
                            f"root: chgrp -R to a group of the course's staff only (or chmod -R g-w {course}), and "
                            f"remove what a student made there ({SETUP_DOC})")
            break
    return problems


def exchange_problems(root: str | os.PathLike, course_id: str, ours) -> list[str]:
    """Everything wrong with the exchange for this course (empty when it is sound or absent)."""
    problem = unsticky_root(root)
    return ([problem] if problem else []) + (foreign_course_folders(root, course_id, ours) if course_id else [])


def instructors(groupshared: bool = False, students=()):
    """`ours` for this account: owned by it or root (or, with CourseDirectory.groupshared, its groups
    that hold none of `students`: a folder a student made in a group she shares with the staff is hers)."""
    uid, groups = os.geteuid(), set(os.getgroups())
    return lambda info: info.st_uid in (uid, 0) or (
        groupshared and info.st_gid in groups and not _students_in_group(info.st_gid, students)[0])


LOGIN_DEFS = "/etc/login.defs"


def open_homes(students) -> list[str]:
    """Each student (an account of this machine) whose home other accounts may read or enter, with
    the chmod that closes it. Students work in ~/lec01_codesign and type their personal
    VARIANT_TOKEN into its notebook; nbgrader's fetch and submit write 0644 files there and in
    ~/.local/share/jupyter/nbgrader_cache/: in a 0755 home (Debian's `useradd -m` default) any
    classmate reads the token and the answers, and computes the student's parameters."""
    found = []
    for student in sorted(set(students)):
        try:
            home = pwd.getpwnam(student).pw_dir
            mode = stat.S_IMODE(os.stat(home).st_mode)
        except (KeyError, OSError):
            continue
        if mode & 0o007:
            found.append(f"the home of {student} ({home}, mode {mode:o}) is open to other accounts: a classmate can "
                         f"read the notebook there (the VARIANT_TOKEN typed into it, the answers) and nbgrader's "
                         f"cache of every submission; close it, as root: chmod 700 {home} ({SETUP_DOC})")
    return found


def home_mode_default(path: str = LOGIN_DEFS) -> str | None:
    """What to change when new accounts' homes are made open to others (HOME_MODE, else UMASK, in
    /etc/login.defs), or None."""
    settings = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                words = line.split()
                if len(words) >= 2 and not words[0].startswith("#"):
                    settings[words[0]] = words[1]
    except OSError:
        return None
    value = settings.get("HOME_MODE")
    try:
        mode = int(value, 8) if value else 0o777 & ~int(settings.get("UMASK", "022"), 8)
    except ValueError:
        return None
    if mode & 0o007:
        return (f"new accounts' homes are made {mode:o} ({'HOME_MODE' if value else 'UMASK, HOME_MODE unset'} in "
                f"{path}): a classmate could read a student's notebook and token; set HOME_MODE 0700 there before "
                f"creating the students' accounts ({SETUP_DOC})")
    return None
