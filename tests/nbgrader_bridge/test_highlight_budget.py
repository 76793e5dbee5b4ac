"""The pages highlight at most 60,000 characters of code each (6,000 of one cell): Pygments' Python
lexers take time in the square of a run of blank lines. formgrader renders every page with one
exporter (today on its server's event-loop thread, one at a time); threads sharing an exporter render
two pages at once: each page's budget is its own, whatever the other page holds, and nothing of a
page stays behind once it is rendered."""

from __future__ import annotations

import copy
import gc
import re
import threading
from pathlib import Path

import nbformat
import pytest
from process_state import process_state_restored
from traitlets.config.loader import PyFileConfigLoader

pytest.importorskip("nbgrader")

ROOT = Path(__file__).resolve().parents[2]
CELL = 5_000                   # characters of one code cell: under the cell's bound
PAGE_CELLS = 60_000 // CELL    # cells of CELL characters one page highlights
GUARD = 60                     # seconds a thread may wait for its turn before the test calls it a deadlock


def _formgrade_exporter():
    """An exporter as formgrader makes it (one per server), with the course's config."""
    from nbconvert.exporters import HTMLExporter

    with process_state_restored():
        config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    config = copy.deepcopy(config)
    config.HTMLExporter.template_name = "formgrade"   # as FormgradeExtension.build_extra_config sets
    return HTMLExporter(config=config)


RESOURCES = {"assignment_id": "lec01_codesign", "notebook_id": "handout", "submission_id": "s1", "index": 0,
             "total": 1, "base_url": "", "student": "alice", "last_name": "A", "first_name": "Alice",
             "notebook_path": "autograded/alice/lec01_codesign/handout.ipynb"}


def _page(page: str, cells: int) -> nbformat.NotebookNode:
    sources = [f"{page}_cell_{i:02d} = 1\n# " for i in range(cells)]
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s + "x" * (CELL - len(s))) for s in sources])


def _highlighted(html: str, page: str) -> int:
    """Cells of `page` shown highlighted (their name a Pygments name token) rather than as plain text."""
    return len(re.findall(rf'<span class="n">{page}_cell_\d+</span>', html))


class _Turns:
    """Two threads highlight one cell each in turn (the other's render may run meanwhile): every cell
    of the one page is highlighted between two cells of the other, until one page is done."""

    def __init__(self, first: str, second: str):
        self.other = {first: second, second: first}
        self.turn, self.done, self.changed = first, set(), threading.Condition()

    def take(self, me: str) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.turn == me or self.other[me] in self.done, timeout=GUARD)

    def give(self, me: str) -> None:
        with self.changed:
            self.turn = self.other[me]
            self.changed.notify_all()

    def finish(self, me: str) -> None:
        with self.changed:
            self.done.add(me)
            self.changed.notify_all()


def test_two_pages_rendered_at_once_each_highlight_within_their_own_budget(monkeypatch):
    """Page a holds 14 cells of 5,000 characters (70,000: 12 are highlighted, the rest shown plain),
    page b 3; one exporter renders them in two threads, a cell of one between two of
    the other. Before, the budget was one per process, kept for the last notebook seen: each page's
    next cell took the budget back from the other and started it afresh, so page a highlighted all
    of its 70,000 characters, and the last page's notebook stayed held once rendered."""
    from nbconvert.filters.highlight import Highlight2HTML

    exporter = _formgrade_exporter()
    exporter.from_notebook_node(_page("warm_up", 1), resources=dict(RESOURCES))   # loads the template once
    turns, highlight = _Turns("page_a", "page_b"), Highlight2HTML.__call__

    def in_turn(self, *args, **kwargs):
        me = threading.current_thread().name
        if me not in turns.other:
            return highlight(self, *args, **kwargs)
        turns.take(me)
        try:
            return highlight(self, *args, **kwargs)
        finally:
            turns.give(me)

    monkeypatch.setattr(Highlight2HTML, "__call__", in_turn)
    pages, failed = {}, []

    def render(page: str, cells: int) -> None:
        try:
            pages[page], _ = exporter.from_notebook_node(_page(page, cells), resources=dict(RESOURCES))
        except BaseException as exc:   # noqa: BLE001 - reported by the main thread
            failed.append(exc)
        finally:
            turns.finish(page)

    threads = [threading.Thread(target=render, args=("page_a", 14), name="page_a"),
               threading.Thread(target=render, args=("page_b", 3), name="page_b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=GUARD)
        assert not thread.is_alive(), f"{thread.name} never ended"
    assert not failed, failed
    assert (_highlighted(pages["page_a"], "page_a"), _highlighted(pages["page_b"], "page_b")) == (PAGE_CELLS, 3)
    assert pages["page_a"].count("page_a_cell_") == 14          # the rest shown, as plain text

    del exporter, threads, pages
    gc.collect()
    held = [nb for nb in gc.get_objects() if isinstance(nb, nbformat.NotebookNode) and "cells" in nb
            and any("_cell_" in str(cell.get("source", "")) for cell in nb.cells)]
    assert held == [], f"{len(held)} rendered notebook(s) still held after their page was rendered"


def test_one_page_rendered_alone_highlights_its_budget_and_plain_text_beyond():
    """The same bound for a page rendered alone, and a page after it gets a budget of its own."""
    exporter = _formgrade_exporter()
    for page in ("page_a", "page_b"):
        html, _ = exporter.from_notebook_node(_page(page, 14), resources=dict(RESOURCES))
        assert _highlighted(html, page) == PAGE_CELLS and html.count(f"{page}_cell_") == 14
