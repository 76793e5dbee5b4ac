"""Runs a student's notebook INSIDE the sandbox, without a Jupyter kernel.

Code cells run in order in one namespace with `__name__ == "__main__"`; IPython magics and shell
lines are neutralised; a failing cell is recorded and execution continues; each cell gets a
timer. Each code cell's outputs are kept as nbformat outputs, as Jupyter would show them: streams
(also passed on to the worker's stdout/stderr), the value of a last expression, display() calls,
matplotlib figures as PNG and errors with a traceback whose files are named relative to the
submission. They are bounded (`OutputBudget`) and become the executed notebook `nbgrader
autograde` writes into the feedback instead of running the notebook again. Bound read-only into
the sandbox and imported there as a top-level module, so it imports only the standard library.
"""

from __future__ import annotations

import ast
import base64
import builtins
import hashlib
import io
import json
import linecache
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


MAX_OUTPUT_TEXT = 64 * 1024            # characters kept per stream, value or traceback of a cell
MAX_NOTEBOOK_OUTPUTS = 2 * 1024 ** 2   # bytes of JSON (PNG as base64 included) of all the outputs
MAX_FIGURES = 20                       # figures kept per notebook
MAX_FIGURE_PIXELS = 4000 * 3000        # a larger figure is not drawn (it would take seconds)
OMITTED_FRAMES = "…"                   # a run of frames outside the submission (the grader, libraries)
# "none" (set by the grader where nobody looks at the executed notebook's figures: `grade`,
# Gradescope): a figure is recorded by its text alone, not drawn. Drawing the lecture's five figures
# as PNG cost 1.2–1.5 s of CPU a submission; `pregrade`, whose figures reach the feedback pages, draws them.
FIGURES_ENV = "CS349E_FIGURES"


class OutputBudget:
    """What all cells' outputs may add up to; past it, one note and nothing more."""

    def __init__(self, total: int = MAX_NOTEBOOK_OUTPUTS, text: int = MAX_OUTPUT_TEXT):
        self.left, self.text, self.figures, self.exhausted = total, text, MAX_FIGURES, False

    def take(self, size: int) -> bool:
        if self.exhausted or size > self.left:
            self.exhausted = True
            return False
        self.left -= size
        return True


