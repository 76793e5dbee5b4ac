"""grades.csv and the batch summary's rows, built from each result as the batch has it in hand.

A batch holds every student's result once: a result graded now when it arrives, a stored one
when the skip check reads it. Each becomes its grades.csv row (spooled to a temporary file, its
place noted) and its summary row (gradebook_rows.py: a few numbers), and is dropped, so neither
the instructor's memory nor the end of the batch grows with the results (≈ 0.1 MB each): at the
end only results/ files no student of this run stood for (a folder since removed) are read, one
at a time, and the rows are written out in the order of the students. The file is the same,
byte for byte, as outputs.write_grades_csv rebuilding it from results/.
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from pathlib import Path

from autograder.atomic import atomic_file
from autograder.engine.gradebook_rows import GradebookRow
from autograder.engine.outputs import GRADES_CSV, GRADES_HEAD, RESULTS_DIR, VARIANT_COLUMNS, grades_header, \
    grades_row, read_result
from autograder.engine.registry import GradingConfig
from autograder.engine.results import SubmissionResult


class GradesSheet:
    """Add every result of the run (`add`), then `close()` writes grades.csv and returns the rows."""

    def __init__(self, out: Path, config: GradingConfig):
        self.out, self.config = Path(out), config
        self._spool = tempfile.TemporaryFile("w+b", dir=self.out if self.out.is_dir() else None)
        # student -> their row's place in the spool, offset << 32 | length: one int, not a tuple of two
        self._lines: dict[str, int] = {}
        self._rows: dict[str, GradebookRow] = {}
        self._shared: dict = {}
        self._variants = False

    def add(self, result: SubmissionResult) -> None:
        """The student's row from `result` (a later one of the same student replaces it)."""
        if result.assignment != self.config.assignment:
            return
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerow(grades_row(self.config, result, variants=True))
        data = buffer.getvalue().encode("utf-8", "surrogateescape")
        self._spool.seek(0, io.SEEK_END)
        self._lines[result.student] = self._spool.tell() << 32 | len(data)
        self._spool.write(data)
        self._rows[result.student] = GradebookRow.of(result, self._shared)
        self._variants = self._variants or bool(result.variant)

    def close(self) -> tuple[GradebookRow, ...]:
        """Write grades.csv (every result of this assignment in results/, sorted by student) and
        return the summary's rows in the same order."""
        try:
            folder = self.out / RESULTS_DIR
            # names, not Path objects: 10,000 of those would be most of what a large class holds here
            names = sorted(e.name for e in os.scandir(folder) if e.name.endswith(".json") and not e.name.startswith(".")) \
                if folder.is_dir() else []
            for name in names:
                if name[:-len(".json")] not in self._lines:
                    result = read_result(folder / name)
                    if result is not None:
                        self.add(result)
            students = sorted(self._lines)
            at = len(GRADES_HEAD)
            with atomic_file(self.out / GRADES_CSV) as f:
                writer = csv.writer(f, lineterminator="\n")
                writer.writerow(grades_header(self.config, self._variants))
                for student in students:
                    offset, length = self._lines[student] >> 32, self._lines[student] & 0xFFFFFFFF
                    self._spool.seek(offset)
                    (row,) = csv.reader(io.StringIO(self._spool.read(length).decode("utf-8", "surrogateescape")))
                    writer.writerow(row if self._variants else row[:at] + row[at + len(VARIANT_COLUMNS):])
            return tuple(self._rows[s] for s in students)
        finally:
            self._spool.close()
