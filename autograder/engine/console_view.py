"""What `python -m autograder grade` shows on the terminal: a progress bar on a TTY (a plain
line per student otherwise) and the gradebook as a table at the end."""

from __future__ import annotations

import sys
from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from autograder.engine.batch import BatchReport
from autograder.engine.feedback import points
from autograder.engine.results import SubmissionResult

NOT_ISOLATED = ("WARNING: student code ran WITHOUT bubblewrap (rlimits only): it could read files "
                "outside its folder and reach the network. Install bubblewrap (apt-get install bubblewrap).")


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
                                      TextColumn("{task.fields[last]}"), TimeElapsedColumn(),
                                      console=self.console, transient=False)
            self._task = self._progress.add_task("grading", total=to_grade, last="")
            self._progress.start()

    def on_result(self, student: str, result: SubmissionResult | None, error: str | None) -> None:
        if result is None:
            line = f"[red]grader error[/red] for {student} (nothing written; re-run to retry):\n{error}"
        else:
            pending = points(result.max_score - result.auto_max_score)
            line = (f"graded {student}: {points(result.score)} of {points(result.auto_max_score)} automatic "
                    f"points, {pending} hand-graded pending [{result.isolation}, {result.seconds:.1f} s]")
        if self._progress is not None:
            self._progress.update(self._task, advance=1, last=student)
            if result is None:
                self._progress.console.print(line)
        else:
            self.console.print(line, markup=result is None)


def gradebook_table(report: BatchReport, width: int = 120) -> Table:
    """One row per student: automatic points (all, functions, report answers), the hand-graded
    points still pending, and every automatic item not fully passed (wrapped, never cut)."""
    headers = ("student", "automatic", "functions", "report answers", "hand-graded")
    rows = []
    for result in report.results:
        functions = [i for i in result.items if i.kind == "function"]
        answers = [i for i in result.items if i.kind in ("number", "choice")]
        pending = sum(i.max_score for i in result.manual_items)
        rows.append([
            result.student,
            f"{points(result.score)} / {points(result.auto_max_score)}",
            f"{points(sum(i.score for i in functions))} / {points(sum(i.max_score for i in functions))}",
            f"{points(sum(i.score for i in answers))} / {points(sum(i.max_score for i in answers))}",
            f"{points(pending)} pending" if pending else "-",
            late_cell(result),
            not_passed(result)])
    with_late = any(result.late is not None for result in report.results)
    table = Table(title=f"{report.assignment}: gradebook ({len(report.results)} students)",
                  caption=escape(_legend(report)), caption_justify="left")
    for header in headers:
        table.add_column(header, justify="left" if header == "student" else "right", no_wrap=True)
    if with_late:
        table.add_column("late penalty", justify="right", no_wrap=True)
    else:
        rows = [row[:-2] + row[-1:] for row in rows]
    # The only column that wraps: takes what the others leave of the width, one line per 3-4 items.
    table.add_column("automatic items not passed (points)", ratio=1, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def late_cell(result: SubmissionResult) -> str:
    """"-9.1 (2 d, 10%)" for a late submission, "on time", or "?" without a submission time."""
    late = result.late
    if late is None:
        return "?"
    if late.penalty == 0:
        return "on time" if late.seconds_late == 0 else "0 (grace)" if late.days_charged == 0 else "0"
    return f"-{points(late.penalty)} ({late.days_charged} d, {late.percent:g}%)"


def not_passed(result: SubmissionResult) -> str:
    """Automatic items below full marks with their points, "quantize(8.57/20), q01(0/2)" (no
    space inside an item, so wrapping never splits one); "all N items: 0 points" for nothing."""
    automatic = [i for i in result.items if i.status != "manual"]
    missed = [f"{i.id}({points(i.score)}/{points(i.max_score)})" for i in automatic
              if i.status in ("failed", "partial", "error")]
    if missed and len(missed) == len(automatic) and not any(i.score for i in automatic):
        return f"all {len(automatic)} items: 0 points"
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
    if any(result.late is not None for result in report.results):
        legend += (" late penalty: points taken off the automatic score (grading.toml [late]; "
                   "grades.csv's score is after it); ?: no submission time.")
    return legend


def print_summary(report: BatchReport, out_dir, stream: TextIO = sys.stdout) -> None:
    console = Console(file=stream, highlight=False, width=None if stream.isatty() else 160)
    console.print(gradebook_table(report, console.width))
    console.print(f"graded {len(report.graded)}, skipped {len(report.skipped)}, "
                  f"grader errors {len(report.failed)} in {report.seconds:.1f} s "
                  f"(isolation: {report.isolation}); outputs in {out_dir}/ "
                  "(grades.csv, feedback/, results/)")
    if report.isolation != "bubblewrap":
        Console(file=sys.stderr).print(f"[bold red]{NOT_ISOLATED}[/bold red]")

