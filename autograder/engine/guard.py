"""One item's grading must never cost the whole submission: an unexpected exception while grading
an item (a returned value the checks did not foresee) becomes that item's "error" result, 0
points, and the rest of the submission is still graded. A broken sandbox is not caught: it is
the grader's configuration, and grading must stop loudly rather than award zeros.
"""

from __future__ import annotations

import logging
from typing import Callable

from autograder.engine.feedback import inline_text
from autograder.engine.registry import Item
from autograder.engine.results import ItemResult
from autograder.sandbox import SandboxError, SandboxUnavailable

log = logging.getLogger(__name__)
MESSAGE_CHARS = 200


def guarded(item: Item, grade: Callable[[], ItemResult]) -> ItemResult:
    try:
        return grade()
    except (SandboxError, SandboxUnavailable):
        raise
    except Exception as exc:  # noqa: BLE001 - whatever a submission returns, only this item is lost
        log.error("grading item %s failed inside the grader", item.id, exc_info=True)
        detail = inline_text(f"{type(exc).__name__}: {exc}", MESSAGE_CHARS)
        feedback = (f"**无法评分：** 评分程序无法比较这一项的返回值：`{detail}`。"
                    "这一项暂记 0 分，请把这份反馈交给助教人工复核。\n")
        return ItemResult(item.id, item.kind, 0.0, item.points, "error", feedback, "", item.title)
