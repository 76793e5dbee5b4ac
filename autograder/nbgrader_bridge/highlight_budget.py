"""How much code one page may highlight, kept with that page's render.

Pygments' Python lexers take time in the square of a run of blank lines (16,000 characters of
" \\n": 3.1 s of CPU with python, 33 s with ipython3): a page highlights at most
MOST_HIGHLIGHTED_PAGE characters, one cell or fenced block at most MOST_HIGHLIGHTED_CELL of it (so
at most about 4 s of CPU in all); beyond, the code is shown as plain text (safe_html.py). Lecture
1's largest code cell has 5,094 characters and its 150 code cells 38,569 together.

The budget lives in the render's `resources`. nbconvert makes that dict for each conversion (its
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
RESOURCES_KEY = "cs349e_highlight_budget"


class HighlightBudget:
    """What one page may still highlight."""

    def __init__(self) -> None:
        self.left = MOST_HIGHLIGHTED_PAGE

    def take(self, size: int) -> bool:
        """Whether `size` characters more may be highlighted (and then count them)."""
        if size > MOST_HIGHLIGHTED_CELL or size > self.left:
            return False
        self.left -= size
        return True


def page_budget(context) -> HighlightBudget:
    """The budget of the page a filter's Jinja context renders, made at its first use in that page.
    Outside a render (no resources) a new one: only the cell's bound applies."""
    resources = context.get("resources") if context is not None else None
    if not isinstance(resources, dict):
        return HighlightBudget()
    budget = resources.get(RESOURCES_KEY)
    if not isinstance(budget, HighlightBudget):
        budget = resources[RESOURCES_KEY] = HighlightBudget()
    return budget
