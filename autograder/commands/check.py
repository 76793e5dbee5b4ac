"""`python -m autograder check <name> [--frozen]`: build an assignment and prove it grades, releases
its solutions and bundles for Gradescope.

Exit 0 when every step passes, 1 when some step found a problem (each is printed with where to
fix it), 2 for a configuration or isolation error that stops the check before it starts.
"""

from __future__ import annotations

import sys

from autograder.commands import add_isolation_option, isolation_refused


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "check", help="build an assignment, grade its reference (full marks) and skeleton (0), check for leaks",
        description="Build the assignment's student files, load its hidden tests and answer key, check the "
                    "student folder for leaks, run the public examples and grade the reference (it must earn "
                    "every automatic point) and the released skeleton (it must earn nothing for functions), "
                    "then write the released solutions (running their demo) and the Gradescope bundle into a "
                    "scratch folder.")
    parser.add_argument("assignment", help="assignment name, e.g. lec01_codesign")
    parser.add_argument("--frozen", action="store_true",
                        help="write nothing: report generated files that differ from the build (for CI)")
    add_isolation_option(parser)
    parser.add_argument("--variants", type=int, metavar="N", default=None,
                        help="with per-student variants: how many variants to sample (the lecture's first; "
                             "default 16; the reference is graded in the first 3)")
    parser.add_argument("--lesson-variants", type=int, metavar="N", default=None,
                        help="with per-student variants and solutions/<name>/lessons.py: how many variants the "
                             "lessons and choice margins are checked in (default 1000)")


def run(args) -> int:
    from autograder.api.author_check import check_assignment, step_lines
    from autograder.engine.registry import load_config
    from autograder.errors import InstructorError

    if isolation_refused("check", args.isolation):  # fails closed, like every verb that grades
        return 2
    try:
        load_config(args.assignment)
    except InstructorError as err:
        print(f"check: {err}", file=sys.stderr)
        return 2
    print(f"check {args.assignment}", flush=True)
    for option, value in (("--variants", args.variants), ("--lesson-variants", args.lesson_variants)):
        if value is not None and value < 1:
            print(f"check: {option} must be at least 1", file=sys.stderr)
            return 2
    report = check_assignment(args.assignment, frozen=args.frozen, isolation=args.isolation, variants=args.variants,
                              lesson_variants=args.lesson_variants,
                              on_step=lambda step: print("\n".join(step_lines(step)), flush=True))
    print(report.verdict())
    return 0 if report.ok else 1
