"""Grade a folder of submissions, in parallel, resumably.

- A student whose results file exists and whose graded files and grading config are unchanged
  (same fingerprint) is skipped unless `force`: re-running a killed batch loses nothing and
  grades nobody twice.
- An executor (executors.py) grades the rest: in this process, in `jobs` forked worker
  processes (forked after the hidden tests, their hypothesis examples and the machine's
  reference measurement are prepared, so workers start warm), or on a cluster's workers
  (autograder/cluster/client_side.DaskExecutor), with the same sandbox and engine; the trusted
  parent alone writes the outputs, atomically, as results arrive.
- grades.csv is built from each result as the batch has it (graded now, or read by the skip
  check), complete and sorted, and the report keeps a gradebook row per student
  (grades_sheet.py, gradebook_rows.py), never the results: the instructor's memory stays flat in
  the class's size and no result is read back at the end.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Callable, Mapping

from autograder.engine.assignment import load_assignment
from autograder.engine.executors import Executor, Job, local_executor, submissions_of
from autograder.engine.gradebook_rows import GradebookRow
from autograder.engine.grades_sheet import GradesSheet
from autograder.engine.locate import locate, student_folders
from autograder.engine.outputs import read_result, results_path, write_result
from autograder.engine.registry import ConfigError
from autograder.engine.results import SubmissionResult
from autograder.sandbox import Limits, confinement

OnStart = Callable[[int, int], None]  # (students to grade now, students skipped)
OnResult = Callable[[str, "SubmissionResult | None", "str | None"], None]  # (student, result, error)


@dataclass(frozen=True)
class BatchReport:
    assignment: str
    results: tuple[GradebookRow, ...]  # a row for everyone in results/, sorted by student
    graded: tuple[str, ...]  # graded in this run
    skipped: tuple[str, ...]  # already graded, unchanged
    failed: tuple[tuple[str, str], ...]  # (student, internal error): nothing written for them
    isolation: str  # how this run isolated student code
    seconds: float
    # How this run's sandboxes had their memory, processes and CPU bounded, as the results graded
    # in it record (on a cluster: its workers'), and why sandboxes were not placed on CPUs of
    # their own ("" where they were).
    quotas: str = ""
    placement: str = ""
    missing_quotas: str = ""  # what a run without a cgroup per sandbox lacked, and how to get it (cgroup_scope.py)


def grade_batch(assignment: str, submissions: Path, out: Path, *, jobs: int = 1, force: bool = False,
                limits: Limits | None = None, isolation: str = confinement.DEFAULT.name,
                on_start: OnStart | None = None, on_result: OnResult | None = None,
                due: datetime | None = None, executor: Executor | None = None,
                student_ids: Mapping[str, tuple[str, str]] | None = None, figures: bool = False,
                extensions: Mapping[str, timedelta] | None = None) -> BatchReport:
    """`executor` grades the submissions that need it (default: this machine's, `jobs` at a
    time). `student_ids` (folder name -> (student id, where it came from)) names the student of a
    folder whose name is not their id (the Gradescope runner's one folder); others are their
    folder's name. It decides the variant of an assignment with per-student variants.
    `extensions` (student id -> timedelta, nbgrader's gradebook) move that student's own `due`.
    `figures`: draw the notebooks' figures (grader.grade_submission), for `pregrade`'s pages."""
    started = time.perf_counter()
    ids = dict(student_ids or {})
    submissions, out = Path(submissions), Path(out)
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    if not submissions.is_dir():
        raise ConfigError(f"submissions folder {submissions} does not exist")
    config = load_assignment(assignment).config
    executor = executor or local_executor(jobs)
    isolation = executor.isolation(isolation)
    limits = limits or Limits()

    pending, skipped = [], []
    from autograder.engine.lateness import load_policy, stamp   # lazily: see lateness.py

    policy = load_policy(config)   # lateness is re-judged every run: a changed due date needs no regrade

    def due_of(folder_name: str) -> datetime | None:
        student = ids[folder_name][0] if folder_name in ids else folder_name
        extension = (extensions or {}).get(student)
        return due + extension if due is not None and extension else due
    folders = {folder.name: folder for folder in student_folders(submissions)}
    sheet = GradesSheet(out, config)   # every result in hand becomes its rows, then is dropped
    for folder in folders.values():
        previous = None if force else read_result(results_path(out, folder.name))
        same_student = folder.name not in ids or (previous is not None and previous.student_id == ids[folder.name][0])
        if same_student and locate(folder, config).graded_by(previous, config, isolation):  # a lower isolation is regraded
            skipped.append(folder.name)
            judged = stamp(previous, folder, due_of(folder.name), policy)
            if judged != previous:
                write_result(out, judged)
            sheet.add(judged)
        else:
            pending.append(folder)

    graded, failed = [], []
    confined: list[tuple[str, bool | None]] = []   # (quotas, placed) of each result graded now

    def finish(student: str, result: SubmissionResult | None, error: str | None) -> None:
        if result is not None:
            try:
                result = stamp(result, folders[student], due_of(student), policy)
                write_result(out, result)
            except Exception as exc:   # noqa: BLE001 - one student's result never ends the class's batch
                result, error = None, f"its result could not be written ({type(exc).__name__}: {exc})"
        if result is not None:
            sheet.add(result)
            graded.append(student)
            if result.quotas:
                confined.append((result.quotas, result.placed))
        else:
            failed.append((student, error or "unknown error"))
        if on_result:
            on_result(student, result, error)

    def begun() -> None:
        if on_start:
            on_start(len(pending), len(skipped))

    executor.grade_all(Job(assignment, limits, isolation, figures), submissions_of(pending, ids), finish, begun)

    rows = sheet.close()
    quotas, placement = _confinement_of(confined, limits, local=executor.local, pending=bool(pending))
    return BatchReport(config.assignment, rows, tuple(sorted(graded)), tuple(skipped),
                       tuple(sorted(failed)), isolation, round(time.perf_counter() - started, 3),
                       quotas, placement,
                       missing_quotas=_missing_quotas() if executor.local and pending else "")


def _missing_quotas() -> str:
    from autograder.sandbox.cgroup_scope import missing_quotas   # (lazily: see forkserver_client.py)

    return missing_quotas() or ""


def _confinement_of(confined: list[tuple[str, bool | None]], limits: Limits, *, local: bool,
                    pending: bool) -> tuple[str, str]:
    """(quotas, why not placed) of a run: what its results record where it graded any (on a
    cluster the workers' own), else what this machine would use."""
    quotas = " / ".join(sorted({q for q, _ in confined}))
    unplaced = sum(placed is False for _, placed in confined)
    if local:
        from autograder.sandbox import placement   # (lazily: see forkserver_client.py)
        return quotas or confinement.quotas().name, (placement.problem(limits.cpu_share) or "") if pending else ""
    if unplaced:
        return quotas, f"{unplaced} of {len(confined)} sandbox(es) ran unplaced on the cluster's workers"
    return quotas, ""


