"""Words the notebook, the self-check and the feedback share: item kinds, answer stubs, tolerances.

One source, so the handout cannot state a tolerance the grader does not apply and the self-check
cannot mistake a released stub for an answer.
"""

from __future__ import annotations

from enum import StrEnum


class ItemKind(StrEnum):
    """What a grading.toml item is; the value is the `kind` string written in grading.toml."""

    FUNCTION = "function"  # implemented in the student's module, graded by hidden tests
    NUMBER = "number"  # a report answer: a number within rtol/atol of the key
    CHOICE = "choice"  # a report answer: one letter
    TEXT = "text"  # a report answer graded by hand

    @property
    def is_report(self) -> bool:
        """Answered in the notebook (every kind but a function)."""
        return self is not ItemKind.FUNCTION

    @property
    def is_automatic(self) -> bool:
        return self is not ItemKind.TEXT


class Demand(StrEnum):
    """What an item asks of the student (grading.toml `demand`), shown in the README's table of items."""

    IMPLEMENT = "implement"  # a function item: write the code
    READ_OFF = "read-off"  # a value the notebook prints, or one formula the prompt spells out
    REASONING = "reasoning"  # a step of reasoning or modelling the notebook does not print
    MEASURE = "measure"  # a value the student measures on their own machine
    EXPLAIN = "explain"  # a free-text answer

    @property
    def label(self) -> str:
        return {"implement": "实现", "read-off": "读表/套公式", "reasoning": "推理/建模", "measure": "测量",
                "explain": "解释"}[self.value]


# Which demands fit which kind: a function is implemented, a text explained, a keyed answer either.
DEMANDS_OF_KIND = {
    ItemKind.FUNCTION: (Demand.IMPLEMENT,),
    ItemKind.NUMBER: (Demand.READ_OFF, Demand.REASONING, Demand.MEASURE),
    ItemKind.CHOICE: (Demand.READ_OFF, Demand.REASONING),
    ItemKind.TEXT: (Demand.EXPLAIN,),
}

REPORT_KINDS = tuple(kind for kind in ItemKind if kind.is_report)
KEYED_KINDS = (ItemKind.NUMBER, ItemKind.CHOICE)  # report items with an answer key
AUTOMATIC_KINDS = (ItemKind.FUNCTION, *KEYED_KINDS)  # what the trusted grader scores by itself

# The released answer cells. nbgrader's ClearSolutions.code_stub / text_stub are set to these, so
# that `nbgrader generate_assignment` leaves the cells exactly as the build wrote them, and the
# self-check recognises an untouched text answer.
ANSWER_STUB = "# 在这里作答：按上面题目写的变量名、类型和单位给变量赋值，然后运行这个格子"
TEXT_STUB = "（在这里用自己的话作答）"


def tolerance_phrase(rtol: float, atol: float, unit: str = "") -> str:
    """The acceptance rule |answer − key| ≤ atol + rtol·|key| in Chinese, e.g. "相对误差不超过 2%"."""
    suffix = f" {unit}" if unit else ""
    parts = []
    if rtol:
        percent = f"{rtol * 100:g}"
        shown = f"{percent}%" if "e" not in percent else f"{rtol:g}（相对值）"  # 2%, but 1e-09, not 1e-07%
        parts.append(f"与参考答案的相对误差不超过 {shown}")
    if atol:
        parts.append(f"绝对误差不超过 {atol:g}{suffix}")
    return "，或".join(parts) if parts else "要求完全相等"
