"""`python -m autograder reference <assignment> DEST`: write a full-marks submission to DEST."""

from __future__ import annotations

import sys
from pathlib import Path


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "reference", help="write a complete full-marks submission (produced from solutions/) to DEST",
        description="Write the solved student files and the answered notebook of an assignment to DEST, "
                    "as a student would submit them. Grading DEST's parent folder gives full marks.")
    parser.add_argument("assignment", help="assignment name, e.g. lec01_codesign")
    parser.add_argument("dest", type=Path, help="folder to write the submission into (created if needed)")


def run(args) -> int:
    from autograder.build import write_reference_submission
    from autograder.errors import InstructorError

    try:
        write_reference_submission(args.assignment, args.dest)
    except InstructorError as err:
        print(f"reference: {err}", file=sys.stderr)
        return 2
    print(f"wrote the reference submission of {args.assignment} to {args.dest}")
    return 0
