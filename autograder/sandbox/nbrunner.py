"""Runs a student's notebook INSIDE the sandbox, without a Jupyter kernel.

Code cells run in order in one namespace with `__name__ == "__main__"`; IPython magics and shell
lines are neutralised; a failing cell is recorded and execution continues; each cell gets a
timer. Bound read-only into the sandbox and imported there as a top-level module, so it imports
only the standard library.
"""

from __future__ import annotations

import builtins
import json
import os
import re
import signal
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field

MAX_NOTEBOOK_BYTES = 20 * 1024**2
MAX_MESSAGE = 2000
# Cell magics whose body is ordinary Python; any other cell magic (%%bash, %%writefile, ...)
# makes the whole cell non-Python, so it is skipped.
_PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun"}
_SHELL_OR_MAGIC_LINE = re.compile(r"^(\s*)(%|!)")
_ASSIGNED_SHELL_OR_MAGIC = re.compile(r"^(\s*)([A-Za-z_][\w.]*)\s*=\s*(%|!)")
_HELP_LINE = re.compile(r"^(\s*)[\w.]+\?{1,2}\s*$")


class NotebookUnreadable(Exception):
    """The file is not a readable notebook; the message says why."""


class CellTimeout(BaseException):
    """Raised in a cell that ran past its time. A BaseException so `except Exception` in the
    cell does not swallow it; the timer also keeps firing until the cell ends."""


@dataclass
class NotebookRun:
    status: str = "ok"          # "ok" or "timeout" (the notebook's overall deadline passed)
    cell_errors: list[tuple[int, str, str]] = field(default_factory=list)
    message: str = ""


