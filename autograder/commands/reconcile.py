"""`python -m autograder reconcile <assignment> [-j N] [--out DIR]`: nbgrader's gradebook vs the trusted grader.

Regrades every submitted/<student>/<assignment> from scratch (never from the cache the kernels'
check() fill: a kernel can write there) and prints one line per student whose automatic scores
differ from nbgrader's. Exit 0: all agree; 1: some differ; 2: usage or configuration error.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from autograder.commands import grade


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "reconcile", help="compare nbgrader's gradebook with the trusted grader; one line per student that differs",
        description="Regrade every nbgrader submission with the trusted grader and compare its automatic item "
                    "scores with nbgrader's gradebook. A student who rewrote check() in their kernel shows up here.")
    parser.add_argument("assignment", help="assignment name, e.g. lec01_codesign")
    grade.add_jobs_option(parser)
    grade.add_isolation_option(parser)
    parser.add_argument("--out", type=Path, help="keep the trusted grader's outputs here (default: a temporary folder)")


def run(args) -> int:
    from autograder.engine.batch import grade_batch
    from autograder.engine.registry import REPO_ROOT, load_config
    from autograder.errors import InstructorError
    from autograder.nbgrader_bridge.course import load_course
    from autograder.nbgrader_bridge.gradebook import cell_scores
    from autograder.nbgrader_bridge.reconcile import disagreements

    if grade.isolation_refused("reconcile", args.isolation):
        return 2
    try:
        config = load_config(args.assignment)
        course = load_course(REPO_ROOT)
        nbgrader = cell_scores(course, args.assignment)
        submitted = course.submitted_folder
        with tempfile.TemporaryDirectory(prefix="cs349e-reconcile-") as scratch:
            out = args.out or Path(scratch)
            report = grade_batch(args.assignment, submitted, out, jobs=args.jobs, force=True,
                                 isolation=args.isolation) \
                if submitted.is_dir() else None
    except InstructorError as err:
        print(f"reconcile: {err}", file=sys.stderr)
        return 2

    graded = set(report.graded) if report else set()  # --out may hold results of earlier runs
    trusted = {result.student: result for result in report.results if result.student in graded} if report else {}
    failed = dict(report.failed) if report else {}
    auto_items = [item.id for item in config.items if item.kind != "text"]
    comparable = {student: cells for student, cells in nbgrader.items() if student not in failed}
    lines = [d.line() for d in disagreements(comparable, trusted, auto_items)]
    lines += [f"{student}: the trusted grader failed: {_last_line(error)}" for student, error in failed.items()]
    for line in sorted(lines):
        print(line)
    students = len(set(nbgrader) | set(trusted) | set(failed))
    print(f"reconcile {args.assignment}: {len(lines)} of {students} student(s) differ", file=sys.stderr)
    return 1 if lines else 0


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else "unknown error"
