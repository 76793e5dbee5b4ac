"""Code a notebook keeps outside its code cells: Python defining a function or class in its
metadata, a markdown or raw cell, a cell's metadata, outputs or attachments.

The student's code can read its own notebook at run time, write such a string to a module file and
import it: no exec, eval or compile runs, so packed.py finds nothing, and the copied code, in no
code cell, would never be compared (a codesign.py of eight lines that loads the reference from the
notebook's metadata scored 154 of 154 and 0.000 against the copied classmate). Such strings are
compared after the code cells, and their places reported with the packed code.

Read like the sandbox reads a notebook (nbrunner's size and nesting bounds), never run; only
strings that mention `def` or `class` are parsed, at most MAX_PARSED characters of them in all, and
one longer than MAX_STRING_CHARS is reported unread.
"""

from __future__ import annotations

import json

from autograder.sandbox.nbrunner import MAX_NOTEBOOK_BYTES, beyond_a_notebook
from autograder.similarity.packed import defines_code

MAX_STRING_CHARS = 200_000    # one string parsed (the comparison reads no more of a student's code)
MAX_PARSED = 1_000_000        # characters parsed in one notebook (ast: ~0.3 s of CPU a million)
UNREAD = "(not read: longer than the comparison reads, or past what one notebook's parsing may cost)"


def hidden_code(path) -> list[tuple[str, str]]:
    """(place, text) of every string of the notebook at `path`, outside its code cells' sources,
    that is Python defining a function or class; a place whose string was not read carries UNREAD
    and an empty text. [] for a file that is no readable notebook (the code cells' reader says why)."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_NOTEBOOK_BYTES + 1)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    if len(raw) > MAX_NOTEBOOK_BYTES or beyond_a_notebook(text):
        return []   # (the code cells' reader, by the same bounds, says why)
    try:
        notebook = json.loads(text)
    except (ValueError, RecursionError):
        return []
    if not isinstance(notebook, dict):
        return []
    found, left = [], [MAX_PARSED]
    _visit(notebook.get("metadata"), "metadata", found, left)
    cells = notebook.get("cells")
    for index, cell in enumerate(cells if isinstance(cells, list) else []):
        if not isinstance(cell, dict):
            continue
        kind = cell.get("cell_type")
        for key, value in cell.items():
            if key in ("cell_type", "id", "execution_count") or (key == "source" and kind == "code"):
                continue
            where = f"cell {index} ({kind})" if key == "source" else f"cell {index} {key}"
            _visit(value, where, found, left)
    return found


def _visit(value, where: str, found: list, left: list) -> None:
    """Every string below `value` (a list of strings is one text: nbformat splits text into lines)."""
    if isinstance(value, str):
        _check(value, where, found, left)
    elif isinstance(value, list):
        if value and all(isinstance(item, str) for item in value):
            _check("".join(value), where, found, left)
        else:
            for item in value:
                _visit(item, where, found, left)
    elif isinstance(value, dict):
        for key, item in value.items():
            _visit(item, f"{where}.{key}", found, left)


def _check(text: str, where: str, found: list, left: list) -> None:
    if "def " not in text and "class " not in text:
        return
    if len(text) > min(MAX_STRING_CHARS, left[0]):
        found.append((f"{where} {UNREAD}", ""))
        return
    left[0] -= len(text)
    if defines_code(text):
        found.append((where, text))
