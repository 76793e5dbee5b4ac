"""nbgrader's OverwriteCells with the release's cells of a notebook read once, not per cell.

Sanitising a submission (`c.Autograde.sanitize_preprocessors`) restores every grade and locked
cell to the release's version. nbgrader 0.9.6's OverwriteCells asks the gradebook for each cell
with nbgrader metadata (one query for the source cell, one more for a grade cell): lec01's
notebook has ~155 such cells, so ~200 queries a student, the largest part of autograde's time
once no kernel runs. `OverwriteCellsReadOnce` reads the notebook's source, grade and task cells
in four queries and answers those lookups from them; every check, change and warning is
nbgrader's own code, unchanged, but two:
- a cell whose grade_id the release does not have (pasted from another assignment's notebook)
  loses all its nbgrader metadata, not just the grade_id, and becomes an ordinary cell. nbgrader
  leaves it a grade, solution or locked cell without a grade_id, which CheckCellMetadata then
  refuses: the student's whole notebook went unautograded.
- a release cell's flags (grade, solution, task) are the release's, as its type, locked status,
  points and checksum are. nbgrader restores those but keeps the flags the student wrote: an answer
  cell marked `grade` made its next lookup fail (no such grade cell), a free-text answer marked
  no solution failed CheckCellMetadata; either ended that student's autograde on every run.
"""

from __future__ import annotations

from nbgrader.api import Gradebook, GradeCell, MissingEntry, SolutionCell, SourceCell, TaskCell
from nbgrader.preprocessors import OverwriteCells


class ReleaseCells:
    """A gradebook whose `find_source_cell` and `find_graded_cell` for one notebook are answered
    from its cells, read on first use; every other call goes to the gradebook."""

    def __init__(self, gradebook: Gradebook, notebook: str, assignment: str):
        self._gradebook = gradebook
        self._notebook = (notebook, assignment)
        self._cells = None

    def __getattr__(self, name):
        return getattr(self._gradebook, name)

    def __enter__(self) -> ReleaseCells:
        return self

    def __exit__(self, *exc) -> None:
        self._gradebook.close()

    def _read(self) -> tuple[dict, dict, dict, dict]:
        if self._cells is None:
            try:
                notebook = self._gradebook.find_notebook(*self._notebook)
            except MissingEntry:
                self._cells = ({}, {}, {}, {})   # every lookup misses, as each query would
            else:
                db = self._gradebook.db
                self._cells = tuple({cell.name: cell for cell in db.query(kind).filter(kind.notebook_id == notebook.id)}
                                    for kind in (SourceCell, GradeCell, TaskCell, SolutionCell))
        return self._cells

    def flags(self, name: str) -> dict[str, bool] | None:
        """The release's grade, solution and task flags of this notebook's cell `name` (None: no such cell)."""
        source_cells, grade_cells, task_cells, solution_cells = self._read()
        if name not in source_cells:
            return None
        return {"grade": name in grade_cells, "solution": name in solution_cells, "task": name in task_cells}

    def find_source_cell(self, name: str, notebook: str, assignment: str):
        if (notebook, assignment) != self._notebook:
            return self._gradebook.find_source_cell(name, notebook, assignment)
        try:
            return self._read()[0][name]
        except KeyError:
            raise MissingEntry(f"No such source cell: {assignment}/{notebook}/{name}") from None

    def find_graded_cell(self, name: str, notebook: str, assignment: str):
        """A grade cell of that name, else a task cell (nbgrader's order)."""
        if (notebook, assignment) != self._notebook:
            return self._gradebook.find_graded_cell(name, notebook, assignment)
        _, grade_cells, task_cells, _ = self._read()
        cell = grade_cells.get(name) or task_cells.get(name)
        if cell is None:
            raise MissingEntry(f"No such grade cell: {assignment}/{notebook}/{name}")
        return cell


class OverwriteCellsReadOnce(OverwriteCells):
    """In `c.Autograde.sanitize_preprocessors` where nbgrader's OverwriteCells stood."""

    def preprocess(self, nb, resources):
        # nbgrader's OverwriteCells.preprocess, with the gradebook behind ReleaseCells.
        self.notebook_id = resources["nbgrader"]["notebook"]
        self.assignment_id = resources["nbgrader"]["assignment"]
        self.db_url = resources["nbgrader"]["db_url"]
        self.gradebook = ReleaseCells(Gradebook(self.db_url), self.notebook_id, self.assignment_id)
        with self.gradebook:
            nb, resources = super(OverwriteCells, self).preprocess(nb, resources)
            if self.add_missing_cells:
                nb, resources = self.add_missing_grade_cells(nb, resources)
                nb, resources = self.add_missing_task_cells(nb, resources)
        return nb, resources

    def preprocess_cell(self, cell, resources, cell_index):
        had_id = "grade_id" in cell.metadata.get("nbgrader", {})
        if had_id:
            self._restore_flags(cell)
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        if had_id and "grade_id" not in cell.metadata.nbgrader:   # not in the release (nbgrader warned)
            del cell.metadata["nbgrader"]
        return cell, resources


    def _restore_flags(self, cell) -> None:
        """The release's flags on a release cell, before nbgrader's checks read them (a new grade
        cell's points are set by nbgrader's own points check, from a placeholder here)."""
        meta = cell.metadata.nbgrader
        release = self.gradebook.flags(meta["grade_id"])
        if release is None:
            return
        for flag, value in release.items():
            if bool(meta.get(flag, False)) != value:
                self.report_change(meta["grade_id"], flag, value, meta.get(flag, False))
                meta[flag] = value
        if meta["grade"] and "points" not in meta:
            meta["points"] = 0.0
        elif not meta["grade"]:
            meta.pop("points", None)