def load_code_cells(path: str) -> list[tuple[int, str]]:
    """(cell index, source) of every code cell, in order; NotebookUnreadable if not a notebook."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_NOTEBOOK_BYTES + 1)
    except FileNotFoundError:
        raise NotebookUnreadable(f"{path} not found") from None
    except OSError as exc:
        raise NotebookUnreadable(f"{path} cannot be read: {exc.strerror}") from None
    if len(raw) > MAX_NOTEBOOK_BYTES:
        raise NotebookUnreadable(f"{path} is larger than {MAX_NOTEBOOK_BYTES // 1024**2} MB")
    if not raw.strip():
        raise NotebookUnreadable(f"{path} is empty")
    try:
        nb = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise NotebookUnreadable(f"{path} is not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:
        raise NotebookUnreadable(f"{path} is not valid JSON ({str(exc)[:200]})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        shape = f"keys {sorted(map(str, nb))[:8]}" if isinstance(nb, dict) else f"a {type(nb).__name__}"
        raise NotebookUnreadable(f"{path} is JSON but not a notebook (no 'cells' list; {shape}, {len(raw)} bytes)")
    major = nb.get("nbformat", 4)
    if major != 4:
        raise NotebookUnreadable(f"{path} has nbformat {str(major)[:20]}; only version 4 is supported")
    cells = []
    for index, cell in enumerate(nb["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookUnreadable(f"{path}: cell {index} has a malformed 'source'")
        cells.append((index, source))
    return cells


def neutralise_magics(source: str) -> str:
    """The cell as plain Python: IPython line magics, shell escapes and `x?` help lines become
    `pass` (keeping indentation and line numbers); a non-Python cell magic empties the cell."""
    lines = source.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        magic = lines[first].lstrip()[2:].split(maxsplit=1)
        if not magic or magic[0] not in _PYTHON_CELL_MAGICS:
            return ""
        lines[first] = ""
    out = []
    for line in lines:
        match = (_SHELL_OR_MAGIC_LINE.match(line) or _ASSIGNED_SHELL_OR_MAGIC.match(line)
                 or _HELP_LINE.match(line))
        out.append(f"{match.group(1)}pass" if match else line)
    return "\n".join(out)


class _CellTimer:
    """Per-cell timer on the cell's own CPU time, with wall-clock time only as a guard.

    SIGALRM fires when the cell has run `seconds` of wall time; the handler then reads this
    process's scheduler statistics: a cell that used its CPU seconds, or that sleeps or blocks
    (on a CPU or waiting for one less than half the time), times out; a cell that was only
    waiting for a busy machine gets more time, up to GUARD_FACTOR × seconds. Once expired, the
    timer keeps re-firing (every 0.1 s) until disarmed."""

    GUARD_FACTOR = 10.0

    def __init__(self):
        self._armed = False
        self._expired = False
        self._seconds = 0.0
        self._start = 0.0
        self._base = None
        signal.signal(signal.SIGALRM, self._fire)

    def _fire(self, _signum, _frame):
        if not self._armed:
            return
        if not self._expired:
            elapsed = time.monotonic() - self._start
            now = _own_schedstat()
            if now is not None and self._base is not None and elapsed < self._seconds * self.GUARD_FACTOR:
                cpu, waited = now[0] - self._base[0], now[1] - self._base[1]
                if cpu < self._seconds and cpu + waited >= 0.5 * elapsed:
                    left = min(self._seconds - cpu, self._seconds * self.GUARD_FACTOR - elapsed)
                    signal.setitimer(signal.ITIMER_REAL, max(left, 0.05), 0)
                    return
            self._expired = True
            signal.setitimer(signal.ITIMER_REAL, 0.1, 0.1)
        raise CellTimeout(f"cell ran longer than {self._seconds:g} s")

    def arm(self, seconds: float) -> None:
        self._seconds = seconds
        self._expired = False
        self._start = time.monotonic()
        self._base = _own_schedstat()
        self._armed = True
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001), 0)

    def disarm(self) -> None:
        self._armed = False
        signal.setitimer(signal.ITIMER_REAL, 0, 0)


def _own_schedstat():
    """(seconds on a CPU, seconds waiting for one) of every thread of this process, or None."""
    cpu = waited = 0
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/schedstat", "rb") as handle:
                fields = handle.read().split()
            cpu += int(fields[0])
            waited += int(fields[1])
    except (OSError, ValueError, IndexError):
        return None
    return cpu / 1e9, waited / 1e9


def _display(*objects, **_kwargs):
    """Stand-in for IPython's display(): prints each object's repr."""
    for obj in objects:
        print(repr(obj))


def run_notebook(path: str, namespace: dict, *, cell_timeout: float, deadline: float) -> NotebookRun:
    """Executes the code cells of `path` in `namespace` until done or `deadline`
    (a time.monotonic() value). Raises NotebookUnreadable before running anything."""
    cells = load_code_cells(path)
    namespace.setdefault("__name__", "__main__")
    namespace.setdefault("__builtins__", builtins)
    namespace.setdefault("display", _display)
    warnings.filterwarnings("ignore", message=".*non-interactive.*")  # plt.show() under Agg
    run = NotebookRun()
    timer = _CellTimer()
    for index, source in cells:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            run.status = "timeout"
            run.message = f"the notebook ran out of time before cell {index}"
            break
        error = _run_cell(index, neutralise_magics(source), namespace, timer,
                          min(cell_timeout, remaining))
        if error:
            run.cell_errors.append(error)
        _close_figures()
    return run


def _run_cell(index, source, namespace, timer, seconds):
    try:
        try:
            code = compile(source, f"<cell {index}>", "exec")
            timer.arm(seconds)
            exec(code, namespace)
        finally:
            timer.disarm()
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is recorded
        return (index, type(exc).__name__[:200], _message(exc))
    return None


def _message(exc: BaseException) -> str:
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 - a student __str__ may raise anything
        text = "<message could not be read>"
    where = _cell_line(exc)
    return (f"{text} ({where})" if where else text)[:MAX_MESSAGE]


def _cell_line(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError) and exc.lineno:
        return f"line {exc.lineno}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith("<cell ")]
    return f"line {frames[-1].lineno}" if frames else ""


def _close_figures():
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        try:
            pyplot.close("all")
        except Exception:  # noqa: BLE001 - a broken pyplot is the student's problem
            pass
