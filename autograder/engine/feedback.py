"""Chinese Markdown feedback: per item (what was tested, what failed and why, the student's own
output) and per submission. Never the hidden tests' source, the reference, or an answer key:
only labels, verdict messages (built from the student's value and the expected value of one
failing example) and right/wrong for report answers.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Sequence

from autograder.engine.cases import Standard, Suite, TestRecord
from autograder.sandbox import confinement

if TYPE_CHECKING:
    from autograder.engine.results import ItemResult, SubmissionResult

FEEDBACK_OUTPUT_CHARS = 1500  # student output quoted in feedback
STORED_OUTPUT_CHARS = 4000  # student output kept in ItemResult.output
DETAILED_FAILURES = 6
STATUS_WORDS = {"passed": "通过", "failed": "未通过", "partial": "部分通过", "manual": "待人工评分", "error": "无法评分"}


def truncate_output(text: str, limit: int = STORED_OUTPUT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n……（输出太长，只保留前 {limit} 个字符，共 {len(text)} 个）"


_LINE_BREAKS = re.compile(r"\s*[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+\s*")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


def inline_text(text: str, limit: int) -> str:
    """Student-supplied text made safe inside a Markdown code span: no backtick to close it, no
    line break to end the paragraph (a blank line would let the rest render as headings, links
    or HTML), no terminal control characters."""
    text = _CONTROL.sub("", _LINE_BREAKS.sub(" ⏎ ", (text or "").strip())).replace("`", "'")
    return text if len(text) <= limit else text[:limit] + "…"


def code(text: str, limit: int = 80) -> str:
    """Student-supplied text quoted as an inline code span: the one form it takes in Markdown."""
    return f"`{inline_text(text, limit)}`"


def fenced_text(text: str) -> str:
    """Student-supplied text made safe inside a ``` fence: it cannot close the fence."""
    return text.replace("```", "ʼʼʼ")


def output_block(text: str, title: str = "你的代码的输出") -> str:
    text = text.strip("\n")
    if not text.strip():
        return ""
    shown = fenced_text(truncate_output(text, FEEDBACK_OUTPUT_CHARS))
    return f"\n**{title}（截断到 {FEEDBACK_OUTPUT_CHARS} 个字符）：**\n\n```text\n{shown}\n```\n"


def points(value: float) -> str:
    return f"{value:g}"


def function_feedback(suite: Suite, records: Sequence[TestRecord], error: str, output: str,
                      note: str = "") -> str:
    """`note`: a remark on the whole item shown under the count (e.g. why raise cases scored 0)."""
    lines = [f"**测试内容：** {suite.summary}", ""]
    if error:
        lines += [error if "NotImplementedError" in error else f"**无法测试：** {error}", output_block(output)]
        return "\n".join(lines).strip() + "\n"
    total = sum(r.weight for r in records)
    earned = sum(r.weight for r in records if r.verdict.ok)
    passed = [r for r in records if r.verdict.ok]
    failed = [r for r in records if not r.verdict.ok]
    lines.append(f"通过 {len(passed)} / {len(records)} 项测试（按权重 {100 * earned / total:.0f} %）。")
    if note:
        lines += ["", f"**注意：** {note}"]
    if failed:
        lines += ["", f"#### 未通过（{len(failed)} 项）", ""]
        first_seen: dict[str, int] = {}  # the same problem with another input is said once
        for n, record in enumerate(failed, 1):
            lines.append(f"**{n}. 【{record.group.label}】{record.label}**（权重 {points(record.weight)}）")
            lines.append("")
            problem = re.sub(r"^`[^`]*`", "", record.verdict.message)
            if problem in first_seen:
                lines += [f"（问题同第 {first_seen[problem]} 项。）", ""]
            elif n <= DETAILED_FAILURES or record.group is Standard.PROPERTY:
                first_seen[problem] = n
                lines += [record.verdict.message, ""]
            else:
                lines += ["（详情从略：先修正上面的问题。）", ""]
    if passed:
        lines += ["", f"#### 通过（{len(passed)} 项）", ""]
        lines += [f"- 【{r.group.label}】{r.label}" for r in passed]
    lines.append(output_block(output))
    return "\n".join(lines).strip() + "\n"


def item_name(item: ItemResult) -> str:
    return f"{item.id} — {item.title}" if item.title else item.id


def item_heading(item: ItemResult) -> str:
    return f"{item_name(item)}（{points(item.score)} / {points(item.max_score)} 分，{STATUS_WORDS[item.status]}）"


# Each isolation's and quota backend's sentence (confinement.py), by the name results record.
ISOLATION_WORDS = {i.name: i.words for i in (*confinement.ISOLATIONS, confinement.NOT_RUN)}
QUOTA_WORDS = {kind.name: kind.words for kind in confinement.QUOTA_KINDS}


def isolation_line(isolation: str, quotas: str = "") -> str:
    """One line saying how the student's code was isolated (and its resources bounded) while it
    was graded."""
    line = "**评分环境：** " + confinement.isolation_named(isolation).words
    if quotas:
        line += confinement.quota_named(quotas).words
    return line


def submission_markdown(result: SubmissionResult) -> str:
    """The whole feedback file of one student."""
    manual = result.manual_items
    lines = [f"# {result.assignment} 评分反馈：{code(result.student)}", "", isolation_line(result.isolation, result.quotas), ""]
    summary = f"自动评分 **{points(result.score)} / {points(result.auto_max_score)}** 分"
    if manual:
        manual_points = sum(i.max_score for i in manual)
        summary += (f"（总分 {points(result.max_score)} 分，其中 {points(manual_points)} 分的文字题"
                    f"需要助教人工评分：{'、'.join(i.id for i in manual)}）")
    lines += [summary + "。", ""]
    if result.late is not None:
        from autograder.engine.lateness import describe   # lazily: see lateness.py
        lines += [f"**提交时间：** {describe(result.late)}", ""]
    if result.flags and result.declared_id:  # per-student variants: the notebook names someone else
        declared, graded = inline_text(result.declared_id, 80), inline_text(result.student_id, 80)
        lines += [f"**学号：** notebook 里填的是 `{declared}`，但这份提交属于 `{graded}`：按 `{graded}` 的参数评分"
                  f"（已告知助教）。", ""]
    lines += ["| 项目 | 得分 | 满分 | 状态 |", "|---|---:|---:|---|"]
    for item in result.items:
        score = "—" if item.status == "manual" else points(item.score)
        lines.append(f"| {item.id} | {score} | {points(item.max_score)} | {STATUS_WORDS[item.status]} |")
    for item in result.items:
        lines += ["", f"## {item_heading(item)}", "", item.feedback_md.strip()]
    notebook_output = next((i.output for i in result.items if i.kind != "function" and i.output.strip()), "")
    if notebook_output:
        lines += ["", output_block(notebook_output, "notebook 运行时的输出")]
    if result.case_set:  # for instructors: equal digests = graded against the same hidden cases
        variant = f" · 参数 variant `{result.variant}`" if result.variant else ""
        lines += ["", "---", "", f"<sub>用例集 case set `{case_set_short(result.case_set)}`{variant}</sub>"]
    return "\n".join(lines).strip() + "\n"


def case_set_short(digest: str) -> str:
    return digest.removeprefix("sha256:")[:12]
