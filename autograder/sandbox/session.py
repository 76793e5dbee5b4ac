"""`Sandbox`: one submission's long-lived worker, restarted after a timeout or a crash.

The parent side of the sandbox. Every value it returns was decoded from plain data (JSON and raw
numeric buffers) that the worker sent; nothing the worker does can reach the parent's objects.
Not thread-safe: use one Sandbox per thread or process.
"""

from __future__ import annotations

import tempfile
import time
import weakref
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Iterable, Mapping, Sequence

from . import confinement, disk_budget, leftovers, placement
from .clock import ACTIVE_SHARE, Budget, PriorityWatch, SampledBudget, Usage
from .codec import Encoder, WireError, check_factory_name
from .launcher import launch_plan
from .limits import Limits
from .messages import NOTEBOOK_NAME, Call, call_outcome, check_call, notebook_outcome
from .outcomes import CallOutcome, MachineOverloaded, NotebookOutcome, SandboxError, TimeoutCause
from .process import WorkerDied, WorkerProcess, WorkerTimeout
from .resources import SandboxResources
from .uids import claim_uid
from .workdir import check_overlay, copy_submission, lay_overlay

_REQUEST_BYTES = 1 << 34     # arguments come from the trusted parent: no practical cap
LOAD_RETRIES = 1             # fresh starts of a request that only load kept from finishing
NOTEBOOK_SAMPLE_SECONDS = 0.5   # how often a running notebook's run-queue wait is read (SampledBudget)


__all__ = ["Call", "MachineOverloaded", "Sandbox", "SandboxError", "Usage"]   # Call: messages.py


