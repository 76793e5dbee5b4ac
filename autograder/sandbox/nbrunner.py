"""Runs a student's notebook INSIDE the sandbox, without a Jupyter kernel.

Code cells run in order in one namespace with `__name__ == "__main__"`; IPython magics and shell
lines are neutralised; a failing cell is recorded and execution continues; each cell gets a
timer. Each code cell's outputs are kept as nbformat outputs, as Jupyter would show them: streams
(also passed on to the worker's stdout/stderr), the value of a last expression, display() calls,
matplotlib figures as PNG and errors with a traceback whose files are named relative to the
submission. They are bounded (`OutputBudget`) and become the executed notebook `nbgrader
autograde` writes into the feedback instead of running the notebook again. Bound read-only into
the sandbox and imported there as a top-level module, so it imports only the standard library and
cell_outputs.py (what the cells show), bound beside it.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import itertools
import json
import linecache
import operator
import os
import re
import signal
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field

# What the cells show is kept by cell_outputs.py: a package module in the grader, a top-level
# module beside this one in the sandbox (and in tests/notebook_exec.py's child).
if __package__:
    from .cell_outputs import (FIGURES_ENV, MAX_MESSAGE, CellOutputs, Display, OutputBudget, Tee, close_figures,
                               exception_text, flush_figures, show_figures_as)
else:
    from cell_outputs import (FIGURES_ENV, MAX_MESSAGE, CellOutputs, Display, OutputBudget, Tee, close_figures,
                              exception_text, flush_figures, show_figures_as)

MAX_NOTEBOOK_BYTES = 20 * 1024**2
# JSON nested deeper than this is no notebook (nbformat's own structure is 6 levels; a widget
# state ~10). json.loads recurses: how deep it reads depends on how deep the caller's stack is, so
# a notebook nested 981-982 levels ran in the sandbox (its reader ~15 frames deep) while the
# grader reading it in the batch (~20 frames deep) called it unreadable. Refused by this bound,
# it reads the same everywhere.
MAX_JSON_NESTING = 100
# A notebook holds about a thousand JSON objects and arrays (lecture 1's: 1,182, ~3,900 values);
# 18 MB of `{}` (under the 20 MB) cost json.loads 0.6 GB and 2 s in the grader's own process, and
# nbformat (nbgrader's autograde) 3 GB. More than these is no notebook, read the same everywhere.
MAX_JSON_CONTAINERS = 100_000
MAX_JSON_VALUES = 1_000_000
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_A_BRACKET = re.compile(r"[^\[\]{}]+")
_OPEN_AS_TWO = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
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
    # A wall-clock guard stopped a cell or the notebook while it had used less CPU time than its
    # budget and was not sleeping: the machine may have starved it (the parent, which sees the
    # whole sandbox's CPU time, decides: session.Sandbox.run_notebook). Otherwise the run is
    # exactly what it would be without this flag.
    overloaded: bool = False
    cell_errors: list[tuple[int, str, str]] = field(default_factory=list)
    message: str = ""
    # One entry per code cell that ran: {"index", "id", "source_sha256", "execution_count",
    # "outputs": [nbformat outputs]}
    cells: list[dict] = field(default_factory=list)


def source_sha256(source: str) -> str:
    """What ties an executed cell to the cell of the submitted notebook it ran."""
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


def json_too_deep(text: str) -> bool:
    """Whether the JSON `text` nests arrays and objects more than MAX_JSON_NESTING levels, judged
    without recursion and in C-speed loops (0.5 s for 20 MB of brackets): over the brackets outside
    strings, the depth after k of them is 2 * (openings among them) - k."""
    brackets = _NOT_A_BRACKET.sub("", _JSON_STRING.sub("", text)).encode("ascii").translate(_OPEN_AS_TWO)
    depths = map(operator.sub, itertools.accumulate(brackets), itertools.count(1))
    return max(depths, default=0) > MAX_JSON_NESTING


def json_counts(text: str) -> tuple[int, int]:
    """(objects and arrays, values) of the JSON `text`, counted outside its strings. Its strings are
    cut out first only when there are at most MAX_JSON_VALUES of them (each is a value): cutting out
    millions holds a pointer for each piece, 100 MB."""
    strings = text.count('"') // 2       # at least as many as it holds
    if strings > MAX_JSON_VALUES:
        return 0, strings
    bare = _JSON_STRING.sub("", text)
    containers = bare.count("{") + bare.count("[")
    return containers, bare.count(",") + containers


def too_much_json(text: str) -> str | None:
    """What the JSON `text` holds beyond a notebook's bounds, or None."""
    containers, values = json_counts(text)
    if containers > MAX_JSON_CONTAINERS or values > MAX_JSON_VALUES:
        return (f"holds {containers:,} JSON objects and arrays and {values:,} values (at most "
                f"{MAX_JSON_CONTAINERS:,} and {MAX_JSON_VALUES:,})")
    return None


