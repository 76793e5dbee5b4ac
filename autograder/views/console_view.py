"""What `python -m autograder grade` shows on the terminal: a progress bar on a TTY (a plain
line per student otherwise) and the gradebook as a table at the end."""

from __future__ import annotations

import sys
from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from autograder.engine.batch import BatchReport
from autograder.engine.feedback import points
from autograder.engine.outputs import show_controls
from autograder.engine.results import SubmissionResult
from autograder.engine.roster import ROSTER_FILE
from autograder.sandbox import NOT_ISOLATED_WARNING
from autograder.sandbox.confinement import isolation_named


class BatchProgress:
    """on_start / on_result callbacks for grade_batch; a context manager around the batch."""

    def __init__(self, stream: TextIO = sys.stderr):
        self.stream = stream
        self.console = Console(file=stream, highlight=False)
        self.tty = stream.isatty()
        self._progress: Progress | None = None
        self._task = None

    def __enter__(self) -> BatchProgress:
        return self

    def __exit__(self, *exc_info) -> None:
        if self._progress is not None:
            self._progress.stop()

    def on_start(self, to_grade: int, skipped: int) -> None:
        if skipped:
            self.console.print(f"skipping {skipped} student(s) already graded (use --force to regrade)")
        if self.tty and to_grade:
            self._progress = Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(),
                                      TextColumn("{task.fields[last]}", markup=False), TimeElapsedColumn(),
                                      console=self.console, transient=False)
            self._task = self._progress.add_task("grading", total=to_grade, last="")
            self._progress.start()

    def on_result(self, student: str, result: SubmissionResult | None, error: str | None) -> None:
        # the grader's own traceback keeps its lines; nothing else a student named reaches the terminal raw
        student, error = show_controls(student), "\n".join(map(show_controls, (error or "").split("\n")))
        if result is None:
            line = f"[red]grader error[/red] for {escape(student)} (nothing written; re-run to retry):\n{escape(error or '')}"
        else:
            pending = points(result.max_score - result.auto_max_score)
            line = (f"graded {student}: {points(result.score)} of {points(result.auto_max_score)} automatic "
                    f"points, {pending} hand-graded pending [{result.isolation}, {result.seconds:.1f} s]")
        if self._progress is not None:
            self._progress.update(self._task, advance=1, last=student)
            if result is None:
                self._progress.console.print(line)
        else:   # a log file or CI: whole lines, never wrapped at the 80 columns rich assumes there
            self.console.print(line, markup=result is None, soft_wrap=not self.tty)


def off_roster(report: BatchReport) -> list[str]:
    """Students graded whose id is not on the course roster (none when the course keeps no roster)."""
    from autograder.engine.roster import read_roster, roster_path

    roster = set(read_roster(roster_path()))
    if not roster:
        return []
    return [r.student for r in report.results if (r.student_id or r.student) not in roster]


NARROWEST_LIST = 32   # below this width the items not passed go in a list under the table
# Students per table printed: rendering holds a table's every cell, so a class of 10,000 is
# printed part by part, in the memory of one part.
TABLE_ROWS = 500


def gradebook_table(report: BatchReport, width: int = 120, part: slice = slice(None)) -> Table:
    """One row per student (of `part` of the class): automatic points (all, functions, report
    answers), the hand-graded points still pending, the late penalty (when known), and every
    automatic item not fully passed (wrapped, never cut). When `width` leaves that last column too
    narrow, it is left out and `not_passed_list` prints it under the table instead."""
    headers = ("student", "automatic", "functions", "report answers", "hand-graded")
    with_late = knows_lateness(report)
    headers += ("late penalty",) if with_late else ()
    rows = []
    start, stop, _ = part.indices(len(report.results))
    for result in report.results[start:stop]:
        pending = result.pending
        rows.append([
            show_controls(result.student),
            f"{points(result.score)} / {points(result.auto_max_score)}",
            f"{points(result.functions[0])} / {points(result.functions[1])}",
            f"{points(result.answers[0])} / {points(result.answers[1])}",
            f"{points(pending)} pending" if pending else "-",
            *([result.late] if with_late else []),
            show_controls(result.not_passed)])
    whole = (start, stop) == (0, len(report.results))
    table = Table(title=f"{report.assignment}: gradebook ({len(report.results)} students"
                        f"{'' if whole else f'; {start + 1}–{stop}'})",
                  caption=escape(_legend(report)) if stop == len(report.results) else None, caption_justify="left")
    narrow = list_below(report, width)
    for i, header in enumerate(headers):
        # A value is never cut or broken; on a narrow terminal the headers wrap at their spaces.
        widest = max([len(row[i]) for row in rows] + [max(map(len, header.split()))])
        table.add_column(header, justify="left" if header == "student" else "right", min_width=widest,
                         width=widest if narrow else None)
    if narrow:
        rows = [row[:-1] for row in rows]
    else:
        # The only column that wraps: takes what the others leave of the width.
        table.add_column("automatic items not passed (points)", ratio=1, overflow="fold")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))   # a student's folder name is text, never rich markup
    return table


