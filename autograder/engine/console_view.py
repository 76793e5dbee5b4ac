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
from autograder.engine.results import SubmissionResult
from autograder.engine.vocabulary import KEYED_KINDS, ItemKind
from autograder.sandbox import NOT_ISOLATED_WARNING

ROSTER_FILE = "roster.txt"   # the course roster (autograder/build/variants_table.py reads it)


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
    from autograder.build.variants_table import read_roster, roster_path

    roster = set(read_roster(roster_path()))
    if not roster:
        return []
    return [r.student for r in report.results if (r.student_id or r.student) not in roster]


NARROWEST_LIST = 32   # below this width the items not passed go in a list under the table


def gradebook_table(report: BatchReport, width: int = 120) -> Table:
    """One row per student: automatic points (all, functions, report answers), the hand-graded
    points still pending, the late penalty (when known), and every automatic item not fully passed
    (wrapped, never cut). When `width` leaves that last column too narrow, it is left out and
    `not_passed_list` prints it under the table instead."""
    headers = ("student", "automatic", "functions", "report answers", "hand-graded")
    with_late = knows_lateness(report)
    headers += ("late penalty",) if with_late else ()
    rows = []
    for result in report.results:
        functions = [i for i in result.items if i.kind == ItemKind.FUNCTION]
        answers = [i for i in result.items if i.kind in KEYED_KINDS]
        pending = sum(i.max_score for i in result.manual_items)
        rows.append([
            result.student,
            f"{points(result.score)} / {points(result.auto_max_score)}",
            f"{points(sum(i.score for i in functions))} / {points(sum(i.max_score for i in functions))}",
            f"{points(sum(i.score for i in answers))} / {points(sum(i.max_score for i in answers))}",
            f"{points(pending)} pending" if pending else "-",
            *([late_cell(result)] if with_late else []),
            not_passed(result)])
    table = Table(title=f"{report.assignment}: gradebook ({len(report.results)} students)",
                  caption=escape(_legend(report)), caption_justify="left")
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
    fixed = [max([len("student")] + [len(r.student) for r in report.results]), 10, 10, 8, 11]
    fixed += [max([7] + [len(late_cell(r)) for r in report.results])] if with_late else []
    return width - sum(fixed) - 3 * (len(fixed) + 1) - 1 < NARROWEST_LIST


def knows_lateness(report: BatchReport) -> bool:
    """Whether any student's submission time is known (then the late-penalty column is shown)."""
    return any(result.late is not None for result in report.results)


def not_passed_list(report: BatchReport) -> str:
    """The items not passed, one paragraph per student (for narrow terminals)."""
    lines = ["automatic items not passed (points):"]
    lines += [f"  {result.student}: {not_passed(result)}" for result in report.results]
    return "\n".join(lines)


def late_cell(result: SubmissionResult) -> str:
    """"-9.1 (2d 10%)" for a late submission, "on time", or "?" without a submission time."""
    late = result.late
    if late is None:
        return "?"
    if late.penalty == 0:
        return "on time" if late.seconds_late == 0 else "0 (grace)" if late.days_charged == 0 else "0"
    return f"-{points(late.penalty)} ({late.days_charged}d {late.percent:g}%)"


def not_passed(result: SubmissionResult) -> str:
    """Automatic items below full marks with their points, "quantize(8.57/20), q01(0/2)" (no
    space inside an item, so wrapping never splits one); "all N items: 0 points" for nothing."""
    automatic = [i for i in result.items if i.status != "manual"]
    missed = [f"{i.id}({points(i.score)}/{points(i.max_score)})" for i in automatic
              if i.status in ("failed", "partial", "error")]
    if missed and len(missed) == len(automatic) and not any(i.score for i in automatic):
        why = f" ({'; '.join(result.flags)})" if result.flags else ""
        return f"all {len(automatic)} items: 0 points{why}"
    return ", ".join(missed) or "-"


def _legend(report: BatchReport) -> str:
    """What the columns mean, with this assignment's numbers."""
    if not report.results:
        return ""
    first = report.results[0]
    pending = sum(i.max_score for i in first.manual_items)
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
    console.print(gradebook_table(report, console.width))
    if list_below(report, console.width):
        console.print(escape(not_passed_list(report)))
    for result in report.results:  # e.g. a notebook naming another student (per-student variants)
        for flag in result.flags:
            console.print(escape(f"flagged: {result.student}: {flag}"))
    for student in off_roster(report):
        console.print(escape(f"flagged: {student}: not on the course roster ({ROSTER_FILE}): graded anyway; check "
                             f"the id, or add it to {ROSTER_FILE} (and build again, for its variant)"))
    console.print(f"graded {len(report.graded)}, skipped {len(report.skipped)}, "
                  f"grader errors {len(report.failed)} in {report.seconds:.1f} s "
                  f"(isolation: {report.isolation}{' + ' + report.quotas if report.quotas else ''}); "
                  f"outputs in {out_dir}/ "
                  "(grades.csv, feedback/, results/)")
    if report.placement:
        console.print(escape(f"CPU placement off (sandboxes may crowd each other's CPUs): {report.placement}"))
    if report.isolation != "bubblewrap":
        Console(file=sys.stderr).print(f"[bold red]{escape(NOT_ISOLATED_WARNING)}[/bold red]")

