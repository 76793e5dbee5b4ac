"""What `python -m autograder grade` shows on the terminal: a progress bar on a TTY (a plain
line per student otherwise) and the gradebook as a table at the end."""

from __future__ import annotations

import sys
from typing import TextIO

from rich.console import Console
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
            line = (f"graded {student}: {points(result.score)} / {points(result.auto_max_score)} auto "
                    f"({points(result.max_score)} total) [{result.isolation}, {result.seconds:.1f} s]")
        if self._progress is not None:
            self._progress.update(self._task, advance=1, last=student)
            if result is None:
                self._progress.console.print(line)
        else:
            self.console.print(line, markup=result is None)


def gradebook_table(report: BatchReport, width: int = 120) -> Table:
    """One row per student: score, maxima, function/report subtotals, items not passed. Every
    column keeps its full width; the last one is cut to what is left of `width`."""
    headers = ("student", "score", "auto max", "max", "functions", "report", "manual")
    rows = []
    for result in report.results:
        functions = [i for i in result.items if i.kind == "function"]
        answers = [i for i in result.items if i.kind in ("number", "choice")]
        manual = sum(i.max_score for i in result.manual_items)
        missed = [i.id for i in result.items if i.status in ("failed", "partial", "error")]
        rows.append([
            result.student, points(result.score), points(result.auto_max_score), points(result.max_score),
            f"{points(sum(i.score for i in functions))}/{points(sum(i.max_score for i in functions))}",
            f"{points(sum(i.score for i in answers))}/{points(sum(i.max_score for i in answers))}",
            f"{points(manual)} pts" if manual else "-",
            ", ".join(missed) or "-"])
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    rest = max(12, width - sum(widths) - 3 * (len(headers) + 1) - 1)
    table = Table(title=f"{report.assignment}: gradebook ({len(report.results)} students)")
    for header, w in zip(headers, widths):
        table.add_column(header, justify="left" if header == "student" else "right", min_width=w, no_wrap=True)
    table.add_column("not passed", no_wrap=True, overflow="ellipsis", max_width=rest)
    for row in rows:
        table.add_row(*row)
    return table


def print_summary(report: BatchReport, out_dir, stream: TextIO = sys.stdout) -> None:
    console = Console(file=stream, highlight=False, width=None if stream.isatty() else 160)
    console.print(gradebook_table(report, console.width))
    console.print(f"graded {len(report.graded)}, skipped {len(report.skipped)}, "
                  f"grader errors {len(report.failed)} in {report.seconds:.1f} s "
                  f"(isolation: {report.isolation}); outputs in {out_dir}/ "
                  "(grades.csv, feedback/, results/)")
    if report.isolation != "bubblewrap":
        Console(file=sys.stderr).print(f"[bold red]{NOT_ISOLATED}[/bold red]")

