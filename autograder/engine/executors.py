"""Where a batch's submissions are graded: an executor.

`grade_batch` decides who needs grading and writes every output itself; an executor only turns
submissions into results. Each has the same three steps:

- `isolation(asked)`: the isolation its sandboxes will use, as a name (this machine probes its
  own; a cluster's workers probe theirs, so the instructor's side only checks the name);
- `prepare(job, count)`: ready to grade `count` submissions (a fork server, the loaded
  assignment; on a cluster, the connection and the workers' checks);
- `grade_one(submission)`: (result, None), or (None, error text) when the grader itself failed on
  that student; never raises for one student's problem.

`grade_all` runs a whole batch, calling `finish(student, result, error)` in this process as
results arrive. `InProcess` grades one after the other, `ProcessPool` in forked processes; the
Dask executor lives with the cluster code (autograder/cluster/client_side.py), which imports the
engine, never the reverse.
"""

from __future__ import annotations

import multiprocessing
import traceback
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Protocol

from autograder.engine.assignment import load_assignment, warm
from autograder.engine.grader import SANDBOX_ENV, grade_submission
from autograder.engine.locate import StudentFiles
from autograder.engine.reference_measurement import take_for_batch
from autograder.engine.results import SubmissionResult
from autograder.sandbox import Limits, confinement

Outcome = tuple["SubmissionResult | None", "str | None"]
Finish = Callable[[str, "SubmissionResult | None", "str | None"], None]   # (student, result, error)
Started = Callable[[], None]   # called once the executor is ready, before the first result


@dataclass(frozen=True)
class Job:
    """What every submission of one batch is graded with."""

    assignment: str
    limits: Limits
    isolation: str   # a name the executor's `isolation` gave
    figures: bool = False   # draw the notebooks' figures: only where a page shows them (pregrade)


@dataclass(frozen=True)
class Submission:
    """One student's submission: its folder (or, having travelled as a value, its located files
    in memory), and who it is graded as ((student id, where the id came from); None: the
    folder's name is the id)."""

    folder: Path | StudentFiles
    student: tuple[str, str] | None = None

    @property
    def name(self) -> str:
        return self.folder.student if isinstance(self.folder, StudentFiles) else self.folder.name


class Executor(Protocol):
    local: bool   # its sandboxes run on this machine (its quotas and placement are this machine's)

    def isolation(self, asked: str) -> str: ...

    def prepare(self, job: Job, count: int) -> None: ...

    def grade_one(self, submission: Submission) -> Outcome: ...

    def grade_all(self, job: Job, submissions: list[Submission], finish: Finish, started: Started) -> None: ...


def grade_one(job: Job, submission: Submission) -> Outcome:
    """(result, None), or (None, error text) when the grader itself failed on this student."""
    try:
        sid, source = submission.student if submission.student else (None, "folder")
        return grade_submission(job.assignment, submission.folder, limits=job.limits, isolation=job.isolation,
                                student_id=sid, id_source=source, figures=job.figures), None
    except Exception:  # noqa: BLE001 - one student's grading problem must not stop the batch
        return None, traceback.format_exc(limit=8)


def prepare_process(job: Job, *, fork_server: bool) -> None:
    """This process ready to grade: the assignment loaded (processes forked afterwards inherit it)
    and, for several submissions, the fork server its sandboxes' workers are forked from and the
    machine's reference measurement (reference_measurement.py), taken once for all of them."""
    if fork_server:
        from autograder.sandbox import forkserver_client   # (imported here: see forkserver_client.py)
        forkserver_client.prepare(job.isolation)   # it imports while warm() runs
    warm(job.assignment)
    if fork_server:
        take_for_batch(load_assignment(job.assignment), job.isolation, job.limits, SANDBOX_ENV)
        # Waiting for the server (~0.4 s) forks every student's worker alike, instead of
        # starting the first few as fresh interpreters.
        forkserver_client.prepare(job.isolation, wait=30)


