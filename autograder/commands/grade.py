"""`python -m autograder grade <assignment> SUBMISSIONS --out OUT [-j N] [--force]`.

Grades every student folder in SUBMISSIONS with the trusted grader and writes OUT/grades.csv,
OUT/feedback/<student>.md and OUT/results/<student>.json (Gradescope format). Exit status 0 when
grading completed, whatever the scores; 2 for a usage or configuration error, or when the
requested isolation cannot be had here (no working bubblewrap: one line says how to install it);
1 when the grader itself failed on some student (nothing is written for them; a re-run retries them).
"""

from __future__ import annotations

import sys
from pathlib import Path

from autograder.commands import (add_assignment_argument, add_batch_options, add_isolation_option,  # noqa: F401
                                 add_jobs_option, add_scheduler_option, isolation_refused, positive_int, refused,
                                 report_batch)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "grade", help="grade a folder of submissions: grades.csv, feedback/, results/ (Gradescope JSON)",
        description="Grade every student folder in SUBMISSIONS (files directly in SUBMISSIONS/<student>/, or "
                    "nbgrader's SUBMISSIONS/<student>/<assignment>/) in a sandbox, against the hidden tests. "
                    "Students already graded with unchanged files are skipped unless --force.")
    add_assignment_argument(parser)
    parser.add_argument("submissions", type=Path, help="folder with one subfolder per student")
    parser.add_argument("--out", type=Path, required=True, help="output folder (created if needed)")
    add_batch_options(parser, force_help="regrade students that are already graded")
    parser.add_argument("--due", metavar="TIME",
                        help="due date for the late policy of grading.toml, ISO 8601 with its offset "
                             "(e.g. 2030-01-31T23:59:00+08:00); default: the one recorded in nbgrader's "
                             "gradebook.db, if any")
    parser.add_argument("--student-ids", type=Path, metavar="FILE",
                        help="JSON {folder: {\"id\": student id, \"source\": where it came from}} for folders not "
                             "named after their student (the Gradescope runner writes one); decides the "
                             "variant of an assignment with per-student variants")


def read_student_ids(path: Path | None) -> dict[str, tuple[str, str]]:
    """--student-ids: folder -> (student id, source); a clear error for anything else."""
    import json

    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"--student-ids {path}: not a readable JSON file ({err})") from None
    if not isinstance(data, dict) or not all(
            isinstance(v, dict) and isinstance(v.get("id"), str) and isinstance(v.get("source"), str)
            for v in data.values()):
        raise ValueError(f'--student-ids {path}: expected {{"<folder>": {{"id": "...", "source": "..."}}}}')
    return {folder: (v["id"], v["source"]) for folder, v in data.items()}


def _into_delegated_scope() -> None:
    """A non-root instructor on cgroup v2 gets per-sandbox quotas from a delegated systemd scope:
    run as `python -m autograder grade …`, the grader starts itself again inside one (once)."""
    import os

    from autograder.sandbox.cgroup_scope import SCOPE_ENV, delegated_scope_argv

    if not (sys.argv[0].endswith(os.path.join("autograder", "__main__.py")) and sys.argv[1:2] == ["grade"]):
        return   # called in-process: the command line is not ours to repeat
    command = delegated_scope_argv([sys.executable, "-m", "autograder", *sys.argv[1:]])
    if command is not None:
        print("grade: running in a delegated systemd scope for per-sandbox cgroup quotas", file=sys.stderr)
        sys.stderr.flush()
        sys.stdout.flush()
        os.environ[SCOPE_ENV] = "1"
        os.execv(command[0], command)


def run(args) -> int:
    from autograder.api.grading import Refused, check_isolation, check_placement, grade
    from autograder.views.console_view import BatchProgress
    from autograder.engine.lateness import parse_time

    try:
        check_placement(args.jobs, args.scheduler)
        if args.scheduler is None:
            check_isolation(args.isolation)
    except Refused as err:
        return refused("grade", err)
    _into_delegated_scope()
    try:
        due = parse_time(args.due, "--due") if args.due else None
        ids = read_student_ids(args.student_ids)
        with BatchProgress() as progress:
            report = grade(assignment=args.assignment, submissions=args.submissions, out=args.out, jobs=args.jobs,
                           force=args.force, isolation=args.isolation, scheduler=args.scheduler, due=due,
                           student_ids=ids, on_start=progress.on_start, on_result=progress.on_result)
    except (Refused, ValueError) as err:
        return refused("grade", err)
    return report_batch("grade", report, args.out)
