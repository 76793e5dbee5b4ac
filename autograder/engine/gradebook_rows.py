"""What the end-of-batch summary keeps of each student: a few numbers and short texts, taken from
the result as it is read and the result dropped, so the instructor's memory does not grow with
the results (≈ 0.2 MB each) at 10,000 students."""

from __future__ import annotations

from dataclasses import dataclass

from autograder.engine.feedback import points
from autograder.engine.results import SubmissionResult
from autograder.engine.vocabulary import KEYED_KINDS, ItemKind


@dataclass(frozen=True, slots=True)
class GradebookRow:
    """One student's line of the console gradebook (console_view.py)."""

    student: str
    student_id: str | None  # the id graded (per-student variants), when not the folder's name
    score: float            # automatic points awarded, before the late penalty
    auto_max_score: float
    max_score: float        # the assignment's total, hand-graded items included
    functions: tuple[float, float]   # (awarded, possible) over the function items
    answers: tuple[float, float]     # (awarded, possible) over the keyed report answers
    pending: float          # hand-graded points still to grade
    late: str               # late_cell(): "-9.1 (2d 10%)", "on time", ... or "?" (no submission time)
    late_known: bool
    not_passed: str         # not_passed(): "quantize(8.57/20), q01(0/2)", or "-"
    isolation: str
    seconds: float          # grading time
    flags: tuple[str, ...] = ()

    @classmethod
    def of(cls, result: SubmissionResult, shared: dict | None = None) -> GradebookRow:
        """The row of `result`. Rows made with one `shared` dict share their equal values (most
        students have the same totals and the same items not passed), which keeps a class's rows
        at about 0.2 kB a student."""
        same = (lambda value: value) if shared is None else (lambda value: shared.setdefault(value, value))
        functions = [i for i in result.items if i.kind == ItemKind.FUNCTION]
        answers = [i for i in result.items if i.kind in KEYED_KINDS]
        student_id = result.student if result.student_id == result.student else result.student_id   # one string, not two
        return cls(result.student, student_id, same(float(result.score)), same(float(result.auto_max_score)),
                   same(float(result.max_score)),
                   same((float(sum(i.score for i in functions)), float(sum(i.max_score for i in functions)))),
                   same((float(sum(i.score for i in answers)), float(sum(i.max_score for i in answers)))),
                   same(float(sum(i.max_score for i in result.manual_items))), same(late_cell(result)),
                   result.late is not None, same(not_passed(result)), same(result.isolation), float(result.seconds),
                   same(tuple(result.flags)))


def late_cell(result: SubmissionResult) -> str:
    """"-9.1 (2d 10%)" for a late submission, "on time", or "?" without a submission time."""
    late = result.late
    if late is None:
        return "?"
    if late.penalty == 0:
        return "on time" if late.seconds_late == 0 else "0 (grace)" if late.days_charged == 0 else "0"
    return f"-{points(late.penalty)} ({late.days_charged}d {late.percent:g}%)"


def not_passed(result: SubmissionResult) -> str:
    """Automatic items below full marks with their points, "quantize(8.57/20), q01(0/2)" (no
    space inside an item, so wrapping never splits one); "all N items: 0 points" for nothing."""
    automatic = [i for i in result.items if i.status != "manual"]
    missed = [f"{i.id}({points(i.score)}/{points(i.max_score)})" for i in automatic
              if i.status in ("failed", "partial", "error")]
    if missed and len(missed) == len(automatic) and not any(i.score for i in automatic):
        why = f" ({'; '.join(result.flags)})" if result.flags else ""
        return f"all {len(automatic)} items: 0 points{why}"
    return ", ".join(missed) or "-"
