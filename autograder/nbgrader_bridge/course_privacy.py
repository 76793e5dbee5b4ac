"""Whether the course folder is closed to the students' accounts before release, collect,
zip_collect and pregrade.

The course folder holds solutions/, the hidden tests (autograder/), the gradebook and, once
collected, every student's submitted/, autograded/, feedback/ and pinned results; nbgrader and the
kit write them as the instructor's umask says (0755 and 0644). Where every folder on the way to it
lets other accounts in (a course in /srv, a home left 0755), or lets in a group that holds students
(a home 0750 whose group is `users`, every account's login group on some systems), a student reads
them by their path, the solutions and classmates' submission secrets included. The exchange's own
docs say nothing of where the course lives, so the commands that write students' work into it look
for themselves and stop until it is closed.
"""

from __future__ import annotations

from pathlib import Path

from autograder.engine.others_access import group_reachers, open_to_others
from autograder.engine.roster import roster_or_empty

SETUP_DOC = "docs/exchange.md"
NAMED = 5     # accounts a message names; the rest are counted


def open_course(root: str | Path, *, staff_group: bool = False) -> str | None:
    """Why the course folder at `root` cannot hold a class's work (others can reach it), or None.
    `staff_group` (nbgrader's CourseDirectory.groupshared): the course's group is its staff's on
    purpose, and only the roster's students in it count; otherwise (or with no roster) any other
    account in it does."""
    if open_to_others(Path(root)):
        return (f"the course folder {root} can be entered by other accounts of this machine: a student could read "
                f"solutions/, the hidden tests in autograder/ and every classmate's submitted/, autograded/ and "
                f"feedback/ by their paths. Close it: chmod 700 {root} (or a folder above it) ({SETUP_DOC})")
    reachers, gated = group_reachers(Path(root))
    roster = set(roster_or_empty(Path(root))) if staff_group else set()
    if roster:          # with no roster nothing tells the staff's group from one of students: all count
        reachers &= roster
    if not reachers:
        return None
    names = sorted(reachers)
    shown = ", ".join(names[:NAMED]) + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")
    folders = "; ".join(f"{step} lets group {group} in" for step, group in gated)
    who = "roster students" if roster else "accounts other than this one and root"
    return (f"the course folder {root} can be entered through a group by {who}: {shown} ({folders}). They could "
            f"read solutions/, the hidden tests and every classmate's submitted/ by their paths. Close it: "
            f"chmod g-rwx {gated[-1][0]} (or chmod 700 on a folder above the course), or take those accounts out "
            f"of the group; a group of the course's staff only is kept with c.CourseDirectory.groupshared = True "
            f"(then only the roster's students in it count) ({SETUP_DOC})")

