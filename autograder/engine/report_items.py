"""Grade the report questions from the answer variables the notebook left behind (plain data
read back from the sandbox). Number items: |answer − key| <= atol + rtol·|key|. Choice items: one
letter, case and surrounding blanks ignored. Text items: "manual", 0 points until a TA grades
them. Feedback says right or wrong and the tolerance, never the key.

Each number and choice result keeps the submitted value (`ItemResult.answer`, `recorded_answer`),
so a report can compare a class's answers with other keys (views/answer_matches.py) without
running anything again.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Mapping, Sequence

import numpy as np

from autograder.engine.answer_checks import DerivedKey, MeasuredKey, ReferenceKey
from autograder.engine.cases import render_number
from autograder.engine.checks import is_real_number
from autograder.engine.feedback import code, inline_text, truncate_output
from autograder.engine.guard import guarded
from autograder.engine.registry import Item
from autograder.engine.results import ItemResult
from autograder.engine.vocabulary import ItemKind, tolerance_phrase
from autograder.sandbox import NotebookOutcome, Unsupported

_ABSENT = object()
SHOWN_CELL_ERRORS = 3
RECORDED_TEXT_CHARS = 200  # a choice answer is one letter: a longer string is kept only this far


def accepts_number(item: Item, answer, key):
    """Whether a number answer is right for `key` under the item's tolerance. Written with
    operators alone, so it also compares numpy arrays of answers and keys element-wise."""
    return abs(answer - key) <= item.atol + item.rtol * abs(key)


def accepts_choice(answer: str, key: str) -> bool:
    return answer.strip().upper() == key.strip().upper()


def recorded_answer(value: Any) -> dict:
    """The submitted value as JSON-plain data for the result: {"state": "given", "value": v} with v
    a finite number, a string, a bool or None (the unanswered placeholder); {"state": "absent"}
    when the notebook did not define it (or there was no readable notebook); {"state":
    "unreadable", "type": name} for anything else (an array, a non-finite or huge number, ...).
    Items with a measured key record {"state": "measured"} only (grade_report)."""
    if value is _ABSENT:
        return {"state": "absent"}
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, bool):
        return {"state": "given", "value": value}
    if isinstance(value, str):
        return {"state": "given", "value": value[:RECORDED_TEXT_CHARS]}
    if is_real_number(value):
        try:
            number = float(value)
        except OverflowError:
            return {"state": "unreadable", "type": "int (too large for a float)"}
        if math.isfinite(number):
            return {"state": "given", "value": value if isinstance(value, int) else number}
        return {"state": "unreadable", "type": f"float {number!r}"}
    kind = value.type_name if isinstance(value, Unsupported) else type(value).__name__
    return {"state": "unreadable", "type": kind}


def grade_report(items: Sequence[Item], key: Mapping[str, Any], notebook: NotebookOutcome | None,
                 notebook_name: str, problem: str = "", cell_sources: Mapping[int, str] | None = None
                 ) -> list[ItemResult]:
    """`problem` explains why there is no notebook outcome (missing file) when `notebook` is None;
    `cell_sources` (cell index -> source) lets the feedback quote a failing cell."""
    output = truncate_output(notebook.output) if notebook else ""
    note = _notebook_note(notebook, notebook_name, cell_sources or {})
    results = []
    for item in items:
        if item.kind is ItemKind.TEXT:
            results.append(ItemResult(item.id, item.kind, 0.0, item.points, "manual",
                                      f"文字题：由助教人工评分（{item.points:g} 分），自动评分不计分。\n",
                                      "", item.title))
            continue
        if notebook is None or notebook.status == "unreadable":
            reason = problem if notebook is None else f"`{notebook_name}` 无法读取：`{inline_text(notebook.message, 300)}`"
            results.append(ItemResult(item.id, item.kind, 0.0, item.points, "error",
                                      f"**无法评分：** {reason}\n", output, item.title, recorded_answer(_ABSENT)))
            continue
        judged = guarded(item, lambda: _judge_answer(item, notebook, key[item.id], note, output))
        # a measured (or derived-from-measured) number is the grading machine's if the notebook times
        # itself: recorded by kind only, so a result stays a pure function of the files
        answer = ({"state": "measured"} if isinstance(key.get(item.id), (MeasuredKey, DerivedKey, ReferenceKey))
                  else recorded_answer(notebook.variables.get(item.id, _ABSENT)))
        results.append(replace(judged, answer=answer))
    return results


def _judge_answer(item: Item, notebook: NotebookOutcome, key: Any, note: str, output: str) -> ItemResult:
    value = notebook.variables.get(item.id, _ABSENT)
    derived = key if isinstance(key, DerivedKey) else None
    if derived:  # the key follows from the student's own answers to other items
        key, why = derived.key_from(notebook.variables)
        if key is None:
            return ItemResult(item.id, item.kind, 0.0, item.points, "failed", f"无法判定：{why}{note}\n", output,
                              item.title)
    ok, text = (_number if item.kind is ItemKind.NUMBER else _choice)(item, value, key)
    if ok and isinstance(key, MeasuredKey) and key.own is not None:
        ok, text = _follows_from_own_timings(item, float(value), key, notebook.variables, text)
    if derived and not _unanswered(item, value):
        # a measured run differs from the next: the words may not (same file, same feedback)
        needs = "、".join(f"`{need}`" for need in derived.needs)
        rule = tolerance_phrase(item.rtol, item.atol, item.unit)
        text = (f"正确：与你同一次运行的 {needs} 一致（判定标准：{rule}）。" if ok else
                f"不正确：它应当由你同一次运行的 {needs} 算出，但对不上（判定标准：{rule}）。") if is_real_number(value) \
            else text
    feedback = text + ("" if ok else note)
    return ItemResult(item.id, item.kind, item.points if ok else 0.0, item.points,
                      "passed" if ok else "failed", feedback + "\n", output, item.title)


def _unanswered(item: Item, value: Any) -> str | None:
    if value is _ABSENT:
        return f"没有找到答案变量 `{item.id}`：没有定义它，或者定义它的单元格出错了。"
    if value is None or (isinstance(value, Unsupported) and value.type_name == "ellipsis"):
        return f"还没有作答（`{item.id}` 仍然是占位值）。"
    return None


def _number(item: Item, value: Any, key: float) -> tuple[bool, str]:
    missing = _unanswered(item, value)
    if missing:
        return False, missing
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if not is_real_number(value):
        kind = value.type_name if isinstance(value, Unsupported) else type(value).__name__
        return False, f"`{item.id}` 应该是一个数（int 或 float），现在是 {code(kind)}。"   # a __qualname__ is the student's
    try:
        answer = float(value)
    except OverflowError:  # an int of thousands of bits: a number, just not a plausible one
        return False, f"`{item.id}` = {render_number(value)}，不是有限的 float 数。"
    if not math.isfinite(answer):
        return False, f"`{item.id}` = {answer!r} 不是有限的数。"
    unit = f" {item.unit}" if item.unit else ""
    if isinstance(key, MeasuredKey):  # the value itself is not repeated: the next run measures another
        if key.rule:  # a range around this run's reference: neither it nor the value belongs in the feedback
            if key.low <= answer <= key.high:
                return True, f"通过：测量值与参照测量一致（判定标准：{key.rule}）。"
            return False, f"与参照测量不一致（判定标准：{key.rule}）。测量值要由代码在评分时量出，不要手抄数字。"
        rule = f"测量值，在 {key.low:g}–{key.high:g}{unit} 之间即可"
        if key.low <= answer <= key.high:
            return True, f"通过：测量值在合理范围内（判定标准：{rule}）。"
        return False, f"不在合理范围内：你的测量值 {answer:.6g}{unit}（判定标准：{rule}）。"
    if accepts_number(item, answer, key):
        return True, f"正确。你的答案 {answer:.6g}{unit}（判定标准：{tolerance_phrase(item.rtol, item.atol, item.unit)}）。"
    return False, f"不正确。你的答案 {answer:.6g}{unit}（判定标准：{tolerance_phrase(item.rtol, item.atol, item.unit)}）。"


def _follows_from_own_timings(item: Item, answer: float, key: MeasuredKey, variables: Mapping[str, Any],
                              text: str) -> tuple[bool, str]:
    """A measured value inside the window must also be one the run's own timings give, counted right
    (bytes moved, FLOP done): the window, wide for the machine's noise, lets a miscount by 2x through."""
    record = variables.get(key.record, _ABSENT)
    span = None if record is _ABSENT else key.own(record)
    if span is None:   # the run took no such timing with the assignment's module: the window alone
        return True, text
    if span and all(math.isfinite(end) for end in span):
        low, high = span
        if low <= answer <= high or accepts_number(item, answer, low) or accepts_number(item, answer, high):
            return True, text
    module = key.record.split(":", 1)[0]
    return False, (f"和参照测量在同一个数量级，但它不是你这次运行用 `{module}` 量出的任何一个耗时换算出来的"
                   f"（判定标准：按正确的字节数、FLOP 数换算，{tolerance_phrase(item.rtol, item.atol, item.unit)}）："
                   "检查每种运算搬了多少字节、做了多少 FLOP，以及单位换算。")


