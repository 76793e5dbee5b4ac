"""nbgrader autograde's pipeline for this course (listed in nbgrader_config.py): no kernel starts
and no student code runs; every automatic score and every output comes from the trusted grader's
one sandboxed run of the collected files, pinned by `pregrade`.

Order, in nbgrader's own process (trusted):
1. `LoadPinnedResult`: the student's pinned result and executed notebook (pinned.py: checked
   against the manifest and the submitted files), or this student fails with the reason. With
   `c.LoadPinnedResult.pregrade_missing = True` (the hub's formgrader) a student without a current
   pinned result is pregraded first.
2. `WriteExecutedOutputs`: each code cell gets the outputs its submitted version produced in the
   grader's run (executed_outputs.py), where nbgrader would have executed the notebook.
3. nbgrader's IgnorePattern and LimitOutput (the student's metadata stays: the pages' filters keep it inert).
4. `ShowTrustedFeedback`: each automatic grade cell's outputs become the trusted grader's Chinese
   explanation of that item, a text/markdown output (rendered as HTML in the feedback); the cell
   also records the item's title for the feedback's index.
5. `SaveTrustedGrades`: nbgrader's SaveAutoGrades, with the pinned score for every automatic item,
   also for a grade cell the student deleted.
"""

from __future__ import annotations

import functools
import subprocess
import sys

from nbformat import from_dict
from nbgrader import utils
from nbgrader.api import Comment, Grade, Gradebook, GradeCell, MissingEntry, SolutionCell, TaskCell
from nbgrader.preprocessors import NbGraderPreprocessor, SaveAutoGrades
from sqlalchemy.orm import selectinload, undefer
from traitlets import Bool, Integer

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
    pregrade_missing = Bool(False, help=(
        "When a student has no current pinned result, run `python -m autograder pregrade <assignment>` "
        "(trusted, sandboxed; students already pinned are not regraded) and use its result; if pregrade "
        "cannot pin the student, the student fails naming pregrade's reason. For formgrader's autograde "
        "button, which knows nothing of pregrade (deploy/jupyterhub/). Off: autograde requires pregrade.")
    ).tag(config=True)
    pregrade_timeout = Integer(1800, help="seconds pregrade may take before the student fails").tag(config=True)

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        try:
            store = self._store(info["assignment"])
            result = store.result(info["student"])
        except PinError as err:
            if not self.pregrade_missing:
                raise
            self.log.info("%s -> running pregrade first", err)
            self._pregrade(info["assignment"], info["student"])
            store = self._store(info["assignment"])
            result = store.result(info["student"])
        resources[RESOURCE] = result
        resources[EXECUTED] = store.executed(info["student"])
        resources[COURSE] = store.course
        self.log.info("Pinned trusted result of %s: %s / %s automatic points and its executed notebook "
                      "(graded with isolation %s)", info["student"], resources[RESOURCE].score,
                      resources[RESOURCE].auto_max_score, resources[RESOURCE].isolation)
        return nb, resources

    def _pregrade(self, assignment: str, student: str) -> None:
        command = [sys.executable, "-m", "autograder", "pregrade", assignment]
        try:
            done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True,
                                  timeout=self.pregrade_timeout, check=False)
        except subprocess.TimeoutExpired:
            raise PinError(f"{student}: pregrade took longer than {self.pregrade_timeout} s; run "
                           f"`python -m autograder pregrade {assignment}` in the course folder") from None
        for line in done.stderr.splitlines()[-20:]:
            self.log.info("pregrade: %s", line)
        getattr(self.parent, "_cs349e_pinned_stores", {}).pop(assignment, None)  # read the new pins
        if done.returncode not in (0, 1):  # 1: some other student could not be pinned
            reason = " ".join(done.stderr.split())[-600:] or f"exit status {done.returncode}"
            raise PinError(f"{student}: pregrade could not grade the class: {reason}")

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
    """nbgrader's SaveAutoGrades with the pinned score for every automatic item, also for a grade
    cell the student deleted. The submission's grades and comments are read in two queries and
    written in one commit (nbgrader looks each up and commits per cell: ~80 of each a student);
    what is written to each is what SaveAutoGrades writes."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        self.notebook_id, self.assignment_id = info["notebook"], info["assignment"]
        self.student_id, self.db_url = info["student"], info["db_url"]
        result, auto = _pinned(resources), automatic_items(self.assignment_id)
        self.gradebook = Gradebook(self.db_url)
        with self.gradebook:
            grades, self._grades, self._comments = self._read_submission()
            self._auto = auto
            nb, resources = super(SaveAutoGrades, self).preprocess(nb, resources)   # the cells, as nbgrader does
            for grade in grades:
                if grade.name in auto:
                    _pin(grade, result)
            self.gradebook.db.commit()
        return nb, resources

    def _read_submission(self) -> tuple[list, dict, dict]:
        """(every grade, grade cell name -> grade, solution or task cell name -> comment) of this
        notebook of the student's submission; none when it is not in the gradebook."""
        try:
            submission = self.gradebook.find_submission_notebook(self.notebook_id, self.assignment_id, self.student_id)
        except MissingEntry:
            return [], {}, {}
        db = self.gradebook.db
        grades = (db.query(Grade).filter(Grade.notebook_id == submission.id)
                  .options(selectinload(Grade.cell), undefer(Grade.max_score)).all())   # max_score: a query each
        comments = db.query(Comment).filter(Comment.notebook_id == submission.id).options(selectinload(Comment.cell)).all()
        by_name = {grade.name: grade for grade in grades if isinstance(grade.cell, GradeCell)}
        # find_comment: a solution cell of that name, else a task cell
        notes = {c.name: c for kind in (TaskCell, SolutionCell) for c in comments if isinstance(c.cell, kind)}
        return grades, by_name, notes

    def _add_score(self, cell, resources) -> None:
        # nbgrader's _add_score without its query and commit; automatic items are pinned afterwards.
        name = cell.metadata["nbgrader"]["grade_id"]
        if name in self._auto:
            return
        grade = self._grades.get(name)
        if grade is None:
            raise MissingEntry(f"No such grade: {self.assignment_id}/{self.notebook_id}/{name} for {self.student_id}")
        grade.auto_score, _ = utils.determine_grade(cell, self.log)
        grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None

    def _add_comment(self, cell, resources) -> None:
        # nbgrader's _add_comment without its query and commit.
        name = cell.metadata["nbgrader"]["grade_id"]
        comment = self._comments.get(name)
        if comment is None:
            raise MissingEntry(f"No such comment: {self.assignment_id}/{self.notebook_id}/{name} for {self.student_id}")
        unchanged = cell.metadata.nbgrader.get("checksum", None) == utils.compute_checksum(cell)
        comment.auto_comment = "No response." if unchanged and not utils.is_task(cell) else None


def _pin(grade, result: SubmissionResult) -> None:
    try:
        score = result.item(grade.name).score
    except KeyError:
        score = 0.0
    grade.auto_score = min(max(float(score), 0.0), float(grade.max_score))
    grade.needs_manual_grade = grade.manual_score is not None
