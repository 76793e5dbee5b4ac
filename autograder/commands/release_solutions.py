"""`python -m autograder release-solutions <assignment> [--force] [--out DIR]`: the student-facing
solutions bundle, refused before the due date recorded in nbgrader's gradebook (or without one), and
while late work can still earn points (release_gate.py), a student's extension included.

Exit 0: written; 1: refused (the reason is printed); 2: configuration error.
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

DEFAULT_FOLDER = "released_solutions"


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "release-solutions", help="write the solutions bundle for students (only once late work earns nothing)",
        description="Write the solved student files, the answered notebook with an explanation per question and "
                    "the lecture demo for students. Refused before the assignment's due date in nbgrader's "
                    "gradebook, or when none is recorded, and while the late policy still gives late work "
                    "points (until its accept_days), unless --force.")
    parser.add_argument("assignment", help="assignment name, e.g. lec01_codesign")
    parser.add_argument("--force", action="store_true", help="release even before the due date, without one, or while late work still earns points")
    parser.add_argument("--out", type=Path,
                        help=f"where to write the bundle (default: {DEFAULT_FOLDER}/<assignment>/ in the course root); "
                             "an earlier bundle there is replaced whole, anything else is refused")


def run(args) -> int:
    from autograder.engine.lateness import load_policy
    from autograder.engine.registry import REPO_ROOT, load_config
    from autograder.errors import InstructorError
    from autograder.nbgrader_bridge.course import load_course
    from autograder.nbgrader_bridge.gradebook import due_date, student_due_dates
    from autograder.nbgrader_bridge.release_gate import refusal
    from autograder.nbgrader_bridge.solutions_bundle import write_solutions_bundle

    try:
        policy = load_policy(load_config(args.assignment))
        course = load_course(REPO_ROOT)
    except InstructorError as err:
        print(f"release-solutions: {err}", file=sys.stderr)
        return 2
    try:
        due = due_date(course, args.assignment)
        reason = refusal(due, datetime.now(timezone.utc), policy, student_due_dates(course, args.assignment, due))
    except InstructorError as err:
        reason = str(err)
    if reason and not args.force:
        print(f"release-solutions: refused: {reason} (--force releases anyway)", file=sys.stderr)
        return 1
    if reason:
        print(f"release-solutions: releasing anyway (--force): {reason}", file=sys.stderr)

    dest = args.out or course.root / DEFAULT_FOLDER / args.assignment
    try:
        written = write_solutions_bundle(args.assignment, dest)
    except InstructorError as err:
        print(f"release-solutions: {err}", file=sys.stderr)
        return 2
    print(f"wrote the solutions of {args.assignment} to {dest} ({len(written)} files)")
    return 0