def _choice(item: Item, value: Any, key: str) -> tuple[bool, str]:
    missing = _unanswered(item, value)
    if missing:
        return False, missing
    options = "、".join(item.choices)
    if not isinstance(value, str):
        kind = value.type_name if isinstance(value, Unsupported) else type(value).__name__
        return False, f"`{item.id}` 应该是一个字母字符串（{options} 之一），现在是 {code(kind)}。"
    answer = value.strip().upper()
    if answer not in item.choices:
        return False, f"`{item.id}` = {code(repr(value))} 不是 {options} 之一。"   # the student's text: as code only
    if accepts_choice(answer, key):
        return True, f"正确。你的选择：{answer}。"
    return False, f"不正确。你的选择：{answer}。"


def _notebook_note(notebook: NotebookOutcome | None, name: str, sources: Mapping[int, str]) -> str:
    """Why answers may be missing: cells that failed, or a run that was cut short."""
    if notebook is None:
        return ""
    parts = []
    if notebook.status == "timeout":
        parts.append(f"`{name}` 没有在时间限制内运行完（`{inline_text(notebook.message, 300)}`），后面的答案可能没有执行到。")
    elif notebook.status == "crashed":
        parts.append(f"运行 `{name}` 的进程异常终止（`{inline_text(notebook.message, 300)}`）。")
    if notebook.cell_errors:
        shown = "；".join(f"{_cell_name(index, sources)} `{inline_text(kind, 80)}: {inline_text(message, 120)}`"
                         for index, kind, message in notebook.cell_errors[:SHOWN_CELL_ERRORS])
        more = "……" if len(notebook.cell_errors) > SHOWN_CELL_ERRORS else ""
        parts.append(f"运行 notebook 时有 {len(notebook.cell_errors)} 个单元格出错：{shown}{more}")
    return ("\n\n" + "\n\n".join(parts)) if parts else ""


def _cell_name(index: int, sources: Mapping[int, str]) -> str:
    """Jupyter shows no cell numbers: quote the cell's first line so the student can find it."""
    lines = [line.strip() for line in sources.get(index, "").splitlines() if line.strip()]
    if not lines:
        return f"第 {index + 1} 个单元格"
    first = lines[0].replace("`", "'")
    return f"以 `{first[:60]}{'…' if len(first) > 60 else ''}` 开头的单元格"
