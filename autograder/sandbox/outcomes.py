"""What a sandboxed call or notebook run produced, as plain, already-decoded data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CallStatus = Literal["ok", "raised", "timeout", "crashed", "protocol_error", "too_large"]
NotebookStatus = Literal["ok", "timeout", "crashed", "unreadable"]


@dataclass(frozen=True)
class CallOutcome:
    """One call into student code.

    `value` is decoded plain data (None/bool/int/float/str/list/tuple/dict/np.ndarray/np.generic,
    or `Unsupported` for anything else). For "raised", `exc_type` is the exception's class name
    and `exc_mro` every class name in its MRO, so a subclass of ValueError can be recognised.
    "too_large": the value was larger than the call's reply bound (never read by the parent).
    For "timeout", `timeout_cause` says why: "cpu" (its CPU time ran out), "blocked" (it slept or
    waited), "load" (the machine was too busy, even after retries) or "deadline" (the
    submission's time ceiling passed).
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
    timeout_cause: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class NotebookOutcome:
    """One execution of a student's notebook.

    `variables` holds the requested names the notebook defined; a value that cannot cross the
    wire is an `Unsupported` marker. `cell_errors` are (cell index in the notebook, exception
    type, message); execution continues after a failing cell. `cells` holds each code cell's
    outputs as the worker sent them (nbrunner.NotebookRun.cells): untrusted, read through
    autograder.engine.executed_notebook. `overloaded`: a wall-clock guard stopped it while it had
    used less CPU time than its budget (a starved machine, not a slow notebook).
    """

    status: NotebookStatus
    variables: dict[str, object]
    cell_errors: tuple[tuple[int, str, str], ...]
    output: str
    message: str = ""
    seconds: float = 0.0
    cells: tuple = ()
    overloaded: bool = False
