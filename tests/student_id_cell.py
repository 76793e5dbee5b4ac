"""The notebook's first code cell as a student fills it in: their STUDENT_ID and the personal
VARIANT_TOKEN the instructor gave them (lecture 1 has per-student variants; a student on the
course roster opens their entry of the released parameter table with their own token)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

ID_LINE = re.compile(r'^STUDENT_ID = ""', flags=re.M)
TOKEN_LINE = re.compile(r'^VARIANT_TOKEN = ""', flags=re.M)


def typed_in(nb: nbformat.NotebookNode, student: str, token: str) -> nbformat.NotebookNode:
    """`nb` (changed in place, and returned) with `student` and `token` typed into its empty id cell."""
    cell = next((c for c in nb.cells if c.cell_type == "code" and ID_LINE.search(c.source)), None)
    assert cell is not None, "the notebook has no empty STUDENT_ID to fill in"
    cell.source = ID_LINE.sub(f"STUDENT_ID = {student!r}", cell.source, count=1)
    if token or TOKEN_LINE.search(cell.source):
        assert TOKEN_LINE.search(cell.source), "the notebook has no empty VARIANT_TOKEN to fill in"
        cell.source = TOKEN_LINE.sub(f"VARIANT_TOKEN = {token!r}", cell.source, count=1)
    return nb


def type_student_id(notebook: Path, student: str = "alice", token: str | None = None,
                    assignment: str = "lec01_codesign") -> None:
    """Types them into the notebook file; token=None: the token the instructor gave `student`."""
    if token is None:
        from autograder.engine.variants import variant_token
        token = variant_token(assignment, student)
    nb = nbformat.read(notebook, as_version=4)
    nbformat.write(typed_in(nb, student, token), notebook)
