"""`python -m autograder nbgrader-scores <assignment> --autograded FOLDER`: the trusted scores the
notebook's check() returns under `nbgrader autograde` (JSON on stdout).

FOLDER is the autograded folder nbgrader runs the student's kernel in
(autograded/<student>/<assignment>); the student's *submitted* files are graded, once per content.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "nbgrader-scores", help="(used by the notebook's check() under nbgrader autograde) trusted scores as JSON",
        description="Grade the submission whose nbgrader autograded folder is FOLDER with the trusted grader "
                    "(cached per content) and print every item's score and feedback as JSON.")
    parser.add_argument("assignment", help="assignment name, e.g. lec01_codesign")
    parser.add_argument("--autograded", type=Path, required=True, metavar="FOLDER",
                        help="the autograded/<student>/<assignment> folder the kernel runs in")


def run(args) -> int:
    from autograder.engine.registry import REPO_ROOT
    from autograder.errors import InstructorError
    from autograder.nbgrader_bridge.course import load_course
    from autograder.nbgrader_bridge.trusted_scores import kernel_reply, trusted_result
    from autograder.commands.grade import isolation_refused
    from autograder.sandbox import isolation_from_env

    try:
        if isolation_refused("nbgrader-scores", isolation_from_env()):  # fails closed first
            return 2
        course = load_course(REPO_ROOT)
        student = course.student_of_autograded(args.autograded, args.assignment)
        result = trusted_result(course, args.assignment, student)
    except InstructorError as err:
        print(f"nbgrader-scores: {err}", file=sys.stderr)
        return 2
    print(json.dumps(kernel_reply(result), ensure_ascii=False))
    return 0
