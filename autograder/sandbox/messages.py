"""The two ends of the wire as plain data: what a request may name (`Call`, checked before it is
sent) and the outcome a reply decodes to. Every reply is untrusted: a field of the wrong type
or size becomes a protocol error, never an object of the worker's choosing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from .codec import Decoder, WireError
from .outcomes import CallOutcome, NotebookOutcome, TimeoutCause

MODULE_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
# a notebook variable, or "module:attribute" of a module the notebook imported (worker.py)
NOTEBOOK_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$|^[A-Za-z_]\w*$")
MAX_CELL_INDEX = 1_000_000   # more cells than any notebook the sandbox accepts


@dataclass(frozen=True)
class Call:
    """One function call for `Sandbox.call_many`."""

    module: str
    function: str
    args: tuple = ()
    kwargs: Mapping[str, object] | None = None
    # Largest reply accepted for this call, in wire bytes of the value (None: Limits.result_bytes).
    # Never sent to the worker (callers derive it from the expected answer): a larger reply is
    # refused from the frame's prefix and read away unkept; the outcome is "too_large", and
    # nothing of the value is ever allocated here.
    reply_bytes: int | None = None


def check_call(call: Call) -> None:
    if not isinstance(call, Call):
        raise ValueError(f"call_many takes Call objects, got {type(call).__name__}")
    if not isinstance(call.module, str) or not MODULE_NAME.match(call.module):
        raise ValueError(f"module name {call.module!r} is not a dotted Python name")
    if not isinstance(call.function, str) or not IDENTIFIER.match(call.function):
        raise ValueError(f"function name {call.function!r} is not a Python identifier")
    if call.kwargs is not None and not (isinstance(call.kwargs, Mapping)
                                        and all(isinstance(k, str) for k in call.kwargs)):
        raise ValueError(f"kwargs of {call.function} must be a mapping with str keys")


def call_outcome(header: dict, body: bytes, output: str, seconds: float) -> CallOutcome:
    """A CallOutcome from an untrusted reply; a malformed value becomes protocol_error."""
    status = header.get("status")
    try:
        if status == "ok":
            return CallOutcome("ok", value=Decoder(body).value(header.get("value")), output=output,
                               seconds=seconds)
        if status == "too_large":
            return CallOutcome("too_large", exc_message=_text(header.get("exc_message"), 2000),
                               output=output, seconds=seconds)
        if status == "raised":
            mro = header.get("exc_mro", [])
            return CallOutcome(
                "raised", exc_type=_text(header.get("exc_type"), 200) or "?",
                exc_message=_text(header.get("exc_message"), 2000), output=output, seconds=seconds,
                exc_mro=tuple(_text(n, 200) for n in mro[:50]) if isinstance(mro, list) else (),
                traceback=_text(header.get("traceback"), 4000),
                during_import=header.get("during_import") is True)
    except WireError as exc:
        return CallOutcome("protocol_error", exc_message=f"malformed value: {exc}", output=output,
                           seconds=seconds)
    return CallOutcome("protocol_error", exc_message=f"unknown reply status {str(status)[:40]!r}",
                       output=output, seconds=seconds)


def _text(value: object, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


def notebook_outcome(header: dict, body, request_id: int, requested: list[str], output: str,
                     seconds: float) -> NotebookOutcome:
    status = header.get("status")
    if header.get("id") != request_id or status not in ("ok", "timeout", "crashed", "unreadable"):
        raise WireError("notebook reply has the wrong id or status")
    nodes = header.get("variables")
    errors = header.get("cell_errors")
    message = header.get("message")
    if not isinstance(nodes, dict) or not isinstance(errors, list) or not isinstance(message, str):
        raise WireError("notebook reply is missing fields")
    decoder = Decoder(body)
    variables = {name: decoder.value(nodes[name]) for name in requested if name in nodes}
    cell_errors = []
    for error in errors[:10_000]:
        # a cell's index (the feedback names "cell N"): an int of 4300 digits is past what str() writes
        if not (isinstance(error, list) and len(error) == 3 and type(error[0]) is int
                and 0 <= error[0] < MAX_CELL_INDEX and isinstance(error[1], str) and isinstance(error[2], str)):
            raise WireError("malformed cell error")
        cell_errors.append((error[0], error[1][:200], error[2][:2000]))
    cells = header.get("cells", [])
    if not isinstance(cells, list):
        raise WireError("notebook reply's cells are not a list")
    return NotebookOutcome(status, variables, tuple(cell_errors), output, message[:2000], seconds,
                           tuple(cells), timeout_cause=(TimeoutCause.LOAD if header.get("overloaded") is True
                                                        else TimeoutCause.NONE))
