"""Whether the course folder is closed to the students' accounts before release and collect.

The course folder holds solutions/, the hidden tests (autograder/), the gradebook and, once
collected, every student's submitted/, autograded/, feedback/ and pinned results; nbgrader and the
kit write them as the instructor's umask says (0755 and 0644). Where every folder on the way to it
lets other accounts in (a course in /srv, a home left 0755), a student reads them by their path,
the solutions and classmates' submission secrets included. The exchange's own docs say nothing of
where the course lives, so release and collect look for themselves and stop until it is closed.
"""

from __future__ import annotations

from pathlib import Path

from autograder.engine.others_access import open_to_others

SETUP_DOC = "docs/exchange.md"


def open_course(root: str | Path) -> str | None:
    """Why the course folder at `root` cannot hold a class's work (others can reach it), or None."""
    if not open_to_others(Path(root)):
        return None
    return (f"the course folder {root} can be entered by other accounts of this machine: a student could read "
            f"solutions/, the hidden tests in autograder/ and every classmate's submitted/, autograded/ and "
            f"feedback/ by their paths. Close it: chmod 700 {root} (or a folder above it) ({SETUP_DOC})")
