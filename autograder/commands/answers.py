"""`python -m autograder answers <assignment> RESULTS [--out FILE] [--min-items N] [-j N]`.

The copy report of an assignment with per-student variants: every student whose number answers
are right for a classmate's variant and wrong for their own, on at least N items (default 3),
with the classmate and the items. RESULTS is what the grader wrote: `grade`'s OUT folder,
pregrade's `.pinned_results/<assignment>/`, or a folder of results JSON files (its own, and one
results.json per submission folder: Gradescope's export); only those paths are read (see
_read_class). Nothing is graded again. Prints a table; `--out report.csv` or `report.json` writes it.
Exit status 0 whatever it finds (a flag is for a human to read), 2 for a usage or configuration error.
"""

from __future__ import annotations

import sys
from dataclasses import replace
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
        results, read_notes, problems, twice = _read_class(args.results, config.assignment)
        if problems:
            for problem in problems:
                print(f"answers: {problem}", file=sys.stderr)
            return 2
        if not has_variants(config.assignment):
            print(f"{config.assignment} declares no variants (solutions/{config.assignment}/variants.py): every "
                  "student has the same keys, so copied numbers cannot be told from right ones. Nothing to compare.")
            return 0
        name = config.assignment
        keys = class_keys(name, [student_of(r) for r in results] + twice, args.jobs)
        report = compare_class(config, results, lambda student: _raised(keys[student]), args.min_items,
                               lambda student: variant_digest(params_for(name, student)), also_sources=twice)
        report = replace(report, notes=tuple(sorted(read_notes + list(report.notes))))
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


MAX_RESULT_BYTES = 16 << 20     # a results file of the grader's is a few hundred KB at most


def _read_class(folder: Path, assignment: str):
    """(results of `assignment`, notes, problems, students with two results). Only what the grader wrote, where it writes it:
    - grade's OUT folder and pregrade's .pinned_results/<assignment>/: results/<student>.json, whose
      record must be that student's (and, pinned, the one its manifest names by hash);
    - any other folder: its own *.json files and <folder>/<one level>/results.json (Gradescope's
      export: one folder per submission), never deeper: a student's upload lies beside them, so
      only a record with the grader's seal (engine/record_seal.py) counts there.
    A file that is not such a record is skipped; one filed under another student's name, or a
    student with two records, is a note (that student is not compared, whose keys still count as
    a classmate's), never the end of the report. `problems` stop it: no folder, no result at all."""
    import hashlib
    import json
    import stat as stat_module
    from collections import defaultdict

    from autograder.views.answer_matches import student_of
    from autograder.engine.outputs import RESULTS_DIR, read_result
    from autograder.engine.record_seal import sealed

    if not folder.is_dir():
        return [], [], [f"results folder {folder} does not exist"], []
    inner = folder / RESULTS_DIR
    named = inner.is_dir()
    candidates = sorted(inner.glob("*.json")) if named else [*sorted(folder.glob("*.json")),
                                                             *sorted(folder.glob(f"*/{'results.json'}"))]
    pinned = {}
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8")) if named else {}
        if isinstance(manifest, dict) and manifest.get("assignment") == assignment:
            pinned = {s: e.get("result_sha256") for s, e in manifest.get("students", {}).items() if isinstance(e, dict)}
    except (OSError, ValueError, AttributeError):
        pinned = {}
    by_student, notes = defaultdict(list), []
    for path in candidates:
        try:
            info = path.lstat()
        except OSError:
            continue
        if not stat_module.S_ISREG(info.st_mode) or info.st_size > MAX_RESULT_BYTES:
            continue                      # a link or a pipe is no file the grader wrote
        result = read_result(path)
        if result is None or result.assignment != assignment:
            continue
        if not named and not sealed(assignment, json.loads(path.read_text(encoding="utf-8"))):
            # beside a student's upload: it may be the student's own file, a record they wrote
            notes.append((path.parent.name, f"{path} is not sealed by the grader (a student's file, or written "
                                            f"before results were sealed: grade again): left out"))
            continue
        student = student_of(result)
        if named and result.student != path.stem:
            notes.append((path.stem, f"{path} holds a result of {result.student!r}, not of {path.stem!r}: left out"))
            continue
        if pinned and pinned.get(path.stem) != hashlib.sha256(path.read_bytes()).hexdigest():
            notes.append((path.stem, f"{path} is not the result pregrade pinned (manifest.json): left out"))
            continue
        by_student[student].append((path, result))
    results, twice = [], []
    for student, found in sorted(by_student.items()):
        if len(found) > 1:
            twice.append(student)
            notes.append((student, f"two results ({', '.join(str(path) for path, _ in found)}): neither is compared "
                                   f"(keep one per student); their keys still count as a classmate's"))
        else:
            results.append(found[0][1])
    if not results and not twice:
        return [], notes, [f"no results of {assignment} in {folder} (expected grade's OUT folder, "
                           f".pinned_results/{assignment}/, or results JSON files)"], []
    return results, notes, [], twice


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
    if report.same_for_everyone:
        console.print(f"not compared: {' '.join(report.same_for_everyone)} (the same key for every student: a copied "
                      f"answer there is right for everyone and cannot be told from an honest one)")
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
