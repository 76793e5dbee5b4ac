"""The notebook of a submission, run in a Sandbox of its own while the function tests run.

A submission's two parts are independent: the function tests call the student's module, the
notebook runs its cells. Run one after the other in one sandbox they cost their sum; here the
notebook starts at once in a second Sandbox (same files, same limits, same isolation) on a thread
of the trusted parent, so on a machine with two cores a submission costs about the longer of the
two. Each Sandbox is used by one thread only (Sandbox is not thread-safe, one per thread is
fine); the worker of each is as isolated as before, and the notebook no longer sees what the
function tests left in the student's module.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Mapping, Sequence

from .limits import Limits
from .outcomes import NotebookOutcome
from .session import Sandbox

# Benchmarks switch this off to measure the sequential order side by side in one run.
ENABLED = True


class NotebookAhead:
    """Starts at construction; `outcome()` waits for it. Always `close()` (or use `with`)."""

    def __init__(self, files: Path, name: str, variables: Sequence[str], *, overlay: Mapping[str, Path],
                 limits: Limits, isolation: str):
        self._box = Sandbox(files, overlay=overlay, limits=limits, isolation=isolation)
        self._outcome: NotebookOutcome | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(name, list(variables)),
                                        name="cs349e-notebook", daemon=True)
        self._thread.start()

    def _run(self, name: str, variables: list[str]) -> None:
        try:
            self._outcome = self._box.run_notebook(name, variables)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            self._error = exc

    def outcome(self) -> NotebookOutcome:
        """The notebook's outcome, exactly as Sandbox.run_notebook returns it (or raises)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._outcome is not None
        return self._outcome

    def close(self) -> None:
        """Stops the notebook's worker (ending a run still going) and waits for the thread."""
        self._box.close()
        self._thread.join()

    def __enter__(self) -> NotebookAhead:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def start_notebook(files: Path, name: str | None, variables: Sequence[str], *, overlay: Mapping[str, Path],
                   limits: Limits, isolation: str) -> NotebookAhead | None:
    """A NotebookAhead when enabled and the submission has the notebook, else None (the caller
    runs the notebook in its own sandbox afterwards, as before)."""
    if not ENABLED or not name or not (Path(files) / name).is_file():
        return None
    return NotebookAhead(files, name, variables, overlay=overlay, limits=limits, isolation=isolation)
