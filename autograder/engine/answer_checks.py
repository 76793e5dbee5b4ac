"""Keys that are not one number: what an assignment's answer_key() may give a number item whose
right answer depends on the student's own machine.

- `MeasuredKey(low, high)`: a value the student measures (a timing). Any finite value in
  [low, high] is accepted: the range only rules out a wrong unit or a made-up figure, it never
  asks for one machine's number.
- `DerivedKey(needs, compute)`: a value the student computes from their own answers (a ratio of
  their own timings). The trusted parent computes the key from the student's answers to the items
  in `needs` (already read back as plain data) and applies the item's usual tolerance, so a table
  whose rows do not follow from each other fails, whatever machine it was measured on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping

from autograder.engine.checks import is_real_number


@dataclass(frozen=True)
class MeasuredKey:
    low: float
    high: float

    def __post_init__(self):
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"MeasuredKey needs finite low < high, got [{self.low}, {self.high}]")


@dataclass(frozen=True)
class DerivedKey:
    needs: tuple[str, ...]  # item ids whose answers the key is computed from
    compute: Callable[..., float]  # called with the answers to `needs`, in order, as floats

    def key_from(self, answers: Mapping[str, object]) -> tuple[float | None, str]:
        """(key, "") from the student's own answers, or (None, why not) in Chinese."""
        values = []
        for need in self.needs:
            value = answers.get(need)
            if not is_real_number(value) or not math.isfinite(float(value)):
                return None, f"它由你的 `{need}` 算出，而 `{need}` 不是一个有限的数。"
            values.append(float(value))
        try:
            key = float(self.compute(*values))
        except (ArithmeticError, ValueError) as err:
            return None, f"无法由你的 {'、'.join(f'`{n}`' for n in self.needs)} 算出（{type(err).__name__}）。"
        if not math.isfinite(key):
            return None, f"由你的 {'、'.join(f'`{n}`' for n in self.needs)} 算出的值不是有限的数。"
        return key, ""
