"""The instructor's side: connect to a scheduler and refuse a cluster that would grade otherwise
than this machine, then map a batch's submissions onto its workers (`DaskExecutor`, the cluster's
executor for engine/batch.py's grade_batch).

At most WINDOW_PER_THREAD submissions per worker thread are in flight: the instructor reads a
submission's files just before sending them, and keeps only the results not yet written, so
its memory does not grow with the class. A worker that dies mid-task is the scheduler's to
handle: it gives the task to another worker (up to `distributed.scheduler.allowed-failures`
times, then the student is reported as failed and a re-run retries them). A task's result
reaches this side once, whichever worker ran it, and only this side writes outputs.
"""

from __future__ import annotations

import time
import traceback
import uuid
from collections import deque
from concurrent.futures import CancelledError

from autograder.cluster.errors import ClusterRefused
from autograder.cluster.kit_version import kit_version, mismatch
from autograder.cluster.parcel import pack
from autograder.engine.assignment import load_assignment
from autograder.engine.executors import Finish, Job, Outcome, Started, Submission
from autograder.engine.registry import GradingConfig

CONNECT_TIMEOUT = 30.0     # seconds to reach the scheduler and for a first worker to join
WINDOW_PER_THREAD = 2      # submissions in flight per worker thread: one graded, one on its way
NO_WORKERS_TIMEOUT = 300.0  # seconds without any worker before the rest of the batch is given up


def connect(address: str, isolation: str, *, timeout: float = CONNECT_TIMEOUT):
    """A distributed.Client to `address` whose every worker runs this kit and can isolate student
    code under `isolation`; raises ClusterRefused with one line otherwise."""
    from autograder.sandbox import confinement

    if not confinement.asked(isolation).sealed_network and not address.startswith("tls://"):
        raise ClusterRefused(
            f"--scheduler with --isolation {isolation} needs a TLS cluster (tls://…) whose credentials student "
            f"code cannot read: under {isolation} student code shares the worker's network, and a plain scheduler "
            f"or worker port runs whatever reaches it; grade under bubblewrap (a network of its own) instead")
    try:
        from distributed import Client
    except ImportError:
        raise ClusterRefused("--scheduler needs dask.distributed: pip install '.[cluster]'") from None
    try:
        client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as err:
        raise ClusterRefused(f"cannot reach the scheduler at {address}: {err}") from None
    try:
        check_workers(client, isolation, timeout=timeout)
    except BaseException:
        client.close()
        raise
    return client


def check_workers(client, isolation: str, *, timeout: float = CONNECT_TIMEOUT) -> int:
    """Refuses (ClusterRefused) unless every worker runs this kit and can isolate student code;
    returns the number of worker threads."""
    from autograder.cluster.worker_side import probe

    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        raise ClusterRefused(f"no worker joined the scheduler at {client.scheduler.address} "
                             f"within {timeout:.0f} s") from None
    ours = kit_version()
    scheduler = client.scheduler.address
    try:   # the scheduler unpickles every task, so it imports the kit too
        theirs = client.run_on_scheduler(kit_version)
    except Exception as err:  # noqa: BLE001 - whatever stops it is named in the line
        raise ClusterRefused(f"the scheduler {scheduler} cannot run the kit ({type(err).__name__}: {err}); start "
                             f"it from the kit's folder with the kit's environment (see the README)") from None
    line = mismatch(f"the scheduler {scheduler}", ours, theirs)
    if line:
        raise ClusterRefused(line)
    for worker, reply in sorted(client.run(probe, isolation, on_error="return").items()):
        if isinstance(reply, BaseException):
            raise ClusterRefused(f"worker {worker} cannot run the kit ({type(reply).__name__}: {reply}); start it "
                                 f"from the kit's folder with the kit's environment (see the README)")
        line = mismatch(f"worker {worker}", ours, reply["kit"])
        if line:
            raise ClusterRefused(line)
        if reply["problem"]:
            raise ClusterRefused(f"worker {worker} cannot isolate student code: {reply['problem']}")
    return _threads(client)


