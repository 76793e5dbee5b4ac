"""`nbgrader export` with scores as the gradebook means them: rounded to 0.01.

nbgrader's CSV export writes the database's float sums as Python prints them, so 60 + 8.49 of
item scores comes out as 68.49000000000001. The kit's scores are kept to 0.01 (the trusted
grader rounds every item and total there); this exporter writes nbgrader's own CSV, then rounds
its four score columns. Configured in nbgrader_config.py (`c.ExportApp.plugin_class`).
"""

from __future__ import annotations

from pathlib import Path

from nbgrader.plugins.export import CsvExportPlugin

SCORE_COLUMNS = ("raw_score", "late_submission_penalty", "score", "max_score")  # nbgrader's last four
DECIMALS = 2


def rounded(value: str) -> str:
    try:
        return str(round(float(value), DECIMALS))
    except ValueError:
        return value


class RoundedCsvExportPlugin(CsvExportPlugin):
    """nbgrader's CSV export with the score columns rounded to 0.01."""

    def export(self, gradebook) -> None:
        super().export(gradebook)
        path = Path(self.to or "grades.csv")
        lines = path.read_text().splitlines()
        header = lines[0].split(",")
        if tuple(header[-len(SCORE_COLUMNS):]) != SCORE_COLUMNS:   # another nbgrader's layout: leave it
            self.log.warning("%s: unexpected columns %s, scores left unrounded", path, header)
            return
        out = [lines[0]]
        for line in lines[1:]:
            # Names may hold commas (nbgrader does not quote them): the scores are the last four fields.
            head, *scores = line.rsplit(",", len(SCORE_COLUMNS))
            out.append(",".join([head, *map(rounded, scores)]))
        path.write_text("\n".join(out) + "\n")
