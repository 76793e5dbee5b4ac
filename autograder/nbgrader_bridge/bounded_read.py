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

import re

from nbconvert.exporters import NotebookExporter

from autograder.sandbox.nbrunner import MAX_JSON_NESTING, MAX_NOTEBOOK_BYTES, json_too_deep

MAX_CONTAINERS = 100_000     # JSON objects and arrays of one notebook
MAX_VALUES = 1_000_000       # every value in them (commas, plus one a container)
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')


class NotebookTooLarge(ValueError):
    """A student's notebook holds more JSON than autograde reads."""


def json_counts(text: str) -> tuple[int, int]:
    """(objects and arrays, values) of the JSON `text`, counted outside its strings. Its strings are
    cut out first only when there are at most MAX_VALUES of them (each is a value): cutting out
    millions holds a pointer for each piece, 100 MB."""
    strings = text.count('"') // 2       # at least as many as it holds
    if strings > MAX_VALUES:
        return 0, strings
    bare = _JSON_STRING.sub("", text)
    containers = bare.count("{") + bare.count("[")
    return containers, bare.count(",") + containers


def check_notebook_size(path: str) -> None:
    """NotebookTooLarge naming `path` and the bound it passes; nothing for a notebook of usual size
    (or one nbformat will refuse anyway: not UTF-8)."""
    with open(path, "rb") as handle:
        raw = handle.read(MAX_NOTEBOOK_BYTES + 1)
    advice = "it is not autograded (read it as text, grade it by hand or ask the student to hand in again)"
    if len(raw) > MAX_NOTEBOOK_BYTES:
        raise NotebookTooLarge(f"{path} is larger than {MAX_NOTEBOOK_BYTES // 1024**2} MB: {advice}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return
    containers, values = json_counts(text)
    if containers > MAX_CONTAINERS or values > MAX_VALUES:
        raise NotebookTooLarge(f"{path} holds {containers:,} JSON objects and arrays and {values:,} values (at most "
                               f"{MAX_CONTAINERS:,} and {MAX_VALUES:,}; reading it whole would cost autograde "
                               f"gigabytes): {advice}")
    if json_too_deep(text):
        raise NotebookTooLarge(f"{path} nests JSON more than {MAX_JSON_NESTING} levels deep: {advice}")


class BoundedNotebookExporter(NotebookExporter):
    """nbgrader's autograde exporter (nbconvert's NotebookExporter) that checks a file before reading it."""

    def from_filename(self, filename, resources=None, **kw):
        check_notebook_size(filename)
        return super().from_filename(filename, resources=resources, **kw)
