"""nbgrader autograde's read of a submitted notebook, bounded by how much JSON it holds.

nbgrader reads each submitted notebook whole with nbformat (a NotebookNode for every JSON object,
then a schema check of all of them) before any preprocessor runs, so before the kit's bound on a
page's cells (page_cells.py) applies: 18 MB of empty objects `{}` in a notebook's metadata (under
collect's 20 MB) cost that read 16 s of CPU and 3 GB of memory, in the instructor's process, which
no sandbox bounds (formgrader's "autograde" button runs it in the course's server). Before nbformat
reads it, this exporter counts the objects, arrays and values of the notebook's JSON over its text,
outside strings, at C speed, and refuses one beyond what a notebook holds (lecture 1's: 1,182 objects
and arrays, ~3,900 values): nbgrader then lists that student as failed, naming why, and autogrades
the others. Set as `c.Autograde.exporter_class` in nbgrader_config.py.
"""

from __future__ import annotations

from nbconvert.exporters import NotebookExporter

from autograder.sandbox.nbrunner import MAX_NOTEBOOK_BYTES, beyond_a_notebook


class NotebookTooLarge(ValueError):
    """A student's notebook holds more JSON than autograde reads."""


def check_notebook_size(path: str) -> None:
    """NotebookTooLarge naming `path` and the bound it passes; nothing for a notebook of usual size
    (or one nbformat will refuse anyway: not UTF-8). The trusted grader reads by the same bounds
    (nbrunner.read_code_cells)."""
    with open(path, "rb") as handle:
        raw = handle.read(MAX_NOTEBOOK_BYTES + 1)
    advice = "it is not autograded (read it as text, grade it by hand or ask the student to hand in again)"
    if len(raw) > MAX_NOTEBOOK_BYTES:
        raise NotebookTooLarge(f"{path} is larger than {MAX_NOTEBOOK_BYTES // 1024**2} MB: {advice}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return
    problem = beyond_a_notebook(text)
    if problem:
        raise NotebookTooLarge(f"{path} {problem}; reading it whole would cost autograde gigabytes: {advice}")


class BoundedNotebookExporter(NotebookExporter):
    """nbgrader's autograde exporter (nbconvert's NotebookExporter) that checks a file before reading it."""

    def from_filename(self, filename, resources=None, **kw):
        check_notebook_size(filename)
        return super().from_filename(filename, resources=resources, **kw)
