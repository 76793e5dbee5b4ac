"""The outputs of a notebook's cells as Jupyter would show them, kept INSIDE the sandbox.

Streams (also passed on to the worker's stdout/stderr), the value of a last expression, display()
calls, matplotlib figures as PNG and errors with a traceback whose files are named relative to
the submission, each bounded (`OutputBudget`). nbrunner.py runs the cells; this module records
what they show. Bound read-only into the sandbox beside nbrunner.py and imported there as a
top-level module, so it imports only the standard library.
"""

from __future__ import annotations

import base64
import io
import json
import os
import sys
import traceback
import warnings

MAX_MESSAGE = 2000

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
                   "evalue": exception_text(exc)[:MAX_MESSAGE], "traceback": lines})

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


class Tee:
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
    lines.append(f"{type(exc).__name__[:200]}: {exception_text(exc)[:MAX_MESSAGE]}\n")
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


class Display:
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


def show_figures_as(cell: CellOutputs) -> None:
    """plt.show() hands the open figures to this cell (Jupyter's inline backend does the same)."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return

    def show(*_args, **_kwargs):
        flush_figures(cell)

    try:
        pyplot.show = show
    except Exception:  # noqa: BLE001
        pass


def flush_figures(cell: CellOutputs) -> None:
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
    close_figures()


def exception_text(exc: BaseException) -> str:
    try:
        return str(exc)
    except BaseException:  # noqa: BLE001 - a student __str__ may raise anything
        return "<message could not be read>"


def close_figures():
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        try:
            pyplot.close("all")
        except Exception:  # noqa: BLE001 - a broken pyplot is the student's problem
            pass