class CellOutputs:
    """The nbformat outputs of one cell, appended as the cell runs."""

    def __init__(self, budget: OutputBudget, execution_count: int):
        self.budget, self.execution_count = budget, execution_count
        self.outputs: list[dict] = []
        self._stream_chars = {"stdout": 0, "stderr": 0}
        self._dropped = {"stdout": 0, "stderr": 0}
        self._noted = False

    def stream(self, name: str, text: str) -> None:
        room = self.budget.text - self._stream_chars[name]
        kept = text[:max(room, 0)]
        self._dropped[name] += len(text) - len(kept)
        if not kept:
            return
        if not self.budget.take(len(kept.encode("utf-8", "surrogatepass"))):
            self._note_exhausted()
            return
        self._stream_chars[name] += len(kept)
        last = self.outputs[-1] if self.outputs else None
        if last is not None and last["output_type"] == "stream" and last["name"] == name:
            last["text"] += kept
        else:
            self.outputs.append({"output_type": "stream", "name": name, "text": kept})

    def value(self, obj) -> None:
        self._add({"output_type": "execute_result", "execution_count": self.execution_count,
                   "metadata": {}, "data": {"text/plain": _repr(obj, self.budget.text)}})

    def display(self, obj) -> None:
        figure = _figure_png(obj, self.budget) if _is_figure(obj) else None
        data = {"text/plain": _repr(obj, self.budget.text)}
        if figure:
            data["image/png"] = figure
        self._add({"output_type": "display_data", "metadata": {}, "data": data})

    def error(self, exc: BaseException) -> None:
        lines = _student_traceback(exc, self.execution_count)
        text = "".join(lines)
        if len(text) > self.budget.text:
            lines = [text[:self.budget.text // 2], "…\n", text[-self.budget.text // 2:]]
        self._add({"output_type": "error", "ename": type(exc).__name__[:200],
                   "evalue": _text(exc)[:MAX_MESSAGE], "traceback": lines})

    def finish(self) -> dict:
        for name, dropped in self._dropped.items():
            if dropped:
                self.outputs.append({"output_type": "stream", "name": name,
                                     "text": f"\n…（输出过长，省略了 {dropped} 个字符）\n"})
        return {"execution_count": self.execution_count, "outputs": self.outputs}

    def _add(self, output: dict) -> None:
        if self.budget.take(len(json.dumps(output))):
            self.outputs.append(output)
        else:
            self._note_exhausted()

    def _note_exhausted(self) -> None:
        if not self._noted:
            self._noted = True
            self.outputs.append({"output_type": "stream", "name": "stderr",
                                 "text": "\n…（notebook 的输出超过了评分保存的上限，其余输出省略）\n"})


class _Tee:
    """A cell's sys.stdout / sys.stderr: passes everything on to the worker's stream (the captured
    output, exactly as before; what the stream refuses, the cell sees refused) and keeps a copy of
    the text in the cell's outputs. Anything else (fileno, buffer, isatty, ...) is the stream's."""

    def __init__(self, stream, name: str, cell: CellOutputs):
        self._stream, self._name, self._cell = stream, name, cell

    def write(self, text):
        written = self._stream.write(text)
        if isinstance(text, str):
            self._cell.stream(self._name, text)
        return written

    def flush(self) -> None:
        self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _repr(obj, limit: int) -> str:
    try:
        text = repr(obj)
    except BaseException:  # noqa: BLE001 - a student __repr__ may raise anything
        text = f"<{type(obj).__name__} object>"
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "…"


def _is_figure(obj) -> bool:
    figure_module = sys.modules.get("matplotlib.figure")
    return figure_module is not None and isinstance(obj, figure_module.Figure)


def _figure_png(figure, budget: OutputBudget) -> str | None:
    """The figure as base64 PNG (as Jupyter's inline backend shows it), or None."""
    if budget.figures <= 0 or budget.exhausted:
        return None
    try:
        width, height = figure.get_size_inches() * figure.dpi
        if not width * height <= MAX_FIGURE_PIXELS:
            return None
    except Exception:  # noqa: BLE001
        return None
    budget.figures -= 1
    buffer = io.BytesIO()
    try:
        # What drawing warns (a glyph the font lacks) is the grader's doing, not the cell's output:
        # with figures off (grade) or on (pregrade) the cell's text must be the same.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            figure.savefig(buffer, format="png", bbox_inches="tight")
    except Exception:  # noqa: BLE001 - a figure that cannot be drawn is simply not shown
        return None
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _student_traceback(exc: BaseException, execution_count: int) -> list[str]:
    """IPython's layout of a traceback: the cell's frames as `Cell In[n], line k`, the
    submission's files by their relative name, every other run of frames as one `…` line."""
    root = os.getcwd() + os.sep
    lines = [f"{type(exc).__name__}                         Traceback (most recent call last)\n"]
    try:
        frames = traceback.extract_tb(exc.__traceback__)
        while frames and not frames[0].filename.startswith("<cell "):
            frames = frames[1:]   # the runner's own frames
        for frame in frames:
            if frame.filename.startswith("<cell "):
                where = f"Cell In[{execution_count}], line {frame.lineno}"
            elif _submission_name(frame.filename, root):
                where = f"File {_submission_name(frame.filename, root)}:{frame.lineno}, in {frame.name}"
            else:
                if lines[-1] != OMITTED_FRAMES + "\n":
                    lines.append(OMITTED_FRAMES + "\n")
                continue
            code = f"\n----> {frame.lineno} {frame.line}" if frame.line else ""
            lines.append(where + code + "\n")
        if isinstance(exc, SyntaxError) and exc.text:
            filename = str(exc.filename or "")
            where = (f"Cell In[{execution_count}], line {exc.lineno}" if filename.startswith("<cell ")
                     else f"File {_submission_name(filename, root) or OMITTED_FRAMES}:{exc.lineno}")
            lines.append(f"{where}\n    {exc.text.rstrip()}\n")
    except BaseException:  # noqa: BLE001 - a hostile traceback must not end the notebook
        pass
    lines.append(f"{type(exc).__name__[:200]}: {_text(exc)[:MAX_MESSAGE]}\n")
    return lines


def _submission_name(filename: str, root: str) -> str:
    """`filename` relative to the submission's folder (the cwd, whose files may be links to where
    the sandbox keeps the submission), or "" for a file outside it."""
    if filename.startswith(root):
        return filename[len(root):]
    name = os.path.basename(filename)
    try:
        if name and os.path.realpath(os.path.join(root, name)) == os.path.realpath(filename):
            return name
    except (OSError, ValueError):
        pass
    return ""


class _Display:
    """Stand-in for IPython's display(): each object becomes a display output of the running
    cell (a figure as PNG) and its repr goes to the worker's stdout, as before."""

    def __init__(self, stdout):
        self.stdout, self.cell = stdout, None

    def __call__(self, *objects, **_kwargs):
        for obj in objects:
            if self.cell is not None:
                self.cell.display(obj)
            try:
                self.stdout.write(_repr(obj, MAX_OUTPUT_TEXT) + "\n")
            except Exception:  # noqa: BLE001
                pass


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
    display = _Display(stdout)
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
        sys.stdout, sys.stderr = _Tee(stdout, "stdout", cell), _Tee(stderr, "stderr", cell)
        _show_figures_as(cell)
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
        _close_figures()
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
            _flush_figures(cell)
        finally:
            timer.disarm()
    except BaseException:  # noqa: BLE001 - CellTimeout, or anything a student's figure raises
        _close_figures()


def _show_figures_as(cell: CellOutputs) -> None:
    """plt.show() hands the open figures to this cell (Jupyter's inline backend does the same)."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return

    def show(*_args, **_kwargs):
        _flush_figures(cell)

    try:
        pyplot.show = show
    except Exception:  # noqa: BLE001
        pass


def _flush_figures(cell: CellOutputs) -> None:
    """Every open figure becomes a PNG output of `cell`, then is closed."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    try:
        figures = [pyplot.figure(number) for number in pyplot.get_fignums()]
    except Exception:  # noqa: BLE001 - a broken pyplot is the student's problem
        return
    for figure in figures:
        cell.display(figure)
    _close_figures()


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except BaseException:  # noqa: BLE001 - a student __str__ may raise anything
        return "<message could not be read>"


def _message(exc: BaseException) -> str:
    text = _text(exc)
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
