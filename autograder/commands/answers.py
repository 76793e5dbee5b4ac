"""`python -m autograder answers <assignment> RESULTS [--out FILE] [--min-items N] [-j N]`.

The copy report of an assignment with per-student variants: every student whose number answers
are right for a classmate's variant and wrong for their own, on at least N items (default 3),
with the classmate and the items. RESULTS is what the grader wrote: `grade`'s OUT folder,
pregrade's `.pinned_results/<assignment>/`, or any folder of results JSON files (e.g. Gradescope's
export). Nothing is graded again. Prints a table; `--out report.csv` or `report.json` writes it.
Exit status 0 whatever it finds (a flag is for a human to read), 2 for a usage or configuration error.
"""

from __future__ import annotations

import sys
from itertools import groupby
from pathlib import Path

from . import positive_int

SHOWN_SOURCES = 3  # best-matching sources named on the console (ties); the --out file has every pair
DEFAULT_MIN_ITEMS = 3  # one or two matching numbers happen by chance (a variant shares a parameter)


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "answers", help="copy report: answers right for a classmate's variant and wrong for one's own",
        description="Compare every student's recorded number answers with every classmate's keys (and the "
                    "lecture's worked example), with the grader's tolerance. A student is flagged with a "
                    "classmate when at least --min-items answers are right for the classmate's variant and "
                    "wrong for their own.")
    parser.add_argument("assignment", help="assignment name, e.g. lec01_codesign")
    parser.add_argument("results", type=Path,
                        help="grade's OUT folder, .pinned_results/<assignment>/, or a folder of results JSON files")
    parser.add_argument("--out", type=Path, help="also write the report to this .csv or .json file")
    parser.add_argument("--min-items", type=positive_int("--min-items"), default=DEFAULT_MIN_ITEMS,
                        help=f"matched items that flag a pair (default {DEFAULT_MIN_ITEMS})")
    parser.add_argument("-j", "--jobs", type=positive_int("-j"), default=_cpus(),
                        help="processes computing the students' keys (default: every CPU, here %(default)s)")


def run(args) -> int:
    from autograder.views.answer_matches import class_keys, compare_class, report_csv, report_json, student_of
    from autograder.engine.outputs import atomic_write_text
    from autograder.engine.registry import ConfigError, load_config
    from autograder.engine.variants import has_variants, params_for, variant_digest

    if args.out is not None and args.out.suffix not in (".csv", ".json"):
        print(f"answers: --out {args.out}: the file name must end in .csv or .json", file=sys.stderr)
        return 2
    try:
        config = load_config(args.assignment)
        results, problems = _read_class(args.results, config.assignment)
        if problems:
            for problem in problems:
                print(f"answers: {problem}", file=sys.stderr)
            return 2
        if not has_variants(config.assignment):
            print(f"{config.assignment} declares no variants (solutions/{config.assignment}/variants.py): every "
                  "student has the same keys, so copied numbers cannot be told from right ones. Nothing to compare.")
            return 0
        name = config.assignment
        keys = class_keys(name, [student_of(r) for r in results], args.jobs)
        report = compare_class(config, results, lambda student: _raised(keys[student]), args.min_items,
                               lambda student: variant_digest(params_for(name, student)))
    except ConfigError as err:
        print(f"answers: {err}", file=sys.stderr)
        return 2
    _print(report)
    if args.out is not None:
        atomic_write_text(args.out, report_csv(report) if args.out.suffix == ".csv" else report_json(report))
        print(f"report written to {args.out}")
    return 0


def _raised(keys):
    """The keys, or the error computing them gave (class_keys hands errors back as values)."""
    if isinstance(keys, Exception):
        raise keys
    return keys


def _read_class(folder: Path, assignment: str):
    """(results of `assignment`, problems): one result per student, from any of the layouts above."""
    from autograder.views.answer_matches import student_of
    from autograder.engine.outputs import RESULTS_DIR, read_result

    if not folder.is_dir():
        return [], [f"results folder {folder} does not exist"]
    inner = folder / RESULTS_DIR
    paths = sorted((inner if inner.is_dir() else folder).rglob("*.json"))
    by_student, problems = {}, []
    for path in paths:
        result = read_result(path)
        if result is None or result.assignment != assignment:
            continue
        student = student_of(result)
        if student in by_student:
            problems.append(f"two results for student {student!r}: {by_student[student][0]} and {path} "
                            "(keep one per student)")
            continue
        by_student[student] = (path, result)
    if not by_student and not problems:
        problems.append(f"no results of {assignment} in {folder} (expected grade's OUT folder, "
                        f".pinned_results/{assignment}/, or results JSON files)")
    return [result for _, result in by_student.values()], problems


def _print(report) -> None:
    from rich.console import Console
    from rich.markup import escape as escape_markup
    from rich.table import Table

    from autograder.engine.outputs import show_controls

    def escape(text) -> str:   # a student's text: neither rich markup nor a terminal control sequence
        return escape_markup(show_controls(text))

    console = Console(highlight=False, width=160)
    for student, note in report.notes:
        console.print(f"note: {escape(student)}: {escape(note)}")
    for student, declared in report.declared_ids:
        console.print(f"id mismatch: {escape(student)}'s notebook declares STUDENT_ID {escape(repr(declared))} "
                      f"(graded as {escape(student)})")
    console.print(f"{len(report.students)} students, {len(report.items)} number items compared; "
                  f"{len({f.student for f in report.flags})} flagged (at least {report.min_items} answers right "
                  f"for another variant's keys and wrong for their own)")
    if not report.flags:
        return
    # One row per flagged student: the source(s) whose keys match the most of their answers (the
    # classmate whose numbers they handed in); classmates whose variants share some of those
    # parameters match as many or fewer items: counted, every pair is in --out.
    table = Table("student", "answers match the keys of", "items", "how many", "right in own variant",
                  "also matching", "notebook declares")
    for student, flags in groupby(report.flags_by_student(), key=lambda f: f.student):
        flags = list(flags)
        best = [f for f in flags if f.count == flags[0].count]
        names = ", ".join(f.source for f in best[:SHOWN_SOURCES])
        names += f" (+{len(best) - SHOWN_SOURCES} with as many)" if len(best) > SHOWN_SOURCES else ""
        first = best[0]
        table.add_row(escape(student), escape(names), escape(" ".join(first.items)), str(first.count),
                      f"{first.own_right} of {first.compared}",
                      f"{len(flags) - len(best)} with fewer" if len(flags) > len(best) else "", escape(first.declared))
    console.print(table)
