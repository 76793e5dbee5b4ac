"""Every cell a page renders is shown: no cell's metadata leaves it out.

nbconvert leaves out a cell whose metadata says `transient: {remove_source: true}` (the input of a
code cell, a whole Markdown or raw cell), and autograde keeps a student's cell metadata: on their
free-text answer it hid the answer and formgrader's score box with it, on their own code cell the
code a TA reviews, and on a grade cell (the release restores its source and nbgrader's metadata, not
this key) formgrader's score box of that item. `transient` is what a kernel marks as never to be
saved, so no notebook of the course holds it: the pages drop it (c.HTMLExporter.preprocessors in
nbgrader_config.py).
"""

from __future__ import annotations

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

HIDING_KEY = "transient"


class ShowEveryCell(Preprocessor):
    """Drops `transient` from the metadata of every cell of the page."""

    enabled = Bool(True)

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            metadata = cell.get("metadata")
            if isinstance(metadata, dict):
                metadata.pop(HIDING_KEY, None)
        return nb, resources
