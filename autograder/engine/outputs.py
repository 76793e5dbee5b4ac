"""The grader's outputs, each written atomically (autograder/atomic.py), so a batch killed
at any moment leaves every file either complete or absent:

    OUT/results/<student>.json   Gradescope results.json; `extra_data.submission` holds the full
                                 SubmissionResult, the record a re-run and grades.csv are built from
    OUT/feedback/<student>.md    Chinese feedback for the student
    OUT/executed/<student>.json  the executed notebook: each code cell's outputs from the grader's
                                 one run of the student's notebook (executed_notebook.py)
    OUT/grades.csv               student, score, max_score, isolation, late_penalty, quotas, one
                                 column per item (rebuilt from results/)

Everything written is safe to open: control characters a submission printed (NUL, escape
sequences, ...) are stripped from the feedback and results.json, and a grades.csv cell a
spreadsheet would run as a formula (a student id like `=HYPERLINK(...)`) is escaped.
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path
from typing import Callable, Iterable

from autograder.atomic import atomic_file, atomic_write_text  # noqa: F401 - atomic_write_text: used by importers too
from autograder.engine.feedback import isolation_line, item_name, points, submission_markdown
from autograder.engine.registry import GradingConfig
from autograder.engine.results import SubmissionResult
from autograder.engine.terminal_text import (invisible, json_escaped_invisible, show_controls,  # noqa: F401
                                            show_invisible, strip_control_chars, utf8_text)

RESULTS_DIR, FEEDBACK_DIR, EXECUTED_DIR, GRADES_CSV = "results", "feedback", "executed", "grades.csv"
# A spreadsheet runs a cell starting with these as a formula (OWASP "CSV injection").
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

# Gradescope renders "md" (and "html") as HTML in the student's and the staff's browser: what a
# student wrote would be live there. The feedback is shown as preformatted text instead.
GRADESCOPE_OUTPUT_FORMAT = "text"


def _plain(value):
    """`value` (JSON data) with control characters stripped from every string in it."""
    if isinstance(value, str):
        return strip_control_chars(value)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def csv_cell(value) -> str:
    """A grades.csv cell a spreadsheet shows as text: a leading formula character gets a `'`, and so
    does one after a `;` (where `;` is the list separator, a spreadsheet splits the cell there)."""
    # first: a control character must not hide a formula; a bidi override or zero-width mark (which
    # reverses or hides the rest of the cell, in a spreadsheet and in `cat`) shown as its escape
    text = show_invisible(strip_control_chars(utf8_text(str(value))))
    return ";".join(f"'{part}" if part.startswith(_FORMULA_STARTS) else part for part in text.split(";"))


def _shown(char: str) -> str:
    code = ord(char)
    if char == "\\":
        return "\\\\"
    if 0xDC80 <= code <= 0xDCFF:   # a byte of a file name that is no UTF-8
        return f"\\x{code - 0xDC00:02x}"
    if invisible(char):
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return char


def student_cell(student: str) -> str:
    """A student's folder name as a grades.csv cell that no other folder name gives: csv_cell
    would clean `alice` + BEL to `alice`, a second row named alice that a gradebook import by name
    may take for her. Control and invisible characters (zero-width, bidi marks), non-UTF-8 bytes
    and the backslash are shown as escapes
    (one reading back), a leading formula character or quote behind a `'`, a formula character
    after a `;` as its escape."""
    first, *rest = "".join(_shown(c) for c in student).split(";")
    # after a `;` (a list separator, where a spreadsheet splits the cell) a formula character is
    # shown as its escape: a `'` there would make `a;=b` and `a;'=b` one cell
    rest = [f"\\x{ord(part[0]):02x}{part[1:]}" if part.startswith(_FORMULA_STARTS) else part for part in rest]
    return ";".join([f"'{first}" if first.startswith((*_FORMULA_STARTS, "'")) else first, *rest])


def gradescope_results(result: SubmissionResult, *, visibility: str = "visible") -> dict:
    """Gradescope's results.json. Manual (free-text) items are not tests here: the top-level
    output lists them, and their points are graded outside the autograder."""
    tests = []
    for number, item in enumerate(result.items, 1):
        if item.status == "manual":
            continue
        tests.append({
            "name": item_name(item),
            "number": str(number),
            "score": item.score,
            "max_score": item.max_score,
            "status": "passed" if item.score == item.max_score else "failed",
            "output": show_invisible(strip_control_chars(item.feedback_md)),   # text: no bidi mark reorders it
            "output_format": GRADESCOPE_OUTPUT_FORMAT,
            "visibility": visibility,
        })
    summary = f"自动评分 {points(result.score)} / {points(result.auto_max_score)} 分。"
    if result.late is not None:
        from autograder.engine.lateness import describe   # lazily: see lateness.py
        summary += " " + describe(result.late)
    manual = result.manual_items
    if manual:
        summary += (f" 另有 {points(sum(i.max_score for i in manual))} 分的文字题需要人工评分："
                    f"{'、'.join(i.id for i in manual)}。")
    summary += f"\n\n{isolation_line(result.isolation, result.quotas)}"
    return {
        "score": round(result.score - result.late_penalty, 2),
        "execution_time": result.seconds,
        "output": summary,
        "output_format": GRADESCOPE_OUTPUT_FORMAT,
        "visibility": visibility,
        "tests": tests,
        "extra_data": {"submission": result.to_dict()},
    }


def results_path(out: Path, student: str) -> Path:
    return out / RESULTS_DIR / f"{student}.json"


def executed_path(out: Path, student: str) -> Path:
    return out / EXECUTED_DIR / f"{student}.json"


def json_text(value, **options) -> str:
    """`value` as JSON text any UTF-8 file can store: a lone surrogate a student's answer, output or
    folder name holds (the sandbox keeps them, "\\ud800") written as JSON's own \\uXXXX escape, which
    reads back as the same character, and so is every other invisible one (a bidi override would
    reorder the line of an instructor's `cat`); everything else as itself."""
    return json_escaped_invisible(json.dumps(value, ensure_ascii=False, **options))


def write_result(out: Path, result: SubmissionResult) -> None:
    """Executed notebook and feedback first, results last: a results file means the student is
    completely graded. (A result re-stamped for lateness has no executed notebook: the one of
    its grading stays.)"""
    if result.executed is not None:
        atomic_write_text(executed_path(out, result.student), json_text(result.executed, sort_keys=True) + "\n")
    atomic_write_text(out / FEEDBACK_DIR / f"{result.student}.md",
                      show_invisible(utf8_text(strip_control_chars(submission_markdown(result)))))
    data = _plain(gradescope_results(result))
    from autograder.engine.record_seal import SEAL_KEY, seal_of   # lazily: see lateness.py

    seal = seal_of(result.assignment, json.loads(json_text(data["extra_data"]["submission"])))
    if seal is not None:   # a record found beside students' files counts only with it (commands/answers.py)
        data["extra_data"][SEAL_KEY] = seal
    text = json_text(data, indent=1, sort_keys=True)
    atomic_write_text(results_path(out, result.student), text + "\n")


def read_result(path: Path) -> SubmissionResult | None:
    """The SubmissionResult stored in a results file, or None if it is not one of ours."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return SubmissionResult.from_dict(data["extra_data"]["submission"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def read_results(out: Path) -> list[SubmissionResult]:
    folder = out / RESULTS_DIR
    if not folder.is_dir():
        return []
    results = (read_result(p) for p in sorted(folder.glob("*.json")))
    return sorted((r for r in results if r is not None), key=lambda r: r.student)


GRADES_HEAD = ("student", "score", "max_score", "isolation", "late_penalty", "quotas")
VARIANT_COLUMNS = ("variant", "flags")   # with per-student variants, after quotas


def grades_csv(config: GradingConfig, results: Iterable[SubmissionResult]) -> str:
    """student, score, max_score, isolation (how the student's code was isolated), late_penalty,
    quotas (how its memory, processes and CPU were bounded), then one column per item in grading.toml's order. `score` is after the late penalty (the
    items are not); late_penalty is empty when the submission time or due date is unknown. A
    manual item's cell stays empty: it has not been graded yet. With per-student variants two more
    columns follow quotas: variant (the digest of the student's parameters) and flags (what an
    instructor should look at, e.g. a notebook declaring another student's id)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    results = sorted(results, key=lambda r: r.student)
    variants = any(r.variant for r in results)
    writer.writerow(grades_header(config, variants))
    for result in results:
        writer.writerow(grades_row(config, result, variants))
    return buf.getvalue()


def grades_header(config: GradingConfig, variants: bool) -> list[str]:
    return [*GRADES_HEAD, *(VARIANT_COLUMNS if variants else ()), *(item.id for item in config.items)]


def grades_row(config: GradingConfig, result: SubmissionResult, variants: bool) -> list[str]:
    """One student's grades.csv cells (see grades_csv)."""
    scores = {item.id: ("" if item.status == "manual" else points(item.score)) for item in result.items}
    late = "" if result.late is None else points(result.late_penalty)
    row = [result.student, points(result.score - result.late_penalty), points(result.max_score),
           result.isolation, late, result.quotas,
           *((result.variant, "; ".join(result.flags)) if variants else ()), *(scores.get(i.id, "") for i in config.items)]
    return [student_cell(result.student), *(csv_cell(cell) for cell in row[1:])]


def write_grades_csv(out: Path, config: GradingConfig,
                     each: Callable[[SubmissionResult], None] | None = None) -> int:
    """Rebuild grades.csv from every results file of this assignment, reading one result at a
    time and holding none (the same bytes as grades_csv of them all); `each` sees every one of
    them in the file's order. Returns how many rows were written.

    A results file is named after its student (write_result), so the files in the order of their
    names are the rows in the order of the students. Whether the variant columns appear depends on
    every result, so rows are spooled with them and the columns dropped at the end if no result
    has a variant."""
    folder = out / RESULTS_DIR
    paths = sorted(folder.glob("*.json"), key=lambda p: p.name[:-len(".json")]) if folder.is_dir() else []
    rows, variants = 0, False
    with tempfile.TemporaryFile("w+", encoding="utf-8", newline="", dir=out if out.is_dir() else None) as spool:
        writer = csv.writer(spool, lineterminator="\n")
        for path in paths:
            result = read_result(path)
            if result is None or result.assignment != config.assignment:
                continue
            variants = variants or bool(result.variant)
            writer.writerow(grades_row(config, result, variants=True))
            rows += 1
            if each is not None:
                each(result)
        spool.seek(0)
        _write_spooled(out / GRADES_CSV, grades_header(config, variants), csv.reader(spool), variants)
    return rows


def _write_spooled(path: Path, header: list[str], spooled: Iterable[list[str]], variants: bool) -> None:
    """grades.csv from the spooled rows, atomically, the variant columns dropped without variants."""
    at = len(GRADES_HEAD)
    with atomic_file(path) as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        for row in spooled:
            writer.writerow(row if variants else row[:at] + row[at + len(VARIANT_COLUMNS):])
