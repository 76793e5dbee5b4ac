"""`python -m autograder similarity <assignment> SUBMISSIONS --out OUT [--threshold T] [--top N]`.

Pairwise code similarity of the students' own files (functions and notebook code), the released
skeleton, notebook cells and public tests counting as boilerplate, and so does the reference
solution: the docstrings prescribe the method, so a pair is scored on what it shares beyond the
reference; each student's share of the reference is reported on its own (report.html, and a line
for a student whose code is mostly the reference itself). Writes OUT/pairs.csv (every
pair, most similar first), OUT/report.html (the matched code side by side) and OUT/code/ (the
texts compared), and prints the most similar pairs. Code run from an encoded or compressed
string is decoded statically (never run), compared too, and marked "packed code" in pairs.csv,
the report and the output. Works offline. Exit status 0 (whatever it finds), 2 for a usage or configuration error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DEFAULT_THRESHOLD = 0.6   # a pair at or above this score is flagged for a human to read


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--threshold needs a number from 0 to 1, got {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"--threshold needs a number from 0 to 1, got {value}")
    return value


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "similarity", help="pairwise code similarity of a class: pairs.csv and report.html",
        description="Compare every pair of submissions in SUBMISSIONS (the same layouts as `grade`) with "
                    "copydetect; the released skeleton, notebook and public tests are boilerplate. A pair's "
                    "score is the larger share of one student's own code found in the other's.")
    parser.add_argument("assignment", help="assignment name, e.g. lec01_codesign")
    parser.add_argument("submissions", type=Path, help="folder with one subfolder per student")
    parser.add_argument("--out", type=Path, required=True, help="output folder (created if needed)")
    parser.add_argument("--threshold", type=_share, default=DEFAULT_THRESHOLD,
                        help=f"flag pairs whose score is at least this (default {DEFAULT_THRESHOLD})")
    parser.add_argument("--top", type=int, default=10, help="pairs to print (default 10; the CSV has all)")


def _say(*lines, file=None) -> None:
    """A line for the terminal: a student's folder name may hold escape sequences, bidi overrides or
    zero-width marks (each shown as an escape, as every command shows them: stripped, `alice` + BEL
    printed as `alice`) or bytes that are no UTF-8 (shown as \\xNN)."""
    from autograder.engine.outputs import show_controls

    print(*(show_controls(line) for line in lines), file=file)


def run(args) -> int:
    import shutil

    from autograder.engine.registry import ConfigError, load_config
    from autograder.similarity import (compare_class, reference_shares, stage_boilerplate, stage_class,
                                       write_pairs_csv, write_report)
    from autograder.similarity.report import REFERENCE_NOTE

    if not args.submissions.is_dir():
        print(f"similarity: submissions folder {args.submissions} does not exist", file=sys.stderr)
        return 2
    try:
        config = load_config(args.assignment)
    except ConfigError as err:
        print(f"similarity: {err}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    # The compared texts stay in OUT/code/ (the report names them), rebuilt on every run.
    code = args.out / "code"
    shutil.rmtree(code, ignore_errors=True)
    staged = stage_class(config, args.submissions, code / "students")
    boilerplate = stage_boilerplate(config, code / "boilerplate")
    pairs, detector = compare_class(staged.files, boilerplate.files)
    reference = reference_shares(staged.files, boilerplate)
    write_pairs_csv(args.out / "pairs.csv", pairs, args.threshold, packed=staged.packed)
    write_report(args.out / "report.html", assignment=config.assignment, files=staged.files, pairs=pairs,
                 detector=detector, threshold=args.threshold, packed=staged.packed, notes=staged.notes,
                 reference=reference)
    for student, note in sorted(staged.notes.items()):
        _say(f"note: {student}: {note}", file=sys.stderr)
    for student, share in sorted(reference.items(), key=lambda kv: (-kv[1], kv[0])):
        if share >= REFERENCE_NOTE:
            _say(f"like the reference: {student}: {share:.2f} of their own code is also the reference's "
                  "(honest code from the docstrings shares up to about 0.9; read it)")
    for student, code in sorted(staged.packed.items()):
        _say(f"packed code: {student} ({code.status}, read it): {'; '.join(code.places)}")
    flagged = [p for p in pairs if p.score >= args.threshold]
    print(f"{len(staged.files)} submissions, {len(pairs)} pairs compared; {len(flagged)} at or above "
          f"{args.threshold:g} (a larger share of one student's own code found in the other's)")
    for rank, pair in enumerate(pairs[:args.top], 1):
        mark = ("  FLAGGED" if pair.score >= args.threshold else "") + \
            ("  PACKED CODE" if pair.student_a in staged.packed or pair.student_b in staged.packed else "")
        _say(f"{rank:3d}. {pair.student_a} ~ {pair.student_b}: {pair.score:.2f} "
              f"({pair.share_a:.2f} / {pair.share_b:.2f}){mark}")
    print(f"outputs in {args.out}/ (pairs.csv, report.html, code/: the compared texts)")
    return 0