class Sandbox:
    """Runs one submission's code in an isolated worker process.

    `workdir_files` (the submission folder) is copied, never modified; the trusted `overlay`
    files (name -> trusted path) replace the student's copies. The worker starts at once, in
    the background; calls import their module on first use. `env` adds environment variables
    for code in the sandbox (the launcher knows no lecture's variables).

    `factories` ("module:qualified.name", e.g. an assignment's `mylib:Thing.from_dict`) are the
    only callables a `Rebuilt` argument may name; the worker resolves them in its trusted
    overlay files. The whole sandbox lives at most `limits.submission_timeout` seconds of wall
    time: past that every request is a timeout and the worker is killed. `isolation` names how
    it is isolated and `quotas` how its memory, processes and CPU are bounded (confinement.py),
    `confinement` both, as results record them ("bubblewrap + cgroup v2"); `cpus` the CPUs every
    process of it runs on (placement.py; () where it was not placed); `private_scratch` whether
    its /tmp and /dev/shm were its own, `disk_cap` how the total it wrote was capped ("tmpfs",
    "watchdog": disk_budget.py), `own_network` and `own_ipc` whether it had those
    namespaces of its own, `own_proc` whether its /proc showed only its own processes (bubblewrap
    always; the uid fallback where the platform allows).
    """

    def __init__(self, workdir_files: Path, *, overlay: Mapping[str, Path] = {},
                 limits: Limits = Limits(),
                 isolation: "str | confinement.Isolation" = confinement.DEFAULT,
                 env: Mapping[str, str] | None = None, factories: Iterable[str] = ()):
        submission = Path(workdir_files)
        if not submission.is_dir():
            raise ValueError(f"submission folder {submission} does not exist or is not a directory")
        if not isinstance(limits, Limits):
            raise ValueError(f"limits must be a Limits, got {type(limits).__name__}")
        trusted = check_overlay(overlay)
        self.factories = tuple(check_factory_name(name) for name in factories)
        self.limits = limits
        self.ceiling = time.monotonic() + limits.submission_timeout
        chosen = confinement.choose(isolation)
        self.isolation = chosen.name
        self._failed_imports: dict[str, CallOutcome] = {}
        self._stopped_by_load = False
        self._usage = Usage(0.0, 0.0, 0.0)   # summed over requests: see deadline_cause()
        self._priority = PriorityWatch()   # a reading saw it below the grader's priority?
        self._started_once = False   # a worker got ready: student code may have run since
        self.quotas = confinement.NO_QUOTA.name
        self.private_scratch = chosen.private_scratch   # a started fallback worker may add it
        # bubblewrap's by construction; a started fallback worker may add them
        self.own_network = self.own_ipc = chosen.sealed_network
        self.own_proc = chosen.sealed_network   # bubblewrap's pid namespace; the fallback's /proc where mounted
        self.disk_cap = disk_budget.TMPFS if chosen.private_scratch else ""   # a started worker says (resources.py)
        self.cpus: tuple[int, ...] = ()   # the CPUs its processes run on; () where not placed
        root = Path(tempfile.mkdtemp(prefix="cs349e-sandbox-"))
        self._resources = SandboxResources(root)
        self._finalizer = weakref.finalize(self, self._resources.release)
        try:
            self.workdir = root / "submission"
            self.skipped_files = tuple(copy_submission(submission, self.workdir))
            lay_overlay(self.workdir, trusted)
            # CPUs of its own while the machine has enough (placement.py), kept by restarted workers.
            self._resources.cpus = placement.claim(limits.cpu_share)
            self.cpus = self._resources.cpus.cpus if self._resources.cpus else ()
            if chosen.claims_uid():
                # A uid of its own for this Sandbox's whole life (restarted workers keep it).
                self._resources.uid = claim_uid(leftovers.swept_again if chosen.reaps_by_uid else None)
                self._plan = launch_plan(chosen, self.workdir, root, limits,
                                         uid=self._resources.uid, env=env, cpus=self.cpus)
                self._resources.sweep_uid = self._plan.backend.reaps_by_uid
            else:
                self._plan = launch_plan(chosen, self.workdir, root, limits, env=env, cpus=self.cpus)
            # by the quota backend chosen once per process (NoQuota where no group could be made)
            quota, self._resources.cgroup = confinement.sandbox_group(limits)
            self.quotas = quota.name
            self._resources.worker = self._start_worker()
        except BaseException:
            self.close()
            raise

    @property
    def confinement(self) -> str:
        """Isolation and quotas in one phrase, e.g. "bubblewrap + cgroup v2"."""
        return f"{self.isolation} + {self.quotas}"

    @property
    def host_uid(self) -> int | None:
        """The host uid the worker switches to (a root grader), or None where it keeps the
        grader's own (bubblewrap in a user namespace, or root where no switch is possible)."""
        return self._plan.drop_to[0] if self._plan.drop_to else None

    # -- context manager -------------------------------------------------------------------
    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        """Kills the worker and everything it started, and removes the private copy."""
        self._finalizer()

    # -- calls -----------------------------------------------------------------------------
    def call(self, module: str, function: str, args: tuple = (), kwargs: dict | None = None, *,
             timeout: float | None = None, reply_bytes: int | None = None) -> CallOutcome:
        """Imports `module` in the worker on first use, then returns module.function(*args, **kwargs).

        Arguments are plain data, numpy arrays and `Rebuilt` values of declared factories."""
        return self.call_many([Call(module, function, tuple(args), kwargs, reply_bytes)], timeout=timeout)[0]

    def call_many(self, calls: Iterable[Call], *, timeout: float | None = None) -> list[CallOutcome]:
        """Like `call` for each of `calls`, in order, in one round trip where possible; each call
        still has its own timeout, output and outcome. After a timeout or crash the rest run in a
        fresh worker."""
        calls = list(calls)
        for call in calls:
            check_call(call)
        timeout = self.limits.call_timeout if timeout is None else timeout
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        outcomes: list[CallOutcome] = []
        load_retries = 0
        while len(outcomes) < len(calls):
            call = calls[len(outcomes)]
            if call.module in self._failed_imports:
                outcomes.append(self._failed_imports[call.module])
                continue
            if self._out_of_time():
                outcomes.append(self._deadline_outcome(f"{call.module}.{call.function}"))
                continue
            worker = self._ready_worker()
            if call.module not in worker.imported:
                self._import(worker, call.module)
                continue
            batch = []
            for pending in calls[len(outcomes):]:
                if pending.module not in worker.imported:
                    break
                batch.append(pending)
            self._stopped_by_load = False
            done = self._run_batch(worker, batch, timeout, retry_load=load_retries < LOAD_RETRIES)
            self._resources.disk_overrun()   # a crash the watchdog caused by failing is no outcome
            outcomes += done
            if self._stopped_by_load:   # the same call runs again, in a fresh worker
                load_retries = 1 if done else load_retries + 1
            else:
                load_retries = 0
        return outcomes

    def import_check(self, module: str) -> CallOutcome:
        """Imports `module`; value = sorted names of its public callables."""
        check_call(Call(module, "_"))
        if module in self._failed_imports:
            return self._failed_imports[module]
        if self._out_of_time():
            return replace(self._deadline_outcome(f"importing {module}"), during_import=True)
        return self._import(self._ready_worker(), module)

    # -- notebook --------------------------------------------------------------------------
    def run_notebook(self, name: str, variables: Sequence[str], *, read_only: bool = False) -> NotebookOutcome:
        """Executes the notebook `name` (relative to the submission) in a fresh child of the worker and
        returns the requested variables it defined; `read_only`: only reads it ("ok", "unreadable")."""
        rel = PurePosixPath(name)
        if not name or rel.is_absolute() or ".." in rel.parts:
            raise ValueError(f"notebook name {name!r} must be a relative path inside the submission")
        variables = list(variables)
        for var in variables:
            if not isinstance(var, str) or not NOTEBOOK_NAME.match(var):
                raise ValueError(f"variable name {var!r} is neither a Python identifier nor module:attribute")
        start = time.monotonic()
        if self._out_of_time():
            self._resources.stop_worker()
            stopped = self._resources.disk_overrun()   # the watchdog's reason, else the ceiling
            return NotebookOutcome("crashed" if stopped else "timeout", {}, (), "", stopped or self._ceiling_text(),
                                   0.0, timeout_cause=TimeoutCause.NONE if stopped else self.deadline_cause())
        worker = self._ready_worker()
        request_id = worker.new_id()
        request = Encoder(_REQUEST_BYTES).frame({
            "op": "notebook", "id": request_id, "path": str(rel), "variables": variables,
            "cell_timeout": self.limits.cell_timeout, "seconds": self.limits.notebook_timeout,
            **({"read_only": True} if read_only else {})})
        worker.discard_output()
        worker.expect([request_id])
        # The cells' CPU timers run in the worker; this ends a notebook that stopped yielding to
        # them (judged on the sandbox's CPU time as a call is: one only a busy machine held back
        # is "load"), or that reaches the submission's ceiling.
        budget = SampledBudget(_notebook_backstop(self.limits.notebook_timeout),
                               self._priority.watch(worker.meter()), self.ceiling,
                               every=NOTEBOOK_SAMPLE_SECONDS)
        used_before = self._sandbox_cpu()
        try:
            worker.send(request, budget)
            header, body = worker.receive(budget)
            outcome = notebook_outcome(header, body, request_id, variables,
                                             worker.take_output(request_id), time.monotonic() - start)
            if outcome.overloaded and not self._starved(used_before, outcome.seconds, budget.waited()):
                # it used its CPU share, or slept: its own time
                outcome = replace(outcome, timeout_cause=TimeoutCause.NONE)
            return outcome
        except WorkerTimeout as exc:
            output = self._stop_worker(worker, request_id)
            message = (self._ceiling_text() if exc.cause is TimeoutCause.DEADLINE else
                       f"the notebook did not finish within {self.limits.notebook_timeout:g} s")
            cause = self.deadline_cause() if exc.cause is TimeoutCause.DEADLINE else exc.cause
            return NotebookOutcome("timeout", {}, (), output, message, time.monotonic() - start,
                                   timeout_cause=cause)
        except WorkerDied as exc:
            output = self._stop_worker(worker, request_id)
            self._resources.disk_overrun()   # a crash the watchdog caused by failing is no outcome
            return NotebookOutcome("crashed", {}, (), output, str(exc), time.monotonic() - start)
        except WireError as exc:
            output = self._stop_worker(worker, request_id)
            return NotebookOutcome("crashed", {}, (), output, f"malformed reply: {exc}",
                                   time.monotonic() - start)

    # -- internals -------------------------------------------------------------------------
    def _ready_worker(self) -> WorkerProcess:
        if not self._finalizer.alive:
            raise SandboxError("the sandbox is closed")
        worker = self._resources.worker
        if worker is None or not worker.alive:
            self._resources.stop_worker()
            worker = self._resources.worker = self._start_worker()
        try:
            worker.wait_ready(self.limits.start_timeout)
        except (WorkerDied, WorkerTimeout, WireError) as exc:
            output = worker.take_output(0)
            self._resources.stop_worker()
            if worker.forked:
                # Start this worker the usual way. If no student code ran in this sandbox yet,
                # the fork server failed, not the submission: no later worker is forked either.
                if not self._started_once:
                    from . import forkserver_client   # (imported here: see forkserver_client.py)
                    forkserver_client.give_up(f"{exc or 'no reply in time'} {output}".strip())
                worker = self._resources.worker = self._start_worker(fork_server=False)
                return self._ready_worker()
            raise SandboxError(f"the sandbox worker did not start ({self.isolation}): "
                               f"{exc or 'no reply in time'}\n{output}") from None
        self._started_once = True
        self.private_scratch = self.private_scratch or worker.private_scratch
        self.own_network = self.own_network or worker.own_network
        self.own_ipc = self.own_ipc or worker.own_ipc
        self.own_proc = self.own_proc or worker.own_proc
        self.disk_cap = self._resources.cap_disk(worker, self.limits)
        return worker

    def _start_worker(self, fork_server: bool = True) -> WorkerProcess:
        return WorkerProcess(self._plan, self.limits, factories=self.factories,
                             cgroup=self._resources.cgroup, fork_server=fork_server)

    def _sandbox_cpu(self) -> float | None:
        return self._resources.cgroup.cpu_seconds()

    def _starved(self, used_before: float | None, seconds: float, waited: float | None) -> bool:
        """Did the sandbox get well under its CPU share over the last `seconds` of wall time,
        while on a CPU or waiting for one (`waited`: its tasks' run-queue wait meanwhile) at least
        half of it? Only its cgroup (every process, dead ones included) can say; without one, no:
        the worker's own view cannot tell a starved machine from the sandbox's own processes
        using up its share. Nor is a notebook asleep starved: the worker's word that it was (its
        `overloaded` flag, which student code sets) made a notebook that slept 2 s a grader error
        on every run, never graded."""
        used_after = self._sandbox_cpu()
        if used_before is None or used_after is None or waited is None or self._priority.lowered:
            return False
        used = used_after - used_before
        return used < ACTIVE_SHARE * self.limits.cpu_share * seconds and used + waited >= ACTIVE_SHARE * seconds

    def _out_of_time(self) -> bool:   # or stopped for good by the watchdog for what it wrote
        return time.monotonic() >= self.ceiling or self._resources.disk_overrun() is not None

    def _ceiling_text(self) -> str:
        return (f"the submission's time ceiling ({self.limits.submission_timeout:g} s for all its "
                f"calls and its notebook) has passed")

    def _deadline_outcome(self, what: str) -> CallOutcome:
        self._resources.stop_worker()
        if self._resources.disk_overrun() is not None:
            return CallOutcome("crashed", exc_message=self._resources.disk_overrun())
        if self.deadline_cause() is TimeoutCause.LOAD:
            return CallOutcome("timeout", timeout_cause=TimeoutCause.LOAD, exc_message=(
                f"{what} was not run: {self._ceiling_text()} while the machine starved the sandbox"))
        return CallOutcome("timeout", exc_message=f"{what} was not run: {self._ceiling_text()}",
                           timeout_cause=TimeoutCause.DEADLINE)

    def _stop_worker(self, worker: WorkerProcess, request_id: int) -> str:
        """Kills the worker (the next request starts a fresh one); returns the request's output."""
        worker.kill()
        if self._resources.worker is worker:
            self._resources.worker = None
        return worker.take_all_output(request_id)

    def _import(self, worker: WorkerProcess, module: str) -> CallOutcome:
        for attempt in range(LOAD_RETRIES + 1):
            request_id = worker.new_id()
            request = Encoder(_REQUEST_BYTES).frame({"op": "import", "id": request_id, "module": module})
            outcomes = self._exchange(worker, request, [request_id], self.limits.import_timeout,
                                      what=f"importing {module}", retry_load=attempt < LOAD_RETRIES)
            if outcomes:
                break
            worker = self._ready_worker()   # only load stopped it: import again in a fresh worker
        outcome = outcomes[0]
        self._resources.disk_overrun()   # a crash the watchdog caused by failing is no outcome
        if outcome.status == "ok":
            names = outcome.value
            if isinstance(names, list) and all(isinstance(n, str) for n in names):
                worker.imported.add(module)
                return outcome
            outcome = CallOutcome("protocol_error", exc_message="import reply is not a list of names",
                                  output=outcome.output, seconds=outcome.seconds)
        outcome = replace(outcome, during_import=True)
        self._failed_imports[module] = outcome
        return outcome

    def _run_batch(self, worker: WorkerProcess, batch: list[Call], timeout: float, *,
                   retry_load: bool) -> list[CallOutcome]:
        ids = [worker.new_id() for _ in batch]
        encoder = Encoder(_REQUEST_BYTES, strict=True, factories=self.factories)
        bounds = [self._reply_bound(call) for call in batch]
        # Reply bounds stay here: they come from the expected answers, and student code reads its request.
        specs = [{"id": request_id, "module": call.module, "function": call.function,
                  "args": encoder.value(tuple(call.args)), "kwargs": encoder.value(dict(call.kwargs or {}))}
                 for request_id, call in zip(ids, batch)]
        request = encoder.frame({"op": "calls", "calls": specs})
        return self._exchange(worker, request, ids, timeout, bounds=bounds, retry_load=retry_load,
                              what=lambda i: f"{batch[i].module}.{batch[i].function}")

    def _reply_bound(self, call: Call) -> int:
        bound = call.reply_bytes
        if bound is None:
            return self.limits.result_bytes
        if isinstance(bound, bool) or not isinstance(bound, int) or bound <= 0:
            raise ValueError(f"reply_bytes of {call.function} must be a positive int, got {bound!r}")
        return min(bound, self.limits.result_bytes)

    def _exchange(self, worker, request: bytes, ids: list[int], timeout: float, what, *,
                  bounds: list[int] | None = None, retry_load: bool = False) -> list[CallOutcome]:
        """Sends one request and reads one reply per id, each with `timeout` seconds of the
        sandbox's CPU time (clock.Budget). Stops at the first timeout, crash or malformed reply
        (the worker is then gone). A request that only load kept from finishing ends the list
        without an outcome when `retry_load` (the caller starts it again in a fresh worker)."""
        describe = what if callable(what) else (lambda _i: what)
        outcomes = []
        worker.discard_output()
        worker.expect(ids)
        meter = self._priority.watch(worker.meter())
        budget = Budget(timeout, meter, self.ceiling)
        start, first = time.monotonic(), meter()
        try:
            worker.send(request, budget)
            for index, request_id in enumerate(ids):
                header, body = worker.receive(budget, bounds[index] if bounds else None, request_id)
                if header.get("id") != request_id:
                    raise WireError(f"reply for request {str(header.get('id'))[:20]} while waiting "
                                    f"for {request_id}")
                outcomes.append(call_outcome(header, body, worker.take_output(request_id),
                                              time.monotonic() - budget.start))
                del header, body   # a reply is judged by the caller; nothing of it stays here
                budget = Budget(timeout, meter, self.ceiling)
        except WorkerTimeout as exc:
            self._count(first, meter(), time.monotonic() - start)   # before its tasks are gone
            request_id = ids[len(outcomes)]
            output = self._stop_worker(worker, request_id)
            if exc.cause is TimeoutCause.LOAD and retry_load:
                self._stopped_by_load = True
                return outcomes
            cause = self.deadline_cause() if exc.cause is TimeoutCause.DEADLINE else exc.cause
            outcomes.append(CallOutcome(
                "timeout", exc_message=self._timeout_text(describe(len(outcomes)), timeout, cause),
                output=output, seconds=time.monotonic() - budget.start, timeout_cause=cause))
            return outcomes
        except WorkerDied as exc:
            request_id = ids[len(outcomes)]
            output = self._stop_worker(worker, request_id)
            outcomes.append(CallOutcome("crashed", exc_message=str(exc), output=output,
                                        seconds=time.monotonic() - budget.start))
        except WireError as exc:
            request_id = ids[len(outcomes)]
            output = self._stop_worker(worker, request_id)
            outcomes.append(CallOutcome("protocol_error", exc_message=f"malformed reply: {exc}",
                                        output=output, seconds=time.monotonic() - budget.start))
        self._count(first, meter(), time.monotonic() - start)
        return outcomes

    def _count(self, first, last, wall: float) -> None:
        if first is None or last is None:
            return
        cpu = max(last[0] - first[0], 0.0)
        self._usage = Usage(self._usage.wall + wall, self._usage.cpu + cpu,
                            self._usage.active + cpu + max(last[1] - first[1], 0.0))

    def usage(self) -> "Usage":
        """Wall, CPU and CPU-or-waiting-for-one seconds of this sandbox's requests so far."""
        return self._usage

    def deadline_cause(self, since: "Usage" = Usage(0.0, 0.0, 0.0)) -> TimeoutCause:
        """Why a wall-clock deadline that passed since `since` (an earlier `usage()`) passed:
        LOAD when its requests were runnable at least half their wall time (computing or waiting
        for a CPU, not sleeping) yet given less than half the CPU time its share allows (the
        machine's doing), else DEADLINE. A submission that keeps its own share busy (spinning
        processes) is not starved."""
        wall = self._usage.wall - since.wall
        cpu = self._usage.cpu - since.cpu
        active = self._usage.active - since.active
        starved = (wall > 0 and active >= ACTIVE_SHARE * wall and not self._priority.lowered
                   and cpu < ACTIVE_SHARE * self.limits.cpu_share * wall)
        return TimeoutCause.LOAD if starved else TimeoutCause.DEADLINE

    def _timeout_text(self, what: str, timeout: float, cause: TimeoutCause) -> str:
        if cause is TimeoutCause.DEADLINE:
            return f"{what} was stopped: {self._ceiling_text()}"
        if cause is TimeoutCause.BLOCKED:
            return f"{what} did not finish within {timeout:g} s (it was sleeping or blocked, not computing)"
        if cause is TimeoutCause.LOAD:
            return f"{what} did not finish within {timeout:g} s of CPU time under heavy machine load"
        return f"{what} did not finish within {timeout:g} s of CPU time"

def _notebook_backstop(notebook_timeout: float) -> float:
    """The parent's hard deadline: the worker's own deadline (checked between cells) fires
    first; this only ends a notebook that stopped yielding to its cell timer."""
    return notebook_timeout * 1.02 + 1.0
