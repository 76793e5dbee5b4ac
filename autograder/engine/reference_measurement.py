"""The grading machine's reference measurement (docs/measurement.md), taken once per grader
process and shared by every submission that process grades.

The reference is a tolerance anchor: a measured item is right within AGREEMENT_FACTOR (3×) of it,
and the same machine measures the same figure within 0.8–1.2× of itself minutes apart. Taking it
in every submission's sandbox cost ≈ 0.25 s of CPU each (minutes on an emulated machine) for
nothing a 3× window can tell apart. So:

- every grader process takes it one way (`take`): in a sandbox holding only the assignment's
  trusted files, never a student's, when it first needs it, and keeps it (`reference_for`);
- a batch's parent and a cluster's worker take it while they prepare (`take_for_batch`), before
  any student's sandbox opens, so the graders a batch forks afterwards inherit it; a single
  `grade_submission` takes it just before its student's sandbox opens;
- a process that lives long takes it again after MAX_AGE_SECONDS (clock speeds and neighbours
  change over hours); a failed measurement is never kept;
- a submission whose own measurement disagrees with the kept one is judged again against one
  taken right after its notebook ran (`take_again`), for that submission alone: the machine's
  speed may have moved since (a neighbour's load, a cloud host's steal, an emulated CPU), and the
  student's run and the fresh reference then met the same machine. The process keeps its own: a
  student's submission never moves the reference a classmate is judged against.

Every result records the reference it was graded against (`Reference.record`, in the result's
staff-only data, never in feedback), so a score is a pure function of the files, the assignment
and that recorded reference.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from autograder.sandbox import refuse_overload

if TYPE_CHECKING:
    from autograder.engine.assignment import Assignment
    from autograder.sandbox import Limits, Sandbox

# The measurement's own CPU budget: ~0.25 s on a laptop-class core, tens of seconds on an emulated
# one (a VM without hardware acceleration); a student's call keeps Limits.call_timeout.
REFERENCE_CPU_SECONDS = 120.0
# A long-lived grader process (a cluster's worker) measures again after this long.
MAX_AGE_SECONDS = 15 * 60.0


@dataclass(frozen=True)
class Reference:
    values: Mapping[str, Any]   # what the assignment's sandbox_reference() returned (seconds per operation)
    taken_at: str               # UTC, ISO 8601
    taken_by: str               # "<host> pid <pid>": the grader process that took it
    taken_monotonic: float = field(default=0.0, compare=False)

    def record(self) -> dict[str, Any]:
        """What a result stores of it: the figures, when and by which process."""
        return {"taken_at": self.taken_at, "taken_by": self.taken_by, "values": dict(self.values)}


_taken: dict[tuple[str, str, str], Reference] = {}
_lock = threading.Lock()


def _stamped(values: Mapping[str, Any], monotonic: float) -> Reference:
    """`values` as a Reference taken now by this process."""
    return Reference(dict(values), datetime.now(timezone.utc).isoformat(timespec="seconds"),
                     f"{socket.gethostname()} pid {os.getpid()}", monotonic)


def reference_for(assignment: Assignment, isolation: str, measure: Callable[[], Mapping[str, Any]], *,
                  now: Callable[[], float] = time.monotonic) -> Reference:
    """This process's reference for `assignment` under `isolation`, taken with `measure()` when it
    has none or its one is older than MAX_AGE_SECONDS."""
    key = (assignment.config.assignment, assignment.reference, isolation)
    with _lock:
        kept = _taken.get(key)
    if kept is not None and now() - kept.taken_monotonic < MAX_AGE_SECONDS:
        return kept
    taken = _stamped(measure(), now())   # raises on failure: nothing is kept
    with _lock:
        _taken[key] = taken
    return taken


def measure_in(assignment: Assignment, box: Sandbox) -> Mapping[str, Any]:
    """The assignment's reference measurement, run in `box` (a sandbox of the assignment's trusted
    files alone). A failure is the grader's, retried on the next run."""
    module, _, function = assignment.reference.partition(":")
    outcome = box.call(module, function, timeout=REFERENCE_CPU_SECONDS)
    refuse_overload(outcome.timeout_cause, f"the reference measurement {assignment.reference}")
    if not outcome.ok or not isinstance(outcome.value, dict):
        raise RuntimeError(f"the reference measurement {assignment.reference} failed in the sandbox: "
                           f"{outcome.status} {outcome.exc_type or ''} {outcome.exc_message or ''}".strip())
    return outcome.value


def _measure(assignment: Assignment, isolation: str, limits: Limits, env: Mapping[str, str]) -> Mapping[str, Any]:
    """The measurement, in a sandbox of the assignment's trusted files alone."""
    from autograder.sandbox import Sandbox

    with tempfile.TemporaryDirectory(prefix="cs349e-reference-") as empty:
        with Sandbox(Path(empty), overlay=assignment.config.trusted_files(), limits=limits, isolation=isolation,
                     env=dict(env), factories=assignment.factories) as box:
            return measure_in(assignment, box)


def take(assignment: Assignment, isolation: str, limits: Limits, env: Mapping[str, str]) -> Reference:
    """This process's reference (reference_for), taken where it has none in a sandbox of the
    assignment's trusted files alone. Raises when the measurement fails: the grader's failure,
    retried on the next run."""
    return reference_for(assignment, isolation, lambda: _measure(assignment, isolation, limits, env))


def take_again(assignment: Assignment, isolation: str, limits: Limits, env: Mapping[str, str]) -> Reference:
    """A reference taken now, for one submission alone: the process keeps the one it had, so what a
    student hands in (a typed figure is a disagreement too) never moves the reference a classmate
    is judged against."""
    return _stamped(_measure(assignment, isolation, limits, env), time.monotonic())


def take_for_batch(assignment: Assignment, isolation: str, limits: Limits, env: Mapping[str, str]) -> Reference | None:
    """`take` now, before any student's sandbox opens, so workers forked afterwards share it. None
    when the assignment measures nothing or the measurement failed here: then each grader tries
    again when it needs it, and reports its failure with its student."""
    if not assignment.reference:
        return None
    try:
        return take(assignment, isolation, limits, env)
    except Exception:  # noqa: BLE001 - the graders measure again and say why
        return None