class DaskExecutor:
    """grade_batch's executor on a dask.distributed cluster (engine/executors.py): `prepare`
    connects (refused with one line before anything is graded), `grade_all` maps the batch onto
    the workers with a bounded window, `grade_one` grades one submission there. Each submission
    travels as a Parcel (its bytes, read here just before sending), never as a path."""

    local = False   # the workers' sandboxes: their results record their own quotas and placement

    def __init__(self, address: str) -> None:
        self.address = address
        self.client = None
        self.job: Job | None = None
        self._config: GradingConfig | None = None
        self._batch = uuid.uuid4().hex[:8]
        self._expected: dict = {}

    def isolation(self, asked: str) -> str:
        from autograder.sandbox import confinement

        return confinement.asked(asked).name   # every worker probes its own (worker_side.probe)

    def prepare(self, job: Job, count: int) -> None:
        self.job = job
        self._config = load_assignment(job.assignment).config
        self._expected = kit_version()
        if count and self.client is None:
            self.client = connect(self.address, job.isolation)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None

    def grade_one(self, submission: Submission) -> Outcome:
        """Grades one submission on a worker and waits for it."""
        try:
            parcel = pack(submission.folder, self._config)
        except Exception:  # noqa: BLE001 - as a local run: one student's problem, not the batch's
            return None, traceback.format_exc(limit=4)
        return _outcome(self._submit(submission, parcel))

    def grade_all(self, job: Job, submissions: list[Submission], finish: Finish, started: Started) -> None:
        """Every submission graded on the cluster; `finish(student, result, error)` is called once
        per student, in this process, as results arrive."""
        if not submissions:
            started()
            return
        self.prepare(job, len(submissions))
        try:
            started()
            self._grade_windowed(submissions, finish)
        finally:
            self.close()

    def _submit(self, submission: Submission, parcel):
        from autograder.cluster.worker_side import grade_parcel

        return self.client.submit(grade_parcel, parcel, self.job, self._expected, submission.student,
                                  key=f"grade-{self.job.assignment}-{submission.name}-{self._batch}", pure=False)

    def _grade_windowed(self, submissions: list[Submission], finish: Finish) -> None:
        from distributed import wait

        client = self.client
        todo = deque(submissions)
        in_flight: dict = {}
        no_workers_since = None

        def top_up() -> None:
            window = max(2, WINDOW_PER_THREAD * _threads(client))
            while todo and len(in_flight) < window:
                submission = todo.popleft()
                try:
                    parcel = pack(submission.folder, self._config)
                except Exception:  # noqa: BLE001 - as a local run: one student's problem, not the batch's
                    finish(submission.name, None, traceback.format_exc(limit=4))
                    continue
                in_flight[self._submit(submission, parcel)] = submission.name

        def give_up(reason: str) -> None:
            """Every student not yet finished is reported as a grader failure (a re-run retries them)."""
            for student in [*in_flight.values(), *(s.name for s in todo)]:
                finish(student, None, reason)
            in_flight.clear()
            todo.clear()

        try:
            top_up()
            while in_flight:
                try:
                    with client.as_current():   # `wait` asks for the current client
                        done, _ = wait(list(in_flight), timeout=5, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    if _threads(client):
                        no_workers_since = None
                    else:
                        no_workers_since = no_workers_since or time.monotonic()
                        if time.monotonic() - no_workers_since > NO_WORKERS_TIMEOUT:
                            give_up(f"no worker left on the cluster for {NO_WORKERS_TIMEOUT:.0f} s")
                    continue
                for future in done:
                    student = in_flight.pop(future)
                    finish(student, *_outcome(future))
                top_up()
        except (OSError, CancelledError) as err:   # the scheduler went away: what was written stays
            give_up(f"lost the scheduler {client.scheduler.address} ({type(err).__name__}); re-run to grade the rest")
        finally:
            try:
                client.cancel(list(in_flight))
            except (OSError, CancelledError):
                pass


def _outcome(future) -> Outcome:
    """A finished task's (result, error); a refusing worker stops the batch."""
    try:
        result, error = future.result()
    except ClusterRefused:
        raise
    except Exception as exc:  # noqa: BLE001 - e.g. KilledWorker: reported, re-run retries
        result, error = None, f"the cluster could not grade it: {type(exc).__name__}: {exc}"
    future.release()
    return result, error


def _threads(client) -> int:
    return sum(client.nthreads().values())
