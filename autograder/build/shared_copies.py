"""Copies of the course's top-level modules an assignment declares (grading.toml `shared_modules`)
for the self-contained student folder."""

from __future__ import annotations

from pathlib import Path


def copy_header(module: str) -> str:
    return (f"# 自动生成：这是课程仓库根目录 {module} 的副本（python -m autograder build 生成），"
            "请勿修改——评分时它会被换回原样。\n")


def shared_copy(root: Path, module: str) -> str:
    """The module's text with a one-line header saying it is a generated copy."""
    return copy_header(module) + (root / module).read_text(encoding="utf-8")
