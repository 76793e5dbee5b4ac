"""`python -m autograder pregrade <assignment> [-j N] [--force]`: pin the trusted grader's results for
what nbgrader collected, before `nbgrader autograde` (which requires them).

Hashes every submitted/<student>/<assignment>/ (the snapshot), grades those files with the trusted
grader into the course's pinned store (.pinned_results/<assignment>/, see
autograder/nbgrader_bridge/pinned.py: each result and the executed notebook of the grader's one run
of the student's notebook, whose outputs autograde shows instead of running it) and writes the
manifest that ties each result to the files it graded. A student whose files and grading.toml are unchanged keeps their result unless
--force. Run it again after collecting more submissions. Exit status as `grade`.
"""

from __future__ import annotations

import argparse
import sys

from autograder.commands import grade


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "pregrade", help="pin the trusted grader's results for nbgrader's submitted/ (required before autograde)",
        description="Snapshot every submitted/<student>/<assignment> of the nbgrader course, grade it with the "
                    "trusted grader and pin the results; `nbgrader autograde` writes these scores into the gradebook.")
    parser.add_argument("assignment", help="assignment name, e.g. lec01_codesign")
    grade.add_jobs_option(parser)
    from autograder.sandbox import confinement

    parser.add_argument("--isolation", choices=confinement.CHOICES, default=None,
                        help="how student code is isolated (default: CS349E_ISOLATION, else bubblewrap; without a "
                             "working bwrap pregrade refuses with exit status 2)")
    parser.add_argument("--force", action="store_true", help="regrade students whose pinned result is current")
    grade.add_scheduler_option(parser)


def run(args) -> int:
    from autograder.engine.registry import REPO_ROOT, ConfigError
    from autograder.nbgrader_bridge.course import CourseError, load_course
    from autograder.nbgrader_bridge.pinned import (drop_results_without_executed, pinned_folder, snapshot_class,
                                                   write_manifest)
    from autograder.sandbox import SandboxUnavailable, isolation_from_env

    try:  # fails closed first
        isolation = args.isolation or isolation_from_env()
    except SandboxUnavailable as err:
        print(f"pregrade: {err}", file=sys.stderr)
        return 2
    if grade.scheduler_refused("pregrade", args) or (
            args.scheduler is None and grade.isolation_refused("pregrade", isolation)):
        return 2
    try:
        course = load_course(REPO_ROOT)
        if not course.submitted_folder.is_dir():
            raise CourseError(f"{course.submitted_folder} does not exist: collect the submissions first")
        snapshots = snapshot_class(course, args.assignment)  # before anything of the students' runs
        drop_results_without_executed(course, args.assignment)  # a store of an older grader: grade again
    except (CourseError, ConfigError) as err:
        print(f"pregrade: {err}", file=sys.stderr)
        return 2
    status = grade.run(argparse.Namespace(
        assignment=args.assignment, submissions=course.submitted_folder,
        out=pinned_folder(course, args.assignment), jobs=args.jobs, force=args.force,
        isolation=isolation, scheduler=args.scheduler, figures=True))   # its figures reach the feedback pages
    if status == 2:
        return status
    unpinned = write_manifest(course, args.assignment, snapshots)
    for student, reason in sorted(unpinned.items()):
        print(f"pregrade: {student} not pinned: {reason}", file=sys.stderr)
    print(f"pregrade {args.assignment}: {len(snapshots) - len(unpinned)} of {len(snapshots)} student(s) pinned "
          f"in {pinned_folder(course, args.assignment)}", file=sys.stderr)
    return 1 if unpinned else status