def list_below(report: BatchReport, width: int) -> bool:
    """Whether the fixed columns leave the items-not-passed column fewer than NARROWEST_LIST."""
    with_late = knows_lateness(report)
    fixed = [max([len("student")] + [len(show_controls(r.student)) for r in report.results]), 10, 10, 8, 11]
    fixed += [max([7] + [len(r.late) for r in report.results])] if with_late else []
    return width - sum(fixed) - 3 * (len(fixed) + 1) - 1 < NARROWEST_LIST


def knows_lateness(report: BatchReport) -> bool:
    """Whether any student's submission time is known (then the late-penalty column is shown)."""
    return any(result.late_known for result in report.results)


def not_passed_list(report: BatchReport, part: slice = slice(None)) -> str:
    """The items not passed, one paragraph per student (for narrow terminals)."""
    lines = ["automatic items not passed (points):"]
    lines += [show_controls(f"  {result.student}: {result.not_passed}") for result in report.results[part]]
    return "\n".join(lines)


def _legend(report: BatchReport) -> str:
    """What the columns mean, with this assignment's numbers."""
    if not report.results:
        return ""
    first = report.results[0]
    pending = first.pending
    legend = (f"automatic: points the grader awarded (functions + report answers) of the "
              f"{points(first.auto_max_score)} it grades; hand-graded: free-text points a TA still "
              f"grades in formgrader; assignment total {points(first.max_score)} = "
              f"{points(first.auto_max_score)} automatic + {points(pending)} hand-graded.")
    if knows_lateness(report):
        legend += (" late penalty: points taken off the automatic score (grading.toml [late]; "
                   "grades.csv's score is after it); ?: no submission time.")
    return legend


def print_summary(report: BatchReport, out_dir, stream: TextIO = sys.stdout, width: int | None = None) -> None:
    """The gradebook table, the items not passed (in it or, when narrow, under it), the run's
    counts. `width`: the terminal's on a TTY, else 160 (piped into a file or `less`)."""
    console = Console(file=stream, highlight=False, width=width or (None if stream.isatty() else 160))
    narrow = list_below(report, console.width)
    for start in range(0, max(len(report.results), 1), TABLE_ROWS):
        part = slice(start, start + TABLE_ROWS)
        console.print(gradebook_table(report, console.width, part))
        if narrow:
            console.print(escape(not_passed_list(report, part)))
    for result in report.results:  # e.g. a notebook naming another student (per-student variants)
        for flag in result.flags:
            console.print(escape(show_controls(f"flagged: {result.student}: {flag}")))
    for student in off_roster(report):
        console.print(escape(show_controls(f"flagged: {student}: not on the course roster ({ROSTER_FILE}): graded "
                                           f"anyway; check the id, or add it to {ROSTER_FILE} (and build again, "
                                           f"for its variant)")))
    console.print(f"graded {len(report.graded)}, skipped {len(report.skipped)}, "
                  f"grader errors {len(report.failed)} in {report.seconds:.1f} s "
                  f"(isolation: {report.isolation}{' + ' + report.quotas if report.quotas else ''}); "
                  f"outputs in {out_dir}/ "
                  "(grades.csv, feedback/, results/)")
    if report.placement:
        console.print(escape(f"CPU placement off (sandboxes may crowd each other's CPUs): {report.placement}"))
    if report.missing_quotas:
        console.print(escape(report.missing_quotas), soft_wrap=True)   # one line, to grep or copy
    if isolation_named(report.isolation).lowered:
        Console(file=sys.stderr).print(f"[bold red]{escape(NOT_ISOLATED_WARNING)}[/bold red]")

