"""What an exchange folder must be before the kit's release, collect or reconcile trust it.

nbgrader's exchange is a folder every account can write to. Without the sticky bit (mode 0777, as
nbgrader documents it) any student may rename the course's folder there (`cs349e/`) away and put
her own in its place: classmates then fetch her files (her `hw_specs.py` runs as each of them) and
hand in into her folder. With the sticky bit (1777, as /tmp) only the folder's owner may rename or
remove it. So the exchange root, and every folder above it, must be the instructor's or root's and sticky
wherever other accounts can write to it (the owner of a folder renames anything in it, sticky or
not), and the course's folder, its outbound/, inbound/ and feedback/ must be the instructor's (or root's),
never a link. Before the first release any account may make the course's folder: the set-up makes
it the instructor's at once (docs/exchange.md).
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


def root_problems(root: str | os.PathLike, ours, students=()) -> list[str]:
    """Why the exchange root cannot be trusted, or []: the root and every folder above it must be
    owned as `ours(stat_result)` allows (root, the instructor), and sticky wherever others may write
    to it. The owner of a folder may rename or remove anything in it, sticky or not: an exchange a
    student made first (in a folder every account creates in, as /tmp) is hers, course folder and all;
    a folder above it that others may write to without the sticky bit lets anyone rename the
    exchange away and put her own in its place."""
    path = Path(os.path.abspath(root))
    if not os.path.isdir(path):
        return []                           # missing: the commands say so themselves
    real = Path(os.path.realpath(path))
    # the path as named (a link on it is its owner's to change) and as it resolves
    on_the_way = dict.fromkeys([path, *path.parents, real, *real.parents])
    problems = []
    for folder in on_the_way:
        try:
            info = os.lstat(folder)
        except OSError as exc:
            problems.append(f"{folder}, on the way to the exchange, cannot be read ({exc.strerror})")
            break
        mode = stat.S_IMODE(info.st_mode)
        if stat.S_ISLNK(info.st_mode):
            mode = 0                        # a link's mode decides nothing, its owner may repoint it
        if not ours(info):
            where = f"the exchange folder {folder}" if folder == path else f"the folder {folder} above the exchange {path}"
            problems.append(f"{where} is owned by {_owner(info.st_uid)}, not the instructor or root: its owner "
                            f"can rename or remove anything in it, sticky or not (the course's folder included: "
                            f"classmates would fetch her files and hand in into her folder). As root: "
                            f"{f'rm -r {folder} ; mkdir -m 1777 {folder}' if folder == path else f'chown root {folder}'}"
                            f" ; then release again ({SETUP_DOC})")
            break
        # above the exchange a folder writable by a group of the staff is theirs (Debian's /usr/local was
        # 2775 root:staff); one writable by a group holding roster students (with no roster, any
        # account but ours) is as open as to all
        open_group = mode & stat.S_IWGRP and (folder == path or _students_in_group(info.st_gid, students)[0])
        if (mode & stat.S_IWOTH or open_group) and not mode & stat.S_ISVTX:
            where = f"the exchange folder {folder}" if folder == path else f"the folder {folder} above the exchange {path}"
            problems.append(f"{where} is writable by other accounts (mode {mode:o}) without the sticky bit: "
                            f"any student can rename {'the course' if folder == path else 'the exchange'}'s folder "
                            f"there away and put her own in its place (classmates then fetch her files and hand in "
                            f"into her folder). Make it sticky, as root: chmod {'1777' if folder == path else '+t'} "
                            f"{folder} ; then check the course's folder there is the instructor's ({SETUP_DOC})")
            break
    return problems


def _students_in_group(gid: int, students) -> tuple[list[str], str]:
    """(the accounts of group `gid` that may be students, sorted; the group's name): the roster's
    `students` in it; with no roster, every member but root and this account, since nothing then
    tells a group of the staff from one of students (`users`)."""
    from autograder.engine.others_access import group_members

    members, name = group_members(gid)
    if not students:
        return sorted(members - {"root", _owner(os.geteuid())}), name
    return sorted(members & set(students)), name


def _who(students) -> str:
    return "roster students" if students else "accounts other than the instructor's (no course roster, roster.txt, tells students from staff)"


def foreign_course_folders(root: str | os.PathLike, course_id: str, ours, students=()) -> list[str]:
    """The course's folders in the exchange (the course folder, outbound/, inbound/, feedback/) that are a link,
    not owned as `ours(stat_result)` allows, or writable by a group holding any of `students` (the
    roster), each with what to do."""
    problems = []
    course = Path(root) / course_id
    for path in (course, course / "outbound", course / "inbound", course / "feedback"):
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"{path} cannot be read ({exc.strerror})")
            continue
        if stat.S_ISLNK(info.st_mode) or not ours(info):
            what = "a link" if stat.S_ISLNK(info.st_mode) else f"owned by {_owner(info.st_uid)}"
            problems.append(f"{path} is {what}, not the instructor's or root's: someone made or replaced the "
                            f"course's exchange folder (her files would be fetched, submissions handed into her "
                            f"folder). Remove it, as root: rm -r {course} ; at once, as the instructor, claim it "
                            f"before anyone makes it again: mkdir -m 755 {course} ; then release again. Students "
                            f"who fetched or submitted while it was there may hold her files or have handed in to "
                            f"her (their fetch and submit are nbgrader's own and check nothing): ask every student "
                            f"to save their work, fetch again and submit again ({SETUP_DOC})")
            break
        # nbgrader's release under groupshared makes these 2775 in the instructor's login group: where
        # that group holds students (`users`), any of them could rename inbound/ or outbound/ away and
        # make her own (classmates hand in to her, or fetch her files). inbound/ is writable by everyone
        # on purpose (sticky: no one renames another's entry), whatever its group.
        writable = info.st_mode & stat.S_IWGRP and path != course / "inbound"
        who, group = _students_in_group(info.st_gid, students) if writable else ([], "")
        if who:
            problems.append(f"{path} is writable by group {group}, which holds {_who(students)}: {', '.join(who[:5])}"
                            f"{f' and {len(who) - 5} more' if len(who) > 5 else ''}: any of them could put her own "
                            f"inbound/ or outbound/ there (classmates would hand in to her, or fetch her files). As "
                            f"root: chgrp -R to a group of the course's staff only (or chmod -R g-w {course}), and "
                            f"remove what a student made there ({SETUP_DOC})")
            break
        if path != course / "inbound" and info.st_mode & stat.S_IWOTH:
            problems.append(_open_to_all(path, info, course))
            break
        # nbgrader submit leaves each folder 0777 with 0644 files, hidden only by its name: an inbound/
        # that students can list shows them every classmate's folder to read or empty
        listed_by = (["every account"] if info.st_mode & stat.S_IROTH else
                     _students_in_group(info.st_gid, students)[0] if info.st_mode & stat.S_IRGRP else [])
        if path.name in ("inbound", "feedback") and path != course and listed_by:
            what = ("each student's folder there is 0777 with 0644 files, hidden only by its name; a student who "
                    "lists it reads (or empties) every classmate's submission" if path.name == "inbound" else
                    "each student's page there is readable by all, hidden only by its name; a student who lists it "
                    "reads every classmate's feedback")
            problems.append(f"{path} can be listed by {', '.join(listed_by[:5])} (mode {stat.S_IMODE(info.st_mode):o}): "
                            f"{what}. As the instructor: chmod o-r {path} (and chmod g-r where its group holds "
                            f"students; nbgrader makes inbound/ 2733, the kit 3733, and feedback/ 0711) ({SETUP_DOC})")
            break
    else:
        problems += _released_open_to_all(course / "outbound", ours, course)
    return problems


MOST_RELEASED = 20_000   # entries of outbound/ looked at (a release is a few files per assignment)


def _open_to_all(path: Path, info: os.stat_result, course: Path) -> str:
    return (f"{path} is writable by every account (mode {stat.S_IMODE(info.st_mode):o}): any student could rename "
            f"or replace what is in it (put her own outbound/ or inbound/ in their place, or her own hw_specs.py in "
            f"the release: classmates would fetch and run it, or hand in to her). As the instructor: chmod o-w {path} "
            f"(all at once: chmod -R o-w {course}/outbound {course}/feedback ; chmod o-w {course} ; inbound/ alone "
            f"stays writable by everyone, sticky), then look at what is there and release again ({SETUP_DOC})")


def _released_open_to_all(outbound: Path, ours, course: Path) -> list[str]:
    """The first file or folder of the release (outbound/, not through a link) that every account may
    write to, or that another account owns."""
    seen = 0
    for folder, dirs, files in os.walk(outbound):
        for name in (*dirs, *files):
            seen += 1
            if seen > MOST_RELEASED:
                return []
            path = Path(folder) / name
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode) or not ours(info):
                what = "a link" if stat.S_ISLNK(info.st_mode) else f"owned by {_owner(info.st_uid)}"
                return [f"{path}, in the release, is {what}, not the instructor's or root's: classmates would fetch "
                        f"it. Remove it and release again (nbgrader release_assignment --force) ({SETUP_DOC})"]
            if info.st_mode & stat.S_IWOTH:
                return [_open_to_all(path, info, course)]
    return []


def exchange_problems(root: str | os.PathLike, course_id: str, ours, students=()) -> list[str]:
    """Everything wrong with the exchange for this course (empty when it is sound or absent)."""
    return root_problems(root, ours, students) + (foreign_course_folders(root, course_id, ours, students)
                                                  if course_id else [])


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


FUSE_CONF = "/etc/fuse.conf"


def fuse_lets_students_in(path: str = FUSE_CONF) -> str | None:
    """What to change when /etc/fuse.conf lets a user's FUSE mount be entered by other accounts
    (`user_allow_other`): a student's mount in her inbound folder then answers collect as she likes,
    or never; collect refuses what is on another filesystem, but a read it waits on stops it."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            allowed = any(line.split("#", 1)[0].strip() == "user_allow_other" for line in handle)
    except OSError:
        return None
    if allowed:
        return (f"{path} sets user_allow_other: a student's FUSE mount in the exchange can be entered by collect and "
                f"answer (or hold) its reads; remove that line, as root ({SETUP_DOC})")
    return None


def logins_the_exchange_cannot_name(students) -> str | None:
    """What to do about roster logins nbgrader's exchange never collects: it names a submission's
    folder `<student>+<assignment>+<time>+<random>` and reads the student back as the part before
    the first `+`, so a login holding one (useradd accepts it) hands in to a folder collect reads as
    someone else's, with no word from nbgrader."""
    named = sorted(s for s in students if "+" in s)
    if not named:
        return None
    return (f"nbgrader's exchange cannot collect {', '.join(named[:5])}{' and others' if len(named) > 5 else ''}: a "
            f"login holding '+' is cut at it when collect reads a submission's folder name. Give them logins "
            f"without '+' (and roster.txt those), or collect their work another way ({SETUP_DOC})")
