"""`python -m autograder build <assignment> [--check]`: regenerate the student files from solutions/."""

from __future__ import annotations

import sys


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "build", help="regenerate assignments/<name>/ (skeleton, notebook, shared copies, README) from solutions/",
        description="Regenerate the generated student files of an assignment from solutions/ and the repository root.")
    parser.add_argument("assignment", help="assignment name, e.g. lec01_codesign")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a committed file differs from what the build produces")


def run(args) -> int:
    from autograder.build import build_everything
    from autograder.errors import InstructorError

    folder = f"assignments/{args.assignment}"
    try:
        changed = build_everything(args.assignment, check=args.check)
    except InstructorError as err:
        print(f"build failed: {err}", file=sys.stderr)
        return 2
    if args.check:
        for path in changed:
            print(f"drift: {path} differs from what the build produces")
        if changed:
            print(f"run `python -m autograder build {args.assignment}` and commit the result", file=sys.stderr)
            return 1
        print(f"{folder}: no drift")
        return 0
    for path in changed:
        print(f"wrote {path}")
    print(f"{folder}: {len(changed)} file(s) updated" if changed else f"{folder}: already up to date")
    return 0
