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
from dataclasses import dataclass, field
from typing import Callable, Mapping

from autograder.engine.checks import finite_float


@dataclass(frozen=True)
class MeasuredKey:
    low: float
    high: float
    rule: str = ""  # the criterion as feedback states it, when the range itself varies per run
    # what the run's own timings give (see ReferenceKey.own); the value must be one of them
    record: str = ""
    own: Callable[[object], tuple[float, ...] | None] | None = field(default=None, compare=False)   # (low, high)

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
            value = finite_float(answers.get(need))
            if value is None:
                return None, f"它由你的 `{need}` 算出，而 `{need}` 不是一个有限的数。"
            values.append(value)
        try:
            key = float(self.compute(*values))
        except (ArithmeticError, ValueError) as err:
            return None, f"无法由你的 {'、'.join(f'`{n}`' for n in self.needs)} 算出（{type(err).__name__}）。"
        if not math.isfinite(key):
            return None, f"由你的 {'、'.join(f'`{n}`' for n in self.needs)} 算出的值不是有限的数。"
        return key, ""


@dataclass(frozen=True)
class ReferenceKey:
    figure: Callable[[Mapping[str, object]], float]  # this run's reference figure, from the measurement's result
    factor: float   # measured / reference must lie in [1/factor, factor]
    # Where the student's run notes the timings it took ("module:attribute" of a trusted module the
    # notebook imports), and the range (low, high) of the figures those give counted right (None:
    # the run took none of this kind, then only the window judges; (): an unreadable record). The window absorbs the machine's noise, and with it a
    # miscount by 2x (m³ FLOP for a GEMM); the run's own timings do not: the value must follow
    # from one of them.
    record: str = ""
    own: Callable[[object], tuple[float, ...] | None] | None = None

    def __post_init__(self):
        if not (math.isfinite(self.factor) and self.factor > 1):
            raise ValueError(f"ReferenceKey needs a finite factor > 1, got {self.factor}")

    def resolved(self, references: Mapping[str, object]) -> MeasuredKey:
        """The range around this run's reference figure (ValueError if it cannot be computed or is
        not a positive number)."""
        try:
            value = float(self.figure(references))
        except (KeyError, TypeError, ArithmeticError) as err:
            raise ValueError(f"the reference measurement {dict(references)!r} gives no figure: {err!r}") from None
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"the reference figure is {value!r}, not a positive number")
        return MeasuredKey(value / self.factor, value * self.factor,
                           f"与评分机在同样的沙箱里、用同样的方法量出的参照值相差不超过 {self.factor:g} 倍",
                           self.record, self.own)


@dataclass(frozen=True)
class GroundedKey(DerivedKey):
    """A DerivedKey whose inputs rest on measurements checked against a reference: it holds only
    when each of those measurements (`grounds`, item id -> this run's range) agrees, so arithmetic
    on typed-in figures earns nothing."""

    grounds: tuple[tuple[str, MeasuredKey], ...] = ()

    def key_from(self, answers: Mapping[str, object]) -> tuple[float | None, str]:
        for item, measured in self.grounds:
            value = finite_float(answers.get(item))
            if value is None or not measured.low <= value <= measured.high:
                return None, f"它由你的 `{item}` 算出，而 `{item}` 与评分机的参照测量不一致。"
        return super().key_from(answers)


def own_records(key: Mapping[str, object]) -> tuple[str, ...]:
    """The "module:attribute" names the run's own timings are read from, for the key's measured items."""
    return tuple(sorted({value.record for value in key.values()
                         if isinstance(value, (ReferenceKey, MeasuredKey)) and value.record}))


def with_references(key: Mapping[str, object], measure: Callable[[], Mapping[str, object]]) -> dict[str, object]:
    """`key` with every ReferenceKey resolved against `measure()` (called once, only if there is
    one), and every DerivedKey that rests on one of them, directly or through other derived items,
    grounded on it."""
    if not any(isinstance(value, ReferenceKey) for value in key.values()):
        return dict(key)
    references = measure()
    resolved = {item: value.resolved(references) if isinstance(value, ReferenceKey) else value
                for item, value in key.items()}

    def grounds(item: str, seen: frozenset = frozenset()) -> dict[str, MeasuredKey]:
        value = key.get(item)
        if isinstance(value, ReferenceKey):
            return {item: resolved[item]}
        if not isinstance(value, DerivedKey) or item in seen:
            return {}
        found: dict[str, MeasuredKey] = {}
        for need in value.needs:
            found.update(grounds(need, seen | {item}))
        return found

    for item, value in key.items():
        if isinstance(value, DerivedKey) and grounds(item):
            resolved[item] = GroundedKey(value.needs, value.compute, tuple(sorted(grounds(item).items())))
    return resolved
