"""How many of a student's own cells one page shows (the feedback page, formgrader's view).

Every cell costs a page about 0.5 ms of CPU whatever it holds (10,000 one-letter cells: 5.5 s), and
the trusted grader reads notebooks of 20 MB, a few hundred thousand cells; generate_feedback renders
the class one page after another and formgrader renders the TA's view on its server's one thread.
A page shows every cell the release made (nbgrader's metadata: after autograde only cells whose
grade_id the release knows keep it, so a student cannot add more) and the student's own cells up to
MOST_PAGE_CELLS cells in all, in order; the rest are one note where the first left out was. Autograde
writes autograded/ so bounded (formgrader's view read, copied and checked all of a notebook before
rendering it: seconds each time a TA opened it); submitted/ keeps them all. Lecture 1's notebook has
250 cells, 235 of them the release's with nbgrader's metadata.
"""

from __future__ import annotations

from nbconvert.preprocessors import Preprocessor
from nbformat.v4 import new_markdown_cell
from traitlets import Bool

MOST_PAGE_CELLS = 1_000
LEFT_OUT_NOTE = "（此处之后另有 {count} 个你自己加的单元格未在本页显示：一页最多显示 {most} 个单元格。笔记本本身保留了它们。）"


class BoundStudentCells(Preprocessor):
    """In autograde's sanitize steps (after OverwriteCells: only cells whose grade_id the release knows
    keep nbgrader's metadata there, so a student's cells cannot pass for the release's) and the pages'
    own (c.HTMLExporter.preprocessors), both in nbgrader_config.py."""

    enabled = Bool(True)   # nbgrader registers its steps without enabling nbconvert's preprocessors

    def preprocess(self, nb, resources):
        if len(nb.cells) <= MOST_PAGE_CELLS:
            return nb, resources
        release = sum(1 for cell in nb.cells if _from_release(cell))
        room = max(MOST_PAGE_CELLS - release, 0)
        kept, left_out, note_at = [], 0, None
        for cell in nb.cells:
            if _from_release(cell):
                kept.append(cell)
            elif room:
                room -= 1
                kept.append(cell)
            else:
                left_out += 1
                if note_at is None:
                    note_at = len(kept)
                    kept.append(None)
        kept[note_at] = new_markdown_cell(LEFT_OUT_NOTE.format(count=left_out, most=MOST_PAGE_CELLS))
        nb.cells = kept
        return nb, resources


def _from_release(cell) -> bool:
    return isinstance(cell.get("metadata"), dict) and isinstance(cell["metadata"].get("nbgrader"), dict)
