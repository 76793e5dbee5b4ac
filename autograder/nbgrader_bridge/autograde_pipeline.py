"""nbgrader autograde's pipeline for this course (listed in nbgrader_config.py): the student's
kernel runs sandboxed, and every automatic score comes from the pinned results, never from it.

Order, in nbgrader's own process (trusted):
1. `LoadPinnedResult`, before any student code runs: the student's pinned result (pinned.py:
   checked against the manifest and the submitted files), or this student fails with the reason.
2. `SandboxedExecute`: nbgrader's Execute with the kernel in bubblewrap (kernel_sandbox.py).
3. nbgrader's IgnorePattern, ClearMetadata, LimitOutput.
4. `ShowTrustedFeedback`: each automatic grade cell's outputs become the trusted grader's Chinese
   explanation of that item, a text/markdown output (rendered as HTML in the feedback), whatever
   the kernel printed there.
5. `SaveTrustedGrades`: nbgrader's SaveAutoGrades, with the pinned score for every automatic item,
   also for a grade cell the student deleted.
"""

from __future__ import annotations

from nbformat.v4 import new_output
from nbgrader import utils
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import Execute, NbGraderPreprocessor, SaveAutoGrades

from autograder.engine.registry import REPO_ROOT, load_config
from autograder.engine.results import SubmissionResult
from autograder.engine.vocabulary import AUTOMATIC_KINDS
from autograder.nbgrader_bridge.course import load_course
from autograder.nbgrader_bridge.isolation import kernel_isolation
from autograder.nbgrader_bridge.kernel_sandbox import SandboxedKernelManager
from autograder.nbgrader_bridge.pinned import PinnedResults

RESOURCE = "cs349e_pinned"  # resources key: the student's pinned SubmissionResult


def automatic_items(assignment: str) -> set[str]:
    """Items the trusted grader scores by itself (free-text items are graded by hand)."""
    return {item.id for item in load_config(assignment).items_of(*AUTOMATIC_KINDS)}


def _pinned(resources) -> SubmissionResult:
    result = resources.get(RESOURCE)
    if result is None:
        raise RuntimeError("LoadPinnedResult must run first in c.Autograde.autograde_preprocessors")
    return result


class LoadPinnedResult(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        isolation = kernel_isolation()  # fail closed before any student code: raises with the fix
        resources[RESOURCE] = self._store(info["assignment"]).result(info["student"])
        self.log.info("Pinned trusted result of %s: %s / %s automatic points (graded with isolation %s); "
                      "kernel isolation: %s", info["student"], resources[RESOURCE].score,
                      resources[RESOURCE].auto_max_score, resources[RESOURCE].isolation, isolation)
        return nb, resources

    def _store(self, assignment: str) -> PinnedResults:
        """Read once per autograde run (one exporter), before the first student's kernel starts:
        no kernel of this run can change what a later student is given."""
        exporter = self.parent
        stores = getattr(exporter, "_cs349e_pinned_stores", None)
        if stores is None:
            stores = {}
            setattr(exporter, "_cs349e_pinned_stores", stores)
        if assignment not in stores:
            stores[assignment] = PinnedResults(load_course(REPO_ROOT), assignment)
        return stores[assignment]


class SandboxedExecute(Execute):
    def __init__(self, *args, **kwargs):
        kwargs["kernel_manager_class"] = SandboxedKernelManager
        super().__init__(*args, **kwargs)


def explanation_output(markdown: str):
    """A display output nbconvert renders as HTML (its text/plain is what a console shows)."""
    return new_output("display_data", data={"text/markdown": markdown, "text/plain": markdown})


class ShowTrustedFeedback(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        result = _pinned(resources)
        auto = automatic_items(resources["nbgrader"]["assignment"])
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if cell.cell_type == "code" and utils.is_grade(cell) and not utils.is_solution(cell) and grade_id in auto:
                try:
                    item = result.item(grade_id)
                except KeyError:
                    continue
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