def beyond_a_notebook(text: str) -> str | None:
    """What the JSON `text` holds beyond a notebook's bounds (too many objects or values, or nested
    too deep), or None: the one check every reader of a student's notebook makes before parsing it."""
    return too_much_json(text) or (  # first: cheaper than the depth's reading of a bomb of brackets
        f"nests JSON more than {MAX_JSON_NESTING} levels deep" if json_too_deep(text) else None)


def load_code_cells(path: str) -> list[tuple[int, str]]:
    """(cell index, source) of every code cell, in order; NotebookUnreadable if not a notebook."""
    return [(index, source) for index, _, source in read_code_cells(path)]


def read_code_cells(path: str) -> list[tuple[int, str, str]]:
    """(cell index, cell id or "", source) of every code cell, in order; NotebookUnreadable if
    not a notebook."""
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
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise NotebookUnreadable(f"{path} is not UTF-8 text") from None
    problem = beyond_a_notebook(text)
    if problem:
        raise NotebookUnreadable(f"{path} {problem}")
    try:
        nb = json.loads(text)
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
        cell_id = cell.get("id")
        cells.append((index, cell_id[:64] if isinstance(cell_id, str) else "", source))
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
    waiting for a busy machine gets more time, up to GUARD_FACTOR × seconds; a cell still only
    waiting then is stopped as `overloaded` (the machine's fault, not the cell's). Once expired,
    the timer keeps re-firing (every 0.1 s) until disarmed."""

    GUARD_FACTOR = 10.0

    def __init__(self):
        self._armed = False
        self._expired = False
        self.overloaded = False
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
            if now is not None and self._base is not None:
                cpu, waited = now[0] - self._base[0], now[1] - self._base[1]
                if cpu < self._seconds and cpu + waited >= 0.5 * elapsed:
                    if elapsed >= self._seconds * self.GUARD_FACTOR:
                        self.overloaded = True
                    else:
                        left = min(self._seconds - cpu, self._seconds * self.GUARD_FACTOR - elapsed)
                        signal.setitimer(signal.ITIMER_REAL, max(left, 0.05), 0)
                        return
            self._expired = True
            signal.setitimer(signal.ITIMER_REAL, 0.1, 0.1)
        raise CellTimeout(f"cell ran longer than {self._seconds:g} s")

    def arm(self, seconds: float) -> None:
        self._seconds = seconds
        self._expired = False
        self.overloaded = False
        self._start = time.monotonic()
        self._base = _own_schedstat()
        self._armed = True
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001), 0)

    def disarm(self) -> None:
        self._armed = False
        signal.setitimer(signal.ITIMER_REAL, 0, 0)


class _NotebookClock:
    """The whole notebook's wall time, `seconds`. When it has passed, was the notebook's process
    short of CPU time while on a CPU or waiting for one at least half the time (starved, not
    sleeping)? Then "overloaded", else "timeout"; the notebook ends either way."""

    def __init__(self, seconds: float):
        self.seconds = max(seconds, 0.0)
        self._start = time.monotonic()
        self._base = _own_schedstat()

    def remaining(self) -> tuple[float, str]:
        """(wall seconds left, "ok" | "timeout" | "overloaded")."""
        elapsed = time.monotonic() - self._start
        left = self.seconds - elapsed
        if left > 0:
            return left, "ok"
        now = _own_schedstat()
        if now is None or self._base is None:
            return left, "timeout"
        cpu, waited = now[0] - self._base[0], now[1] - self._base[1]
        return left, "overloaded" if cpu < self.seconds and cpu + waited >= 0.5 * elapsed else "timeout"


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


def run_notebook(path: str, namespace: dict, *, cell_timeout: float, deadline: float,
                 budget: OutputBudget | None = None) -> NotebookRun:
    """Executes the code cells of `path` in `namespace` until done or out of time. Raises
    NotebookUnreadable before running anything.

    It ends at `deadline` as before; `run.overloaded` says when it (or a cell, at its timer's
    guard) was stopped while it computed or waited for a CPU with CPU time to spare."""
    cells = read_code_cells(path)
    budget = budget or OutputBudget()
    if os.environ.get(FIGURES_ENV) == "none":   # read before any of the student's cells runs
        budget.figures = 0
    stdout, stderr = sys.stdout, sys.stderr
    display = Display(stdout)
    namespace.setdefault("__name__", "__main__")
    namespace.setdefault("__builtins__", builtins)
    namespace.setdefault("display", display)
    warnings.filterwarnings("ignore", message=".*non-interactive.*")  # plt.show() under Agg
    run = NotebookRun()
    timer = _CellTimer()
    clock = _NotebookClock(deadline - time.monotonic())
    for count, (index, cell_id, source) in enumerate(cells, 1):
        remaining, state = clock.remaining()
        if state == "overloaded":
            run.overloaded = True
        if state != "ok":
            run.status = "timeout"
            run.message = f"the notebook ran out of time before cell {index}"
            break
        cell = CellOutputs(budget, count)
        display.cell = cell
        sys.stdout, sys.stderr = Tee(stdout, "stdout", cell), Tee(stderr, "stderr", cell)
        show_figures_as(cell)
        try:
            seconds = min(cell_timeout, remaining)
            error = _run_cell(index, neutralise_magics(source), namespace, timer, seconds, cell)
            starved = timer.overloaded
            _drawn_in_time(cell, timer, seconds)
            starved = starved or timer.overloaded
        finally:
            sys.stdout, sys.stderr = stdout, stderr
            display.cell = None
        if error:
            run.cell_errors.append(error)
        close_figures()
        run.cells.append({"index": index, "id": cell_id, "source_sha256": source_sha256(source),
                          **cell.finish()})
        run.overloaded = run.overloaded or starved
    return run


def _run_cell(index, source, namespace, timer, seconds, cell: CellOutputs):
    try:
        try:
            body, last = _split_last_expression(source, f"<cell {index}>")
            timer.arm(seconds)
            exec(body, namespace)
            if last is not None:
                value = eval(last, namespace)
                if value is not None:
                    cell.value(value)
        finally:
            timer.disarm()
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is recorded
        cell.error(exc)
        return (index, type(exc).__name__[:200], _message(exc))
    return None


def _split_last_expression(source: str, filename: str):
    """(code of the cell, code of its last expression or None): Jupyter shows the value of a
    cell's last expression unless the line ends with `;`."""
    # The cell's lines for its traceback (linecache serves them as it serves a file's).
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    tree = ast.parse(source, filename=filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not source.rstrip().endswith(";"):
        last = compile(ast.Expression(tree.body.pop().value), filename, "eval")
    return compile(tree, filename, "exec"), last


def _drawn_in_time(cell: CellOutputs, timer, seconds: float) -> None:
    """The figures the cell left open, drawn under the cell's timer: a figure too slow to draw
    is left out instead of costing the rest of the notebook."""
    try:
        try:
            timer.arm(seconds)
            flush_figures(cell)
        finally:
            timer.disarm()
    except BaseException:  # noqa: BLE001 - CellTimeout, or anything a student's figure raises
        close_figures()


def _message(exc: BaseException) -> str:
    text = exception_text(exc)
    where = _cell_line(exc)
    return (f"{text} ({where})" if where else text)[:MAX_MESSAGE]


def _cell_line(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError) and exc.lineno:
        return f"line {exc.lineno}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith("<cell ")]
    return f"line {frames[-1].lineno}" if frames else ""


