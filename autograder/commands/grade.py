"""`python -m autograder grade <assignment> SUBMISSIONS --out OUT [-j N] [--force]`.

Grades every student folder in SUBMISSIONS with the trusted grader and writes OUT/grades.csv,
OUT/feedback/<student>.md and OUT/results/<student>.json (Gradescope format). Exit status 0 when
grading completed, whatever the scores; 2 for a usage or configuration error, or when the
requested isolation cannot be had here (no working bubblewrap: one line says how to install it);
1 when the grader itself failed on some student (nothing is written for them; a re-run retries them).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def positive_int(flag: str):
    """An argparse type for `flag`: a whole number ≥ 1, else a one-line error naming the flag."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} needs a whole number, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{flag} needs at least 1, got {value}")
        return value
    return parse


def add_jobs_option(parser: argparse.ArgumentParser) -> None:
    """`-j N`, shared by every verb that grades a batch."""
    parser.add_argument("-j", "--jobs", type=positive_int("-j"), default=1, help="grade N submissions in parallel (default 1)")


def add_isolation_option(parser: argparse.ArgumentParser) -> None:
    """`--isolation`, shared by every verb that grades: bubblewrap or an explicit refusal, unless lowered."""
    from autograder.sandbox import confinement

    parser.add_argument("--isolation", choices=confinement.CHOICES, default=confinement.DEFAULT.name,
                        help="how student code is isolated (default bubblewrap: without a working bwrap the verb "
                             "refuses with exit status 2; rlimits: explicitly lowered, and only where the grader "
                             "can still keep solutions/ and the hidden tests private, else refused too)")


def add_scheduler_option(parser: argparse.ArgumentParser) -> None:
    """`--scheduler ADDRESS`, shared by every verb that grades a batch (autograder/cluster/)."""
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="grade on the workers of this dask.distributed scheduler (e.g. tcp://head:8786; "
                             "needs pip install '.[cluster]'); every worker must run this kit and isolate student "
                             "code, else refused with exit status 2; outputs are written here as by a local run")


def scheduler_refused(verb: str, args) -> bool:
    """-j sizes local workers; on a cluster its workers do: one line and True when both are given."""
    if getattr(args, "scheduler", None) and args.jobs > 1:
        print(f"{verb}: -j and --scheduler do not combine: the cluster's workers set how many submissions "
              f"are graded at once", file=sys.stderr)
        return True
    return False


def isolation_refused(verb: str, isolation: str) -> bool:
    """Fail closed before any other work: prints one line (why, and how to install bubblewrap or
    lower isolation) and returns True when `isolation` cannot be had on this machine."""
    from autograder.sandbox import SandboxUnavailable, confinement

    try:
        confinement.choose(isolation)
    except SandboxUnavailable as err:
        print(f"{verb}: {err}", file=sys.stderr)
        return True
    return False


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "grade", help="grade a folder of submissions: grades.csv, feedback/, results/ (Gradescope JSON)",
        description="Grade every student folder in SUBMISSIONS (files directly in SUBMISSIONS/<student>/, or "
                    "nbgrader's SUBMISSIONS/<student>/<assignment>/) in a sandbox, against the hidden tests. "
                    "Students already graded with unchanged files are skipped unless --force.")
    parser.add_argument("assignment", help="assignment name, e.g. lec01_codesign")
    parser.add_argument("submissions", type=Path, help="folder with one subfolder per student")
    parser.add_argument("--out", type=Path, required=True, help="output folder (created if needed)")
    add_jobs_option(parser)
    parser.add_argument("--force", action="store_true", help="regrade students that are already graded")
    add_isolation_option(parser)
    add_scheduler_option(parser)
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


def due_date(assignment: str, given: str | None):
    """--due, else the due date in the course's nbgrader gradebook (repository root), else None."""
    from autograder.engine.lateness import gradebook_due_date, parse_time
    from autograder.engine.registry import ASSIGNMENTS_DIR

    if given:
        return parse_time(given, "--due")
    return gradebook_due_date(ASSIGNMENTS_DIR.parent, assignment)


def _into_delegated_scope() -> None:
    """A non-root instructor on cgroup v2 gets per-sandbox quotas from a delegated systemd scope:
    run as `python -m autograder grade …`, the grader starts itself again inside one (once)."""
    import os

    from autograder.sandbox.cgroups import SCOPE_ENV, delegated_scope_argv

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
    from autograder.engine.batch import grade_batch
    from autograder.engine.console_view import BatchProgress, print_summary
    from autograder.errors import InstructorError

    scheduler = getattr(args, "scheduler", None)
    if scheduler_refused("grade", args) or (scheduler is None and isolation_refused("grade", args.isolation)):
        return 2
    _into_delegated_scope()
    if not args.submissions.is_dir():
        print(f"grade: submissions folder {args.submissions} does not exist", file=sys.stderr)
        return 2
    try:
        due = due_date(args.assignment, getattr(args, "due", None))
        ids = read_student_ids(getattr(args, "student_ids", None))
        with BatchProgress() as progress:
            report = grade_batch(args.assignment, args.submissions, args.out, jobs=args.jobs, force=args.force,
                                 isolation=args.isolation, on_start=progress.on_start,
                                 on_result=progress.on_result, due=due, scheduler=scheduler, student_ids=ids,
                                 figures=getattr(args, "figures", False))
    except (InstructorError, ValueError) as err:
        print(f"grade: {err}", file=sys.stderr)
        return 2
    print_summary(report, args.out)
    if report.failed:
        print(f"grade: the grader failed on {len(report.failed)} student(s): "
              f"{', '.join(s for s, _ in report.failed)}; re-run to retry them", file=sys.stderr)
        return 1
    return 0
