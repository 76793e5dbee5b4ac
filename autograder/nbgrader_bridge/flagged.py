"""The instructor's lists of what collection refused or corrected, one CSV per way of collecting:

- `nbgrader collect` (the exchange): collect_flagged/<assignment>.csv, written by
  autograder.nbgrader_bridge.exchange (columns student, inbound, file, outcome, reason);
- `nbgrader zip_collect` (an LMS download): downloaded/<assignment>/flagged.csv, written by
  autograder.nbgrader_bridge.collect (columns student, lms_file, reason), at most 20 rows of each
  student (and of no student) and one that counts the rest.

`reconcile` prints every row of both. No nbgrader import. Student and file names are any text but
'/' (a folder a student names, a file in an LMS zip): in the CSV a cell never starts a spreadsheet
formula (engine.outputs.csv_cell), and on a terminal every control character is shown as an escape
(`shown`), so no escape sequence reaches the instructor's terminal and no line break forges a row.
"""

from __future__ import annotations

import csv
from dataclasses import astuple, fields
from pathlib import Path

from autograder.engine.outputs import csv_cell, student_cell
from autograder.engine.outputs import show_controls as shown
from autograder.nbgrader_bridge.inbound import FILE_LEFT_OUT, Flag

COLLECT_FOLDER = "collect_flagged"
COLLECT_COLUMNS = tuple(f.name for f in fields(Flag))
ZIP_COLLECT_CSV = "flagged.csv"


def csv_row(values) -> list[str]:
    return [csv_cell(value) for value in values]


# Columns a student names (their folder, an inbound folder, a file in it): shown as grades.csv
# shows a student, so no two names give the same cell.
_NAMED = {"student", "inbound", "file"}


def _flag_row(flag) -> tuple[str, ...]:
    return tuple(student_cell(v) if name in _NAMED and v else csv_cell(v)
                 for name, v in zip(COLLECT_COLUMNS, astuple(flag)))


# Rows one collected folder gives for its files: a folder of 10,000 links gave 10,000 rows, as many
# error lines on the instructor's terminal at each collect and in every reconcile.
FILE_ROWS_PER_FOLDER = 20


def bounded_file_rows(flags: list[Flag], limit: int = FILE_ROWS_PER_FOLDER) -> list[Flag]:
    """`flags` of one inbound folder with at most `limit` rows about its files; the rest counted in one
    row, by what happened to them."""
    files = [flag for flag in flags if flag.file]
    if len(files) <= limit:
        return list(flags)
    rest = files[limit:]
    dropped = set(map(id, rest))
    counts: dict[str, int] = {}
    for flag in rest:
        counts[flag.outcome] = counts.get(flag.outcome, 0) + 1
    what = ", ".join(f"{count:,} {outcome}" for outcome, count in counts.items())
    first = rest[0]
    return [flag for flag in flags if id(flag) not in dropped] + [
        Flag(first.student, first.inbound, "", FILE_LEFT_OUT,
             f"{len(rest):,} more rows about files of this folder not listed ({what}): read the folder in inbound/")]


ZIP_ROWS_PER_STUDENT = 20


def bounded_zip_rows(flags, limit: int = ZIP_ROWS_PER_STUDENT, archive: str = "archive/") -> list[tuple[str, str, str]]:
    """zip_collect's (student, LMS file, reason) rows with at most `limit` of each student (and of
    no student), in order; the rest of each counted in one row after them."""
    seen: dict[str, int] = {}
    kept = []
    for flag in flags:
        seen[flag[0]] = seen.get(flag[0], 0) + 1
        if seen[flag[0]] <= limit:
            kept.append(flag)
    return kept + [(student, "", f"{count - limit:,} more rows of {'this student' if student else 'no student'} not "
                                 f"listed: read {archive}")
                   for student, count in seen.items() if count > limit]


def collect_csv(course_root: Path, assignment: str) -> Path:
    return Path(course_root) / COLLECT_FOLDER / f"{assignment}.csv"


def zip_collect_csv(course_root: Path, assignment: str) -> Path:
    return Path(course_root) / "downloaded" / assignment / ZIP_COLLECT_CSV


def write_collect_flags(path: Path, flags, keep=lambda row: False) -> None:
    """Writes `flags` (Flag) to `path`, after the earlier rows `keep` accepts (a collect of some
    students keeps the others' rows)."""
    kept = [tuple(row[c] for c in COLLECT_COLUMNS) for row in read_rows(path) if keep(row)] if path.is_file() else []
    # earlier rows as they were written (escaping them again would grow them at each collect)
    rows = list(dict.fromkeys([*kept, *(_flag_row(flag) for flag in flags)]))  # once, in order
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLLECT_COLUMNS)
        writer.writerows(rows)


def write_zip_flags(path: Path, flags) -> None:
    """zip_collect's list: (student, lms_file, reason) rows; the first two as grades.csv shows a
    student (an LMS file name carries the student's own upload name)."""
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "lms_file", "reason"])
        writer.writerows([student_cell(student) if student else "", student_cell(lms_file) if lms_file else "",
                          csv_cell(reason)] for student, lms_file, reason in flags)


def read_rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def flagged_lines(course_root: Path, assignment: str) -> list[str]:
    """One line per row of both lists, exchange first."""
    lines = []
    path = collect_csv(course_root, assignment)
    if path.is_file():
        for row in read_rows(path):
            where = f"{row['inbound']}/{row['file']}" if row["file"] else row["inbound"]
            lines.append(shown(f"{row['student']}: exchange {where}: {row['outcome']}: {row['reason']} ({path.name})"))
    path = zip_collect_csv(course_root, assignment)
    if path.is_file():
        for row in read_rows(path):
            lines.append(shown(f"{row['student'] or '(no student)'}: LMS file {row['lms_file']}: not collected: "
                               f"{row['reason']} (downloaded/{assignment}/{ZIP_COLLECT_CSV})"))
    return lines
