"""Render a notebook source (a list of cells) into the released or the answered notebook.

Released: answer cells hold a stub, so an unanswered question leaves its variable undefined (the
graders then score it 0; the self-check says "还没有作答"). Answered: the reference answers, i.e.
a full-marks submission. Everything a question states about its grading (title, points, format,
unit, tolerance) comes from grading.toml, so the notebook cannot disagree with the grader.
"""

from __future__ import annotations

import ast
import io
import tokenize
import hashlib

import nbformat

from authoring.cells import Cell, Code, FunctionCheck, Markdown, Question
from autograder.engine.registry import GradingConfig, Item
from autograder.engine.vocabulary import ANSWER_STUB, REPORT_KINDS, TEXT_STUB, ItemKind, tolerance_phrase
from autograder.errors import InstructorError

NBGRADER_SCHEMA = 3
NOTEBOOK_METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


class NotebookSourceError(InstructorError):
    """The notebook source disagrees with grading.toml or holds invalid Python."""


def answer_cell_id(item_id: str) -> str:
    """grade_id of a question's answer cell (its grade cell's grade_id is the item id itself)."""
    return f"{item_id}_answer"


# The first code cell of an assignment with per-student variants (autograder/engine/variants.py).
# Deliberately without nbgrader metadata: neither ClearSolutions (generate_assignment) nor
# OverwriteCells (autograde) touches a cell nbgrader does not track, so the id the student typed
# is what every copy of the notebook keeps; the trusted grader reads STUDENT_ID back.
STUDENT_ID_CELL_ID = "student_id"
STUDENT_ID_CELL = """\
STUDENT_ID = ""  # 在引号里填你的学号（和提交时用的一致）；JupyterHub 上留空会自动取登录名
VARIANT_TOKEN = ""  # 在引号里填助教发给你本人的口令（形如 ABCD-EFGH-JKLM-NPQR）；JupyterHub 上可能已替你设好
from variant import variant_for

VARIANT = variant_for(STUDENT_ID, VARIANT_TOKEN)
VARIANT  # 你的参数：下面各题都用它们"""


def render_notebook(cells: tuple[Cell, ...], config: GradingConfig, *, answered: bool) -> nbformat.NotebookNode:
    from autograder.engine.variants import has_variants

    items = {item.id: item for item in config.items}
    _check_against_config(cells, items)
    renderer = _Renderer(answered=answered, module_file=f"{config.student_module}.py")
    student_id_cell = has_variants(config.assignment)
    for cell in cells:
        if student_id_cell and not isinstance(cell, Markdown):  # first among the code cells
            renderer.student_id_cell()
            student_id_cell = False
        renderer.add(cell, items)
    nb = nbformat.v4.new_notebook(cells=renderer.cells, metadata=NOTEBOOK_METADATA)
    nbformat.validate(nb)
    return nb


def notebook_text(nb: nbformat.NotebookNode) -> str:
    """Deterministic JSON (nbformat sorts keys; cell ids are derived from content)."""
    return nbformat.writes(nb) + "\n"


# --- what a question says about its grading --------------------------------------------------
def answer_format(item: Item) -> str:
    """One Chinese sentence: the variable, its type, unit and tolerance (or how text is graded)."""
    if item.kind is ItemKind.NUMBER:
        unit = f"，单位：{item.unit}" if item.unit else ""
        return (f"在下面的格子里给变量 `{item.id}` 赋值——一个数（`int` 或 `float`，不要带引号或单位）{unit}。"
                f"{tolerance_phrase(item.rtol, item.atol, item.unit)} 即得分。")
    if item.kind is ItemKind.CHOICE:
        letters = "、".join(f'`"{c}"`' for c in item.choices)
        return f"在下面的格子里给变量 `{item.id}` 赋值——一个字符串，取 {letters} 之一（字母大小写都可以）。"
    if item.kind is ItemKind.TEXT:
        return "直接在下面的格子里（Markdown）用自己的话作答，由助教人工评分。"
    raise NotebookSourceError(f"{item.id}: kind {item.kind!r} is not a report question")


def _points(item: Item) -> str:
    return f"{item.points:g} 分"


