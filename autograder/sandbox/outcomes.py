"""What a sandboxed call or notebook run produced, as plain, already-decoded data."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal

from autograder.errors import InstructorError

CallStatus = Literal["ok", "raised", "timeout", "crashed", "protocol_error", "too_large"]
NotebookStatus = Literal["ok", "timeout", "crashed", "unreadable"]


class TimeoutCause(str, Enum):
    """Why the sandbox stopped a request (clock.Budget.check decides; the sandbox sets it on
    every outcome). LOAD is the one way "the machine was too busy" is said: honest work stopped
    by a wall-clock guard while its sandbox had used less CPU time than its budget."""

    NONE = ""            # not a timeout
    CPU = "cpu"          # its CPU time ran out: the student's
    BLOCKED = "blocked"  # it slept or waited: the student's
    LOAD = "load"        # the machine starved it, even after retries: never the student's
    DEADLINE = "deadline"   # the submission's time ceiling passed: the student's

    def __str__(self) -> str:
        return self.value


class SandboxUnavailable(InstructorError, RuntimeError):
    """The requested isolation cannot be provided on this machine."""


class SandboxError(RuntimeError):
    """The sandbox itself failed (the worker could not start): a configuration problem, never
    something a submission caused."""


class MachineOverloaded(SandboxError):
    """Honest work was stopped by a wall-clock guard while its sandbox had used less CPU time than
    its budget: the machine was too busy, not the code too slow. The grader's error, never a
    student's timeout: the submission gets no result this run (`grade` exits 1 and its next run
    grades it again). Raised only by `refuse_overload`."""


OVERLOADED_ADVICE = ("it had used less CPU time than its budget, so this is not the student's timeout; "
                     "no result was recorded: grade again when the machine is less loaded")


def refuse_overload(cause: "TimeoutCause", what: str) -> None:
    """The one place an overload becomes an error: a request the sandbox stopped for LOAD gives
    no result (never a lower score). `what` names the request in the message."""
    if cause is TimeoutCause.LOAD:
        raise MachineOverloaded(f"machine overloaded: {what}; {OVERLOADED_ADVICE}")


@dataclass(frozen=True)
class CallOutcome:
    """One call into student code.

    `value` is decoded plain data (None/bool/int/float/str/list/tuple/dict/np.ndarray/np.generic,
    or `Unsupported` for anything else). For "raised", `exc_type` is the exception's class name
    and `exc_mro` every class name in its MRO, so a subclass of ValueError can be recognised.
    "too_large": the value was larger than the call's reply bound (never read by the parent).
    For "timeout", `timeout_cause` (a TimeoutCause) says why.
    """

    status: CallStatus
    value: object = None
    exc_type: str | None = None
    exc_message: str | None = None
    output: str = ""
    seconds: float = 0.0
    # Additions beyond the engine's fixed fields:
    exc_mro: tuple[str, ...] = ()
    traceback: str = ""           # frames from the submission's own files only
    during_import: bool = False   # the failure happened while importing the module
    timeout_cause: TimeoutCause = TimeoutCause.NONE

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def overloaded(self) -> bool:
        return self.timeout_cause is TimeoutCause.LOAD


@dataclass(frozen=True)
class NotebookOutcome:
    """One execution of a student's notebook.

    `variables` holds the requested names the notebook defined; a value that cannot cross the
    wire is an `Unsupported` marker. `cell_errors` are (cell index in the notebook, exception
    type, message); execution continues after a failing cell. `cells` holds each code cell's
    outputs as the worker sent them (nbrunner.NotebookRun.cells): untrusted, read through
    autograder.engine.executed_notebook. `timeout_cause` is LOAD when a wall-clock guard stopped
    it while it had used less CPU time than its budget (a starved machine, not a slow notebook).
    """

    status: NotebookStatus
    variables: dict[str, object]
    cell_errors: tuple[tuple[int, str, str], ...]
    output: str
    message: str = ""
    seconds: float = 0.0
    cells: tuple = ()
    timeout_cause: TimeoutCause = TimeoutCause.NONE

    @property
    def overloaded(self) -> bool:
        return self.timeout_cause is TimeoutCause.LOAD
