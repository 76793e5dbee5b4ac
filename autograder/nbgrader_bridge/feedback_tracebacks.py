"""Feedback preprocessor: a traceback keeps only the frames of the student's own cells and files.

Error outputs in the autograded notebook carry the tracebacks of the trusted grader's run, which
names the student's files relative to their folder and leaves out other frames already; an
autograded notebook of an older run may carry full ipykernel tracebacks, with the absolute path
and source lines of every frame. Students may see their own code, named relative to their
assignment folder (`codesign.py:100`, not the instructor's `/…/autograded/<student>/…`); frames from
anywhere else (the course's modules, site-packages) are replaced by one line saying they were left
out.
"""

from __future__ import annotations

import os
import re

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# "File /path.py:42, in f(a)" (ipykernel's usual frames) or "File /path.py:42 in f" (SyntaxError's)
_FILE_FRAME = re.compile(r"^File (?P<path>\S.*?):\d+(?:,? in |\s*$)", re.MULTILINE)
OMITTED = "（此处省略了评分程序内部的调用）"


def _is_foreign_frame(entry: str, folder: str) -> bool:
    """True for a `File /path:line, in f` frame whose file lies outside the student's folder."""
    match = _FILE_FRAME.match(_ANSI.sub("", entry).lstrip())
    if match is None:
        return False  # a notebook cell (`Cell In[3], line 2`), the header or the final line
    path = os.path.realpath(os.path.join(folder, match["path"]))  # the grader names the student's files relatively
    return os.path.commonpath([path, folder]) != folder


def hide_foreign_frames(traceback: list[str], folder: str) -> list[str]:
    """The traceback with each run of foreign frames replaced by one `OMITTED` line, and the
    student's own files named relative to their folder."""
    folder = os.path.realpath(folder)
    kept: list[str] = []
    for entry in traceback:
        if not _is_foreign_frame(entry, folder):
            kept.append(entry.replace(folder + os.sep, ""))
        elif not kept or kept[-1] != OMITTED:
            kept.append(OMITTED)
    return kept


class HideForeignFrames(Preprocessor):
    """Listed in `c.GenerateFeedback.preprocessors`; runs on every code cell of the feedback."""

    enabled = Bool(True).tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        folder = resources.get("metadata", {}).get("path") or os.getcwd()
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                output["traceback"] = hide_foreign_frames(list(output.get("traceback", [])), folder)
        return cell, resources
