"""Puts the pinned executed notebook's outputs into the notebook `nbgrader autograde` writes.

The trusted grader ran the submitted notebook once, in its sandbox; each executed cell records
its position in the submitted notebook's cells and the sha256 of the source that ran. Autograde's
notebook is the submitted one after nbgrader's sanitising (outputs cleared, grade and locked cells
restored to the release's version, deleted grade cells possibly added back), so a position there
need not be the same. The two cell lists are aligned on what identifies a cell across that
sanitising: its cell id when the submitted notebook gives every cell one (nbformat 4.5), else its
nbgrader grade_id, else its source. A cell a student moved, added or deleted is moved, added or
deleted in both lists alike, so outputs stay with the cell that produced them; an executed cell
that finds no counterpart (or whose source is not what ran) shows nowhere. Nothing runs here.
"""

from __future__ import annotations

import bisect
import copy
import difflib
import json
from pathlib import Path

from nbformat import NotebookNode, from_dict

from autograder.nbgrader_bridge.feedback_tracebacks import OMITTED
from autograder.sandbox.cell_outputs import OMITTED_FRAMES
from autograder.sandbox.nbrunner import MAX_JSON_NESTING, json_too_deep, source_sha256

RESTORED_NOTE = "（这个单元格已恢复为作业发布时的内容；下面是你提交的版本运行时的输出。）\n"


class SubmittedNotebookError(Exception):
    """The submitted notebook cannot be read (it was graded as unreadable: nothing to show)."""


def submitted_cells(path: Path) -> list[dict]:
    """Every cell of the submitted notebook file, as raw JSON (the way the sandbox read it)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        if json_too_deep(text):   # as the sandbox read it (never at whatever depth nbgrader's stack allows)
            raise ValueError(f"nested more than {MAX_JSON_NESTING} levels deep")
        cells = json.loads(text)["cells"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as err:
        raise SubmittedNotebookError(f"{path}: {err}") from None
    if not isinstance(cells, list):
        raise SubmittedNotebookError(f"{path}: 'cells' is not a list")
    return cells


def _source(cell) -> str:
    source = cell.get("source", "") if isinstance(cell, dict) else ""
    if isinstance(source, list):
        source = "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def _key(cell, use_ids: bool) -> tuple[str, str]:
    if not isinstance(cell, dict):
        return ("?", "")
    kind = str(cell.get("cell_type"))
    if use_ids:
        return (kind, "id:" + str(cell.get("id")))
    nbgrader = (cell.get("metadata") or {}).get("nbgrader")
    grade_id = nbgrader.get("grade_id") if isinstance(nbgrader, dict) else None
    if isinstance(grade_id, str) and grade_id:
        return (kind, "grade_id:" + grade_id)
    return (kind, "source:" + source_sha256(_source(cell)))


# Cells up to which both lists are aligned by difflib (every notebook a student writes by hand: the
# release has about 220). Its matcher takes time in the square of a key's repeats: 20,000 identical
# cells without ids cost autograde 48 s of CPU. Longer lists are aligned in about linear time.
MOST_CELLS_MATCHED = 2_000


def align(submitted: list, autograded: list) -> dict[int, int]:
    """Position in the submitted cells -> position of the same cell in autograde's notebook."""
    ids = [c.get("id") if isinstance(c, dict) else None for c in submitted]
    use_ids = bool(ids) and all(isinstance(i, str) and i for i in ids) and len(set(ids)) == len(ids)
    left = [_key(c, use_ids) for c in submitted]
    right = [_key(c, use_ids) for c in autograded]
    if len(left) + len(right) > 2 * MOST_CELLS_MATCHED:
        return _align_long(left, right)
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    return {block.a + k: block.b + k for block in matcher.get_matching_blocks() for k in range(block.size)}


def _align_long(left: list, right: list) -> dict[int, int]:
    """Patience alignment: the keys found once on each side, kept where both sides list them in the
    same order (a longest increasing subsequence), and between two such anchors the cells alike from
    either end of the gap, paired in order."""
    once_left, once_right = _found_once(left), _found_once(right)
    pairs = sorted((i, once_right[key]) for key, i in once_left.items() if key in once_right)
    where: dict[int, int] = {}
    a, b = 0, 0
    for i, j in [*_increasing(pairs), (len(left), len(right))]:
        _pair_ends(left, a, i, right, b, j, where)
        if i < len(left):
            where[i] = j
        a, b = i + 1, j + 1
    return where


def _found_once(keys: list) -> dict:
    """Key -> its position, for the keys found exactly once."""
    seen: dict = {}
    for index, key in enumerate(keys):
        seen[key] = -1 if key in seen else index
    return {key: index for key, index in seen.items() if index >= 0}


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of `pairs` (sorted by their first) whose seconds increase too."""
    ends: list[int] = []             # ends[k]: the smallest second that ends a run of k + 1 so far
    last: list[int] = []             # last[k]: the index in pairs of that run's last pair
    before = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(ends, j)
        before[index] = last[k - 1] if k else -1
        ends[k:k + 1], last[k:k + 1] = [j], [index]
    run, index = [], last[-1] if last else -1
    while index >= 0:
        run.append(pairs[index])
        index = before[index]
    return run[::-1]


def _pair_ends(left: list, a: int, a_end: int, right: list, b: int, b_end: int, where: dict[int, int]) -> None:
    """Pairs the alike cells at the start of left[a:a_end] and right[b:b_end], then at their ends."""
    while a < a_end and b < b_end and left[a] == right[b]:
        where[a] = b
        a, b = a + 1, b + 1
    while a < a_end and b < b_end and left[a_end - 1] == right[b_end - 1]:
        a_end, b_end = a_end - 1, b_end - 1
        where[a_end] = b_end


def place_outputs(nb: NotebookNode, submitted: list, executed: dict) -> int:
    """Writes each executed cell's outputs and execution count into its cell of `nb` (every other
    code cell is left without outputs); returns how many cells got theirs."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    where = align(submitted, nb.cells)
    placed = 0
    for record in executed.get("cells", []):
        index = record["index"]
        if index >= len(submitted) or index not in where:
            continue
        ran = submitted[index]
        if not isinstance(ran, dict) or ran.get("cell_type") != "code" or \
                source_sha256(_source(ran)) != record["source_sha256"]:
            continue   # not the cell that ran: its outputs show nowhere
        cell = nb.cells[where[index]]
        if cell.cell_type != "code":
            continue
        outputs = [_with_feedback_frames(o) for o in copy.deepcopy(record["outputs"])]
        if outputs and cell.source != _source(ran):
            outputs.insert(0, {"output_type": "stream", "name": "stdout", "text": RESTORED_NOTE})
        cell.outputs = [from_dict(o) for o in outputs]
        cell.execution_count = record["execution_count"]
        placed += 1
    return placed


def _with_feedback_frames(output: dict) -> dict:
    """The sandbox's line for frames outside the submission, as the feedback words it."""
    if output.get("output_type") == "error":
        output["traceback"] = [OMITTED if line == OMITTED_FRAMES + "\n" else line for line in output["traceback"]]
    return output
