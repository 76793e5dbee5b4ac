"""`python -m autograder pregrade <assignment> [-j N] [--force]`: grade nbgrader's submitted/ folder
with the trusted grader before `nbgrader autograde`.

The results land in the cache the notebook's check() reads under `nbgrader autograde`
(autograder/nbgrader_bridge/trusted_scores.py), so autograde does not wait for the grader inside
its per-cell timeout, and the class is graded in parallel. Optional: check() grades a submission
on demand when it finds no result for its current files. Same outputs and exit status as `grade`.
"""

from __future__ import annotations

import argparse
import sys

from autograder.commands import grade


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "pregrade", help="grade nbgrader's submitted/ into the cache `nbgrader autograde` reads (run before it)",
        description="Grade every submitted/<student>/<assignment> of the nbgrader course with the trusted grader, "
                    "into the cache the notebook's check() reads under `nbgrader autograde`.")
    parser.add_argument("assignment", help="assignment name, e.g. lec01_codesign")
    grade.add_jobs_option(parser)
    grade.add_isolation_option(parser)
    parser.add_argument("--force", action="store_true", help="regrade students whose cached result is current")


def run(args) -> int:
    from autograder.engine.registry import REPO_ROOT
    from autograder.errors import InstructorError
    from autograder.nbgrader_bridge.course import load_course
    from autograder.nbgrader_bridge.trusted_scores import cache_folder

    if grade.isolation_refused("pregrade", args.isolation):
        return 2
    try:
        course = load_course(REPO_ROOT)
    except InstructorError as err:
        print(f"pregrade: {err}", file=sys.stderr)
        return 2
    return grade.run(argparse.Namespace(
        assignment=args.assignment, submissions=course.submitted_folder,
        out=cache_folder(course, args.assignment), jobs=args.jobs, force=args.force, isolation=args.isolation))
