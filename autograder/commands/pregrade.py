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

import sys

from autograder.commands import add_assignment_argument, add_batch_options, refused, report_batch


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "pregrade", help="pin the trusted grader's results for nbgrader's submitted/ (required before autograde)",
        description="Snapshot every submitted/<student>/<assignment> of the nbgrader course, grade it with the "
                    "trusted grader and pin the results; `nbgrader autograde` writes these scores into the gradebook.")
    add_assignment_argument(parser)
    add_batch_options(parser, force_help="regrade students whose pinned result is current", isolation_from_env=True)


def run(args) -> int:
    from autograder.api.grading import Refused, pregrade
    from autograder.engine.outputs import show_controls
    from autograder.views.console_view import BatchProgress

    try:
        with BatchProgress() as progress:
            done = pregrade(assignment=args.assignment, jobs=args.jobs, force=args.force, isolation=args.isolation,
                            scheduler=args.scheduler, on_start=progress.on_start, on_result=progress.on_result)
    except Refused as err:
        return refused("pregrade", err)
    status = report_batch("grade", done.report, done.out)
    for student, reason in sorted(done.unpinned.items()):
        print(show_controls(f"pregrade: {student} not pinned: {reason}"), file=sys.stderr)
    print(f"pregrade {args.assignment}: {done.students - len(done.unpinned)} of {done.students} student(s) pinned "
          f"in {done.out}", file=sys.stderr)
    return 1 if done.unpinned else status
