"""CLI verbs of `python -m autograder`: one module per verb, each with add_parser(subparsers) and
run(args). A verb is a thin shim: it parses its options and calls the library (autograder/api/).

The options several verbs share are defined here, once.
"""

from __future__ import annotations

import argparse
import sys


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


def add_assignment_argument(parser: argparse.ArgumentParser, example: str = "lec01_codesign") -> None:
    parser.add_argument("assignment", help=f"assignment name, e.g. {example}")


def add_jobs_option(parser: argparse.ArgumentParser) -> None:
    """`-j N`, shared by every verb that grades a batch."""
    parser.add_argument("-j", "--jobs", type=positive_int("-j"), default=1, help="grade N submissions in parallel (default 1)")


ISOLATION_HELP = ("how student code is isolated (default bubblewrap: without a working bwrap the verb "
                  "refuses with exit status 2; rlimits: explicitly lowered, and only where the grader "
                  "can still keep solutions/ and the hidden tests private, else refused too)")


def add_isolation_option(parser: argparse.ArgumentParser, *, from_env: bool = False) -> None:
    """`--isolation`, shared by every verb that grades: bubblewrap or an explicit refusal, unless
    lowered. `from_env`: no default here (the library reads CS349E_ISOLATION, else bubblewrap)."""
    from autograder.sandbox import confinement

    if from_env:
        parser.add_argument("--isolation", choices=confinement.CHOICES, default=None,
                            help="how student code is isolated (default: CS349E_ISOLATION, else bubblewrap; "
                                 "without a working bwrap the verb refuses with exit status 2)")
    else:
        parser.add_argument("--isolation", choices=confinement.CHOICES, default=confinement.DEFAULT.name,
                            help=ISOLATION_HELP)


def add_scheduler_option(parser: argparse.ArgumentParser) -> None:
    """`--scheduler ADDRESS`, shared by every verb that grades a batch (autograder/cluster/)."""
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="grade on the workers of this dask.distributed scheduler (e.g. tcp://head:8786; "
                             "needs pip install '.[cluster]'); every worker must run this kit and isolate student "
                             "code, else refused with exit status 2; outputs are written here as by a local run")


def add_batch_options(parser: argparse.ArgumentParser, *, force_help: str, isolation_from_env: bool = False) -> None:
    """What every verb that grades a batch takes: -j, --force, --isolation, --scheduler."""
    add_jobs_option(parser)
    parser.add_argument("--force", action="store_true", help=force_help)
    add_isolation_option(parser, from_env=isolation_from_env)
    add_scheduler_option(parser)


def refused(verb: str, err: Exception) -> int:
    """One line, `verb: why`, on stderr; exit status 2."""
    print(f"{verb}: {err}", file=sys.stderr)
    return 2


def isolation_refused(verb: str, isolation: str) -> bool:
    """Fail closed before any other work: prints one line (why, and how to install bubblewrap or
    lower isolation) and returns True when `isolation` cannot be had on this machine."""
    from autograder.api.grading import Refused, check_isolation

    try:
        check_isolation(isolation)
    except Refused as err:
        refused(verb, err)
        return True
    return False


def report_batch(verb: str, report, out) -> int:
    """The batch's summary on stdout; exit status 1 (with the students named) when the grader
    failed on some student, else 0."""
    from autograder.engine.outputs import show_controls
    from autograder.views.console_view import print_summary

    print_summary(report, out)
    if report.failed:
        print(f"{verb}: the grader failed on {len(report.failed)} student(s): "
              f"{', '.join(show_controls(s) for s, _ in report.failed)}; re-run to retry them", file=sys.stderr)
        return 1
    return 0
