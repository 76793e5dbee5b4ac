"""nbgrader's gradebook against the pinned trusted results, per student and automatically graded item.

autograde writes the pinned scores into the gradebook, so any difference means the gradebook was
changed afterwards, a student was collected or autograded without pregrade, or nbgrader could not
autograde a submission at all. Only automatic scores are compared: a TA's manual override is not a
disagreement, and free-text items are graded by hand on both sides.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from autograder.engine.feedback import points
from autograder.engine.results import SubmissionResult
from autograder.nbgrader_bridge.gradebook import CellScore

SCORE_TOLERANCE = 1e-6  # check() rounds to 6 decimals; the gradebook stores floats


@dataclass(frozen=True)
class ItemDisagreement:
    item: str
    nbgrader: float | None  # None: no automatic score in the gradebook
    trusted: float | None  # None: the trusted grader did not grade this item

    def describe(self) -> str:
        return f"{self.item} (nbgrader {_shown(self.nbgrader)}, trusted {_shown(self.trusted)})"


@dataclass(frozen=True)
class StudentDisagreement:
    student: str
    nbgrader_total: float  # automatic points in the gradebook
    trusted_total: float | None  # None: no trusted result (no submission folder, grader failure)
    items: tuple[ItemDisagreement, ...]
    note: str = ""

    def line(self) -> str:
        text = (f"{self.student}: nbgrader {points(self.nbgrader_total)} vs trusted "
                f"{_shown(self.trusted_total)} automatic points")
        if self.note:
            text += f"; {self.note}"
        if self.items:
            text += "; differs on " + ", ".join(d.describe() for d in self.items)
        return text


def disagreements(nbgrader: Mapping[str, Mapping[str, CellScore]], trusted: Mapping[str, SubmissionResult],
                  auto_items: Iterable[str], missing: Mapping[str, Iterable[str]] | None = None) -> list[StudentDisagreement]:
    """Every student (of either side) whose automatic item scores differ, sorted by student;
    `missing`: student -> the graded files their pinned snapshot lacks."""
    auto_items = tuple(auto_items)
    missing = missing or {}
    found = []
    for student in sorted(set(nbgrader) | set(trusted)):
        cells = nbgrader.get(student, {})
        result = trusted.get(student)
        nb_scores = {item: _auto(cells.get(item)) for item in auto_items}
        nb_total = math.fsum(s for s in nb_scores.values() if s is not None)
        if result is None:
            if nb_total > SCORE_TOLERANCE:
                found.append(StudentDisagreement(student, nb_total, None, (), "no submission for the trusted grader"))
            continue
        trusted_scores = {item.id: item.score for item in result.items}
        trusted_total = math.fsum(trusted_scores.get(item, 0.0) for item in auto_items)
        if all(score is None for score in nb_scores.values()):
            notebooks = sorted(name for name in missing.get(student, ()) if name.endswith(".ipynb"))
            if cells:
                note = "nbgrader has no automatic score for any item (its autograde failed?)"
            elif notebooks:
                # nbgrader autograde stops at "No notebooks were matched" and records nothing.
                note = (f"not in nbgrader's gradebook: handed in without {', '.join(notebooks)}, which nbgrader "
                        "autograde needs to grade a submission at all")
            else:
                note = "not in nbgrader's gradebook (not autograded yet?)"
            found.append(StudentDisagreement(student, nb_total, trusted_total, (), note))
            continue
        items = tuple(ItemDisagreement(item, nb_scores[item], trusted_scores.get(item))
                      for item in auto_items
                      if not _same(nb_scores[item], trusted_scores.get(item)))
        if items:
            found.append(StudentDisagreement(student, nb_total, trusted_total, items))
    return found


def _auto(cell: CellScore | None) -> float | None:
    return None if cell is None else cell.auto_score


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= SCORE_TOLERANCE


def _shown(value: float | None) -> str:
    return "none" if value is None else points(value)


def stale_manual_scores(nbgrader: Mapping[str, Mapping[str, CellScore]]) -> list[str]:
    """One line per student with a TA's score given before her latest autograde: nbgrader keeps it
    when she hands in again (it only marks the cell as needing a grade), and the export counts it
    for an answer no TA read."""
    lines = []
    for student, cells in sorted(nbgrader.items()):
        stale = sorted(name for name, cell in cells.items() if cell.manual_score is not None and cell.needs_manual_grade)
        if stale:
            lines.append(f"{student}: a TA's score given before her latest autograde still counts on "
                         f"{', '.join(stale)} (handed in again?): grade them again in formgrader")
    return lines