# --- rendering -------------------------------------------------------------------------------
class _Renderer:
    def __init__(self, *, answered: bool, module_file: str):
        self.answered = answered
        self.module_file = module_file  # where function items are implemented
        self.cells: list[nbformat.NotebookNode] = []
        self._ids: set[str] = set()
        self._guarded = False  # once a code cell imports GUARD, every later demo cell runs under it

    def add(self, cell: Cell, items: dict[str, Item]) -> None:
        if isinstance(cell, Markdown):
            self._locked_markdown(cell.source)
        elif isinstance(cell, Code):
            tree = _parse(cell.source, "a code cell")
            source = guarded_source(cell.source) if self._guarded else cell.source
            self._code(source, self._content_id("code", cell.source), locked=cell.locked)
            self._guarded = self._guarded or GUARD in _imported_names(tree)
        elif isinstance(cell, FunctionCheck):
            item = items[cell.function]
            self._locked_markdown(
                f"#### 评分项 `{item.id}`：{item.title}（{_points(item)}）\n\n"
                f"在 `{self.module_file}` 里实现 `{item.id}`，再运行下面的格子：它跑一遍公开检查并告诉你结果"
                "（评分时还有更多隐藏测试）。", grade_id=f"{item.id}_heading")
            self._grade_cell(item)
        elif isinstance(cell, Question):
            self._question(cell, items[cell.id])
        else:
            raise NotebookSourceError(f"unknown cell type {type(cell).__name__}")

    def student_id_cell(self) -> None:
        self._code(STUDENT_ID_CELL, STUDENT_ID_CELL_ID)

    def _question(self, q: Question, item: Item) -> None:
        self._locked_markdown(
            f"### {item.id}：{item.title}（{_points(item)}）\n\n{q.prompt}\n\n> **作答**：{answer_format(item)}",
            grade_id=f"{item.id}_prompt")
        if item.kind is ItemKind.TEXT:
            source = q.answer if self.answered else TEXT_STUB
            meta = _nbgrader(item.id, solution=True, grade=True, points=item.points)
            self._add(nbformat.v4.new_markdown_cell(source, id=item.id, metadata={"nbgrader": meta}))
            return
        tree = _parse(q.answer, f"the answer of {item.id}")
        if item.id not in _assigned_names(tree):
            raise NotebookSourceError(f"the reference answer of {item.id} does not assign the variable {item.id}")
        source = q.answer if self.answered else ANSWER_STUB
        grade_id = answer_cell_id(item.id)
        self._code(source, grade_id, nbgrader=_nbgrader(grade_id, solution=True))
        self._grade_cell(item)

    def _grade_cell(self, item: Item) -> None:
        meta = _nbgrader(item.id, grade=True, locked=True, points=item.points)
        self._code(f'check("{item.id}")', item.id, nbgrader=meta)

    def _locked_markdown(self, source: str, grade_id: str | None = None) -> None:
        grade_id = grade_id or self._content_id("md", source)
        meta = {"nbgrader": _nbgrader(grade_id, locked=True)}
        self._add(nbformat.v4.new_markdown_cell(source, id=grade_id, metadata=meta))

    def _code(self, source: str, cell_id: str, *, locked: bool = False, nbgrader: dict | None = None) -> None:
        if locked and nbgrader is None:
            nbgrader = _nbgrader(cell_id, locked=True)
        meta = {"nbgrader": nbgrader} if nbgrader else {}
        self._add(nbformat.v4.new_code_cell(source, id=cell_id, metadata=meta))

    def _add(self, cell: nbformat.NotebookNode) -> None:
        if cell.id in self._ids:
            raise NotebookSourceError(f"duplicate cell id {cell.id!r}")
        self._ids.add(cell.id)
        self.cells.append(cell)

    def _content_id(self, prefix: str, source: str) -> str:
        """A stable id from the content: inserting a cell elsewhere does not renumber this one."""
        digest = hashlib.sha256(source.encode()).hexdigest()
        base = f"{prefix}-{digest[:10]}"
        candidate, n = base, 1
        while candidate in self._ids:  # the same text twice in one notebook
            n += 1
            candidate = f"{base}-{n}"
        return candidate


def _nbgrader(grade_id: str, *, solution: bool = False, grade: bool = False, locked: bool = False,
              points: float | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": NBGRADER_SCHEMA,
            "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return meta


# A demo cell that calls a function the student has not written yet must not stop "Run All":
# from the cell that imports GUARD (the released selfcheck's) on, every demo cell runs inside it,
# and prints one "尚未实现" line instead of raising (a later cell that needed its results too).
GUARD = "skip_if_unfinished"
GUARD_LINE = f"with {GUARD}():  # 用到还没实现的函数时只打印一行“尚未实现”，Run All 继续往下运行"


def guarded_source(source: str) -> str:
    """`source` as the body of GUARD_LINE: every line indented, except those inside a string that
    spans lines (their text must not change)."""
    inside = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.STRING or getattr(tokenize, "FSTRING_MIDDLE", None) == token.type:
            inside.update(range(token.start[0] + 1, token.end[0] + 1))
    lines = source.splitlines()
    body = [line if number in inside or not line.strip() else f"    {line}" for number, line in enumerate(lines, 1)]
    return GUARD_LINE + "\n" + "\n".join(body)


def _imported_names(tree: ast.Module) -> set[str]:
    return {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
            for alias in node.names}


def _parse(source: str, what: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as err:
        raise NotebookSourceError(f"{what} is not valid Python: {err.msg} (line {err.lineno})\n{source}") from None


def _assigned_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _check_against_config(cells: tuple[Cell, ...], items: dict[str, Item]) -> None:
    seen: list[str] = []
    for cell in cells:
        if isinstance(cell, FunctionCheck):
            item_id, want = cell.function, (ItemKind.FUNCTION,)
        elif isinstance(cell, Question):
            item_id, want = cell.id, REPORT_KINDS
        else:
            continue
        if item_id not in items:
            raise NotebookSourceError(f"the notebook grades {item_id!r}, which grading.toml does not list")
        if items[item_id].kind not in want:
            raise NotebookSourceError(f"{item_id} is a {items[item_id].kind} item in grading.toml but a "
                                      f"{type(cell).__name__} in the notebook source")
        seen.append(item_id)
    repeated = sorted({i for i in seen if seen.count(i) > 1})
    missing = [i for i in items if i not in seen]
    if repeated or missing:
        raise NotebookSourceError(f"every grading.toml item needs exactly one grade cell; "
                                  f"repeated: {repeated or 'none'}, missing: {missing or 'none'}")
