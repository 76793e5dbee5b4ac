"""`python -m autograder variant <assignment> <student> [--keys]`: one student's variant as JSON.
`python -m autograder variant <assignment> --tokens`: every roster student's personal token, CSV.

For a TA answering "what were my numbers?" or checking a regrade request by hand: the student's
parameters (drawn from the assignment's secret seed and the id, exactly as the grader draws them),
their personal token (what opens their entry of the released parameter table) and, with --keys,
the answer keys graded against. Instructor-only: the keys never reach a student; each token goes
to its own student only (an LMS message, or the hub's environment: docs/variants.md).
"""

from __future__ import annotations

import json
import sys


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "variant", help="print a student's per-student variant (parameters, --keys: answer keys) as JSON",
        description="Print the parameters of STUDENT's variant of ASSIGNMENT as JSON (the assignment must declare "
                    "variants in solutions/<name>/variants.py); --keys adds the answer keys they are graded "
                    "against.")
    parser.add_argument("assignment", help="assignment name, e.g. lec01_codesign")
    parser.add_argument("student", nargs="?", help="the student id (as the grader sees it: folder name, Gradescope sid)")
    parser.add_argument("--keys", action="store_true", help="also print the answer keys of this variant")
    parser.add_argument("--tokens", action="store_true",
                        help="instead: print `student,token` for every student of roster.txt (send each their own)")


def _plain_key(value):
    """A key as JSON shows it: numbers and letters as they are; a measured or derived key (checked
    against the student's own run) described."""
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        return value
    return {"kind": type(value).__name__, "detail": repr(value)}


def run(args) -> int:
    from autograder.engine.assignment import load_assignment
    from autograder.engine.variants import (StudentIdError, has_variants, normalize_id, params_for,
                                            variant_digest, variant_token)
    from autograder.errors import InstructorError

    if (args.student is None) == (not args.tokens):
        print("variant: give either a STUDENT or --tokens", file=sys.stderr)
        return 2
    try:
        load_assignment(args.assignment)
        if not has_variants(args.assignment):
            print(f"variant: {args.assignment} has no per-student variants (no solutions/{args.assignment}/"
                  "variants.py): every student is graded against the same key", file=sys.stderr)
            return 2
        if args.tokens:
            from autograder.build.variants_table import read_roster, roster_path

            roster = read_roster(roster_path())
            if not roster:
                print(f"variant: {roster_path()} lists no student", file=sys.stderr)
                return 2
            print("student,token")
            for sid in roster:
                print(f"{sid},{variant_token(args.assignment, sid)}")
            return 0
        sid = normalize_id(args.student)
        params = params_for(args.assignment, sid)
        out = {"assignment": args.assignment, "student": sid, "token": variant_token(args.assignment, sid),
               "variant": variant_digest(params), "params": params}
        if args.keys:
            key = load_assignment(args.assignment).key_for(params)
            out["keys"] = {item: _plain_key(value) for item, value in key.items()}
    except StudentIdError as err:
        print(f"variant: bad student id {args.student!r}: {err}", file=sys.stderr)
        return 2
    except InstructorError as err:
        print(f"variant: {err}", file=sys.stderr)
        return 2
    print(json.dumps(out, ensure_ascii=False, indent=1, sort_keys=True))
    return 0
