"""How much of a student's text one page may highlight or render as markup, kept with that page's render.

Pygments' Python lexers take time in the square of a run of blank lines (16,000 characters of
" \\n": 3.1 s of CPU with python, 33 s with ipython3): a page highlights at most
MOST_HIGHLIGHTED_PAGE characters, one cell or fenced block at most MOST_HIGHLIGHTED_CELL of it (so
at most about 4 s of CPU in all); beyond, the code is shown as plain text (safe_html.py). Lecture
1's largest code cell has 5,094 characters and its 150 code cells 38,569 together.

Markdown costs about 15 µs of CPU a character to render and clean, and a tag of HTML about 70 µs:
a free-text answer of 1 MB took 25 s for one page, the 2 MB of HTML outputs the grader keeps of a
notebook 17 s. A page renders at most MOST_MARKUP_PAGE characters of what the student wrote as
Markdown or HTML (Markdown and raw cells, every cell's HTML, Markdown and SVG outputs), one cell or
output at most MOST_MARKUP_CELL of them (about 3 s in all); beyond, it is shown as it was written,
escaped. Lecture 1's 100 Markdown cells hold 29,831 characters, its largest 1,152; its cells print
no HTML. The grader's own explanations (the outputs of the release's grade cells) are not counted.

Whatever is shown costs the page too: nbconvert reads the whole rendered page back with BeautifulSoup
(its alt-text pass), about 1 s of CPU a MB of escaped text (a code cell of 8 MB of `<b>` took 8 s). A
page shows at most MOST_SHOWN_PAGE characters of the students' cells (code, and Markdown shown as
text beyond the budget above), then says how many more there are.

Each budget lives in the render's `resources`. nbconvert makes that dict for each conversion (its
exporter copies whatever dict the caller passes: formgrader's handler and nbgrader's converters pass
a new one for every page) and the template renders with it, so a filter finds it in its Jinja
context in every block of the page. One page's budget is then never another's, whichever thread
renders it, and it goes when the render's resources go: no state of the module, no lock. (A
context variable would need a hook where each conversion starts; nbconvert gives a filter its
context, and the conversion's resources in it, but no such hook.)
"""

from __future__ import annotations

MOST_HIGHLIGHTED_CELL = 6_000
MOST_HIGHLIGHTED_PAGE = 60_000
MOST_MARKUP_CELL = 20_000
MOST_MARKUP_PAGE = 200_000
MOST_SHOWN_PAGE = 1_000_000
RESOURCES_KEY = "cs349e_highlight_budget"
MARKUP_RESOURCES_KEY = "cs349e_markup_budget"
SHOWN_RESOURCES_KEY = "cs349e_shown_budget"


class HighlightBudget:
    """What one page may still highlight (or, made with the markup bounds, render as markup)."""

    def __init__(self, cell: int = MOST_HIGHLIGHTED_CELL, page: int = MOST_HIGHLIGHTED_PAGE) -> None:
        self.cell, self.left = cell, page

    def take(self, size: int) -> bool:
        """Whether `size` characters more may be highlighted (and then count them)."""
        if size > self.cell or size > self.left:
            return False
        self.left -= size
        return True

    def take_up_to(self, size: int) -> int:
        """How many of `size` characters may be shown (and then count them)."""
        room = max(0, min(size, self.cell, self.left))
        self.left -= room
        return room


def page_budget(context) -> HighlightBudget:
    """The highlighting budget of the page a filter's Jinja context renders, made at its first use in
    that page. Outside a render (no resources) a new one: only the cell's bound applies."""
    return _kept(context, RESOURCES_KEY, HighlightBudget)


def markup_budget(context) -> HighlightBudget:
    """The page's budget of students' Markdown and raw HTML, as `page_budget`."""
    return _kept(context, MARKUP_RESOURCES_KEY, lambda: HighlightBudget(MOST_MARKUP_CELL, MOST_MARKUP_PAGE))


def shown_budget(context) -> HighlightBudget:
    """The page's budget of students' cell text shown at all, as `page_budget`."""
    return _kept(context, SHOWN_RESOURCES_KEY, lambda: HighlightBudget(MOST_SHOWN_PAGE, MOST_SHOWN_PAGE))


def _kept(context, key: str, make) -> HighlightBudget:
    resources = context.get("resources") if context is not None else None
    if not isinstance(resources, dict):
        return make()
    budget = resources.get(key)
    if not isinstance(budget, HighlightBudget):
        budget = resources[key] = make()
    return budget
