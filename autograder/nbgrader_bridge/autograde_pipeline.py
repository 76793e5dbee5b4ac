"""nbgrader autograde's pipeline for this course (listed in nbgrader_config.py): no kernel starts
and no student code runs; every automatic score and every output comes from the trusted grader's
one sandboxed run of the collected files, pinned by `pregrade`.

Order, in nbgrader's own process (trusted):
1. `LoadPinnedResult`: the student's pinned result and executed notebook (pinned.py: checked
   against the manifest and the submitted files), or this student fails with the reason.
2. `WriteExecutedOutputs`: each code cell gets the outputs its submitted version produced in the
   grader's run (executed_outputs.py), where nbgrader would have executed the notebook.
3. nbgrader's IgnorePattern, ClearMetadata, LimitOutput.
4. `ShowTrustedFeedback`: each automatic grade cell's outputs become the trusted grader's Chinese
   explanation of that item, a text/markdown output (rendered as HTML in the feedback); the cell
   also records the item's title for the feedback's index.
5. `SaveTrustedGrades`: nbgrader's SaveAutoGrades, with the pinned score for every automatic item,
   also for a grade cell the student deleted.
"""

from __future__ import annotations

import functools

from nbformat import from_dict
from nbgrader import utils
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor, SaveAutoGrades

from autograder.engine.registry import REPO_ROOT, load_config
from autograder.engine.results import SubmissionResult
from autograder.engine.vocabulary import AUTOMATIC_KINDS
from autograder.nbgrader_bridge.course import load_course
from autograder.nbgrader_bridge.executed_outputs import SubmittedNotebookError, place_outputs, submitted_cells
from autograder.nbgrader_bridge.pinned import PinError, PinnedResults

RESOURCE = "cs349e_pinned"  # resources key: the student's pinned SubmissionResult
EXECUTED = "cs349e_executed"  # resources key: the student's pinned executed notebook
COURSE = "cs349e_course"  # resources key: the course (read once per autograde run)


@functools.cache
def automatic_items(assignment: str) -> frozenset[str]:
    """Items the trusted grader scores by itself (free-text items are graded by hand); read once
    per autograde run."""
    return frozenset(item.id for item in load_config(assignment).items_of(*AUTOMATIC_KINDS))


def _pinned(resources) -> SubmissionResult:
    result = resources.get(RESOURCE)
    if result is None:
        raise RuntimeError("LoadPinnedResult must run first in c.Autograde.autograde_preprocessors")
    return result


class LoadPinnedResult(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        store = self._store(info["assignment"])
        resources[RESOURCE] = store.result(info["student"])
        resources[EXECUTED] = store.executed(info["student"])
        resources[COURSE] = store.course
        self.log.info("Pinned trusted result of %s: %s / %s automatic points and its executed notebook "
                      "(graded with isolation %s)", info["student"], resources[RESOURCE].score,
                      resources[RESOURCE].auto_max_score, resources[RESOURCE].isolation)
        return nb, resources

    def _store(self, assignment: str) -> PinnedResults:
        """Read once per autograde run (one exporter), before the first student is written."""
        exporter = self.parent
        stores = getattr(exporter, "_cs349e_pinned_stores", None)
        if stores is None:
            stores = {}
            setattr(exporter, "_cs349e_pinned_stores", stores)
        if assignment not in stores:
            stores[assignment] = PinnedResults(load_course(REPO_ROOT), assignment)
        return stores[assignment]


class WriteExecutedOutputs(NbGraderPreprocessor):
    """Stands where nbgrader's Execute stood: the outputs come from the pinned executed notebook."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        executed = resources.get(EXECUTED)
        if executed is None:
            raise RuntimeError("LoadPinnedResult must run first in c.Autograde.autograde_preprocessors")
        cells = []
        if executed.get("notebook") == f"{info['notebook']}.ipynb":
            path = resources[COURSE].submitted_folder / info["student"] / info["assignment"] / executed["notebook"]
            try:
                cells = submitted_cells(path)
            except SubmittedNotebookError as err:
                raise PinError(f"{info['student']}: {err}") from None
        placed = place_outputs(nb, cells, executed)
        self.log.info("%s: outputs of %d executed cell(s) written from the trusted grader's run",
                      info["student"], placed)
        return nb, resources


def explanation_output(markdown: str):
    """A display output nbconvert renders as HTML (its text/plain is what a console shows);
    well-formed by construction (nbformat's new_output would validate each one: 2 ms)."""
    return from_dict({"output_type": "display_data", "metadata": {},
                      "data": {"text/markdown": markdown, "text/plain": markdown}})


class ShowTrustedFeedback(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        result = _pinned(resources)
        auto = automatic_items(resources["nbgrader"]["assignment"])
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if not utils.is_grade(cell):
                continue
            try:
                item = result.item(grade_id)
            except KeyError:
                continue
            cell.metadata["cs349e"] = {"title": item.title or item.id}  # the feedback's index names it
            if cell.cell_type == "code" and not utils.is_solution(cell) and grade_id in auto:
                cell.outputs = [explanation_output(item.feedback_md)]
        return nb, resources


class SaveTrustedGrades(SaveAutoGrades):
    def preprocess(self, nb, resources):
        self._result = _pinned(resources)
        self._auto = automatic_items(resources["nbgrader"]["assignment"])
        nb, resources = super().preprocess(nb, resources)
        # Every automatic grade gets its pinned score here, also one whose cell the student deleted.
        with self.gradebook:
            try:
                notebook = self.gradebook.find_submission_notebook(self.notebook_id, self.assignment_id, self.student_id)
            except MissingEntry:
                return nb, resources
            for grade in notebook.grades:
                if grade.name in self._auto:
                    self._pin(grade)
            self.gradebook.db.commit()
        return nb, resources

    def _pin(self, grade) -> None:
        try:
            score = self._result.item(grade.name).score
        except KeyError:
            score = 0.0
        grade.auto_score = min(max(float(score), 0.0), float(grade.max_score))
        grade.needs_manual_grade = grade.manual_score is not None

    def _add_score(self, cell, resources) -> None:
        # Automatic items are pinned in preprocess, after this pass; nbgrader scores only the others.
        if cell.metadata["nbgrader"]["grade_id"] not in self._auto:
            super()._add_score(cell, resources)
