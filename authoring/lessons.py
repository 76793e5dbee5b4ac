"""What a question teaches, as a bound every student's variant must keep (`check` samples many).

An author declares, in `solutions/<name>/lessons.py`, `LESSONS`: one `Lesson` per statement an item
relies on — a number item's invariant (q04 >= 1: the same-precision ridge grows), a choice's lead
over the runner-up (q10's key leads by 2 percentage points), or a property of the drawn world (a
lower precision never sustains a larger share of its peak). `value(params, key)` computes the
quantity from the variant's parameters and its answer key; it must lie in [low, high].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Lesson:
    item: str  # the item whose question relies on it
    teaches: str  # the statement, in the author's words (English: it is printed by `check`)
    value: Callable[[dict, dict], float]  # (params, answer key) -> the quantity
    low: float = -math.inf
    high: float = math.inf
    reads: tuple[str, ...] = ()  # the parameters it depends on, shown when it breaks
    applies: Callable[[dict], bool] = lambda params: True  # e.g. not to the spec sheet's own numbers

    def holds(self, value: float) -> bool:
        return math.isfinite(value) and self.low <= value <= self.high

    def bound(self) -> str:
        if self.high == math.inf:
            return f">= {self.low:g}"
        if self.low == -math.inf:
            return f"<= {self.high:g}"
        return f"in [{self.low:g}, {self.high:g}]"


def margin(item: str, teaches: str, value: Callable[[dict, dict], float], threshold: float,
           reads: tuple[str, ...] = ()) -> Lesson:
    """A choice's key leads the runner-up by at least `threshold` (in the unit `value` returns)."""
    return Lesson(item, f"the key leads the runner-up ({teaches})", value, low=threshold, reads=reads)
