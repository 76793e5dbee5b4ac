"""The student README: a template from solutions/<assignment>/ with the points filled in from grading.toml."""

from __future__ import annotations

from string import Template

from autograder.build.student_files import zip_name
from autograder.engine.registry import GradingConfig
from autograder.engine.vocabulary import REPORT_KINDS, ItemKind

KIND_LABELS = {ItemKind.FUNCTION: "函数（自动评分）", ItemKind.NUMBER: "数值题（自动评分）",
               ItemKind.CHOICE: "选择题（自动评分）", ItemKind.TEXT: "文字题（人工评分）"}


def render_readme(template: str, config: GradingConfig) -> str:
    """Fill $grading_table, $total_points, $function_points, $report_points, $manual_points, $zip_name.

    Template.substitute raises on an unknown placeholder, so a typo in the template fails the build.
    """
    def total(*kinds: ItemKind) -> str:
        return f"{sum(item.points for item in config.items_of(*kinds)):g}"

    return Template(template).substitute(
        grading_table=grading_table(config),
        total_points=f"{config.total_points:g}",
        function_points=total(ItemKind.FUNCTION),
        report_points=total(*REPORT_KINDS),
        manual_points=total(ItemKind.TEXT),
        zip_name=zip_name(config),
    )


def grading_table(config: GradingConfig) -> str:
    """One row per item; a column says what the item asks (grading.toml `demand`) when items declare it."""
    with_demand = any(item.demand is not None for item in config.items)
    head, rule = "| 评分项 | 类型 | 内容 | 分值 |", "|---|---|---|---:|"
    if with_demand:
        head, rule = "| 评分项 | 类型 | 要求 | 内容 | 分值 |", "|---|---|---|---|---:|"
    rows = [head, rule]
    for item in config.items:
        demand = f" {item.demand.label if item.demand else '-'} |" if with_demand else ""
        rows.append(f"| `{item.id}` | {KIND_LABELS[item.kind]} |{demand} {item.title} | {item.points:g} |")
    rows.append(f"| **合计** | |{' |' if with_demand else ''} | **{config.total_points:g}** |")
    return "\n".join(rows)