def share_key_work(assignment_name: str, submissions: list[Submission]) -> None:
    """Before workers are forked: the first of the batch's variant keys the store lacks is computed
    here, so that every worker inherits what all variants' keys share (reference work that is the
    same for every student, such as lec01's end-to-end forward) instead of each doing it again; the
    other missing keys are left to the workers, in parallel. A student whose id or variant fails is
    left to the worker too, which reports it."""
    assignment = load_assignment(assignment_name)
    if not assignment.variants:
        return
    from autograder.engine.key_cache import is_stored
    from autograder.engine.variants import canonical_json, params_for

    for submission in submissions:
        try:
            params = params_for(assignment_name, submission.student[0] if submission.student else submission.name)
            if not is_stored(assignment_name, canonical_json(params)):
                assignment.key_for(params)
                return
        except Exception:  # noqa: BLE001 - that student's grading reports it
            continue


class InProcess:
    """Grades in this process, one submission after the other."""

    local = True

    def __init__(self) -> None:
        self.job: Job | None = None

    def isolation(self, asked: str) -> str:
        return confinement.choose(asked).name   # probed once, not once per student

    def prepare(self, job: Job, count: int) -> None:
        self.job = job
        if count:
            prepare_process(job, fork_server=count > 1)

    def grade_one(self, submission: Submission) -> Outcome:
        if self.job is None:
            raise RuntimeError("prepare() the executor before grading")
        return grade_one(self.job, submission)

    def grade_all(self, job: Job, submissions: list[Submission], finish: Finish, started: Started) -> None:
        self.prepare(job, len(submissions))
        started()
        for submission in submissions:
            finish(submission.name, *self.grade_one(submission))


class ProcessPool(InProcess):
    """Grades in `jobs` processes forked after `prepare`, so they start warm; results come back
    to this process, which alone writes them."""

    def __init__(self, jobs: int) -> None:
        super().__init__()
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {jobs}")
        self.jobs = jobs

    def grade_all(self, job: Job, submissions: list[Submission], finish: Finish, started: Started) -> None:
        if self.jobs == 1 or len(submissions) <= 1:
            return super().grade_all(job, submissions, finish, started)
        self.prepare(job, len(submissions))
        share_key_work(job.assignment, submissions)
        # Python's pool fails every submission still pending once one of its processes dies (the
        # kernel's OOM killer, a fault): those are graded again in a fresh pool and, where that one
        # dies too, each in a process of its own, so a grading that kills its process costs only
        # its own student, never the classmates queued behind it.
        again = self._pool_round(job, submissions, finish, started, self.jobs)
        if again:
            again = self._pool_round(job, again, finish, lambda: None, self.jobs)
        for submission in again:
            self._pool_round(job, [submission], finish, lambda: None, 1, last=True)

    @staticmethod
    def _pool_round(job: Job, submissions: list[Submission], finish: Finish, started: Started, workers: int,
                    last: bool = False) -> list[Submission]:
        """Grades `submissions` in a pool of `workers` processes forked from this one; returns, in
        their order, those its pool's death cut off (finished with the error instead when `last`)."""
        context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
        pool = ProcessPoolExecutor(max_workers=min(workers, len(submissions)), mp_context=context)
        cut_off: set[int] = set()
        try:
            # Submitting starts the workers; the caller's progress display (a thread) starts after.
            futures: dict[Future, int] = {pool.submit(grade_one, job, s): i for i, s in enumerate(submissions)}
            started()
            for future in as_completed(futures):
                index = futures[future]
                try:
                    result, error = future.result()
                except BrokenProcessPool as exc:
                    if not last:
                        cut_off.add(index)
                        continue
                    result, error = None, f"worker process failed: {exc!r}"
                except Exception as exc:  # noqa: BLE001 - a worker failed: report, keep going
                    result, error = None, f"worker process failed: {exc!r}"
                finish(submissions[index].name, result, error)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return [s for i, s in enumerate(submissions) if i in cut_off]


def local_executor(jobs: int = 1) -> Executor:
    """This machine's executor for `-j jobs`."""
    return InProcess() if jobs == 1 else ProcessPool(jobs)


def submissions_of(folders: Iterable[Path], student_ids) -> list[Submission]:
    """A Submission per folder; `student_ids` (folder name -> (id, source)) names the student of a
    folder not named after them."""
    return [Submission(folder, student_ids.get(folder.name)) for folder in folders]
