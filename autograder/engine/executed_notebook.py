"""The executed notebook: each code cell's outputs from the trusted grader's one run of the
student's notebook in its sandbox, kept so that `nbgrader autograde` shows them in the feedback
instead of running the notebook again.

    {"format": 1, "notebook": "handout.ipynb" (null: nothing ran), "status": the run's status,
     "cells": [{"index": position in the submitted notebook's cells, "id": its cell id or "",
                "source_sha256": sha256 of the source that ran, "execution_count": n,
                "outputs": [nbformat v4 outputs]}]}

What the sandbox sent is untrusted: `executed_notebook` keeps only well-formed outputs of the
kinds nbrunner makes (streams, a last expression's value and display() calls as text/plain,
figures as PNG, errors), with control characters stripped and every text bounded again. Nothing
the student controls becomes HTML or JavaScript: there is no text/html or other rich type.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

from autograder.engine.outputs import strip_control_chars
from autograder.sandbox.cell_outputs import MAX_FIGURE_PIXELS, MAX_FIGURES, MAX_NOTEBOOK_OUTPUTS, MAX_OUTPUT_TEXT

FORMAT = 1
MAX_CELLS = 10_000
MAX_OUTPUTS_PER_CELL = 100
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
# nbformat's schema wants a count >= 0 (a negative one made the autograded notebook invalid); a
# count of 4300 digits became the feedback's prompt
_MAX_COUNT = 2**31
# Room past a cell's text cap for the sandbox's own note on what it left out.
_NOTE_CHARS = 100
EXHAUSTED_NOTE = "\n…（notebook 的输出超过了评分保存的上限，其余输出省略）\n"


def executed_notebook(notebook: str | None, outcome) -> dict:
    """The executed notebook of a NotebookOutcome (None: the notebook did not run)."""
    cells = []
    if outcome is not None:
        for raw in list(outcome.cells)[:MAX_CELLS]:
            cell = _cell(raw)
            if cell is not None:
                cells.append(cell)
        _within_budget(cells)
    return {"format": FORMAT, "notebook": notebook if outcome is not None else None,
            "status": outcome.status if outcome is not None else "not run", "cells": cells}


def _cell(raw) -> dict | None:
    if not isinstance(raw, dict):
        return None
    index, cell_id, digest = raw.get("index"), raw.get("id"), raw.get("source_sha256")
    count, outputs = raw.get("execution_count"), raw.get("outputs")
    if not (type(index) is int and index >= 0 and isinstance(cell_id, str) and isinstance(digest, str)
            and _SHA256.match(digest) and type(count) is int and 0 <= count < _MAX_COUNT
            and isinstance(outputs, list)):
        return None
    kept = [o for o in (_output(o, count) for o in outputs[:MAX_OUTPUTS_PER_CELL]) if o is not None]
    return {"index": index, "id": _text(cell_id, 64), "source_sha256": digest, "execution_count": count,
            "outputs": kept}


def _output(raw, count: int) -> dict | None:
    if not isinstance(raw, dict):
        return None
    kind = raw.get("output_type")
    if kind == "stream" and raw.get("name") in ("stdout", "stderr") and isinstance(raw.get("text"), str):
        return {"output_type": "stream", "name": raw["name"], "text": _text(raw["text"])}
    if kind == "error" and isinstance(raw.get("traceback"), list):
        lines = [_text(line) for line in raw["traceback"][:200] if isinstance(line, str)]
        return {"output_type": "error", "ename": _text(raw.get("ename"), 200),
                "evalue": _text(raw.get("evalue"), 2000), "traceback": lines}
    if kind in ("execute_result", "display_data") and isinstance(raw.get("data"), dict):
        data = {"text/plain": _text(raw["data"].get("text/plain"))}
        png = _png(raw["data"].get("image/png"))
        if png is not None:
            data["image/png"] = png
        output = {"output_type": kind, "metadata": {}, "data": data}
        if kind == "execute_result":
            output["execution_count"] = count
        return output
    return None


def _within_budget(cells: list[dict]) -> None:
    """Cuts the cells' outputs to the caps the sandbox applies as they are made (cell_outputs.py:
    text per stream of a cell, figures and bytes per notebook). Those caps are kept in the process
    the cells run in, where a cell can lift them: here they are applied again, counted as there."""
    left, figures, exhausted = MAX_NOTEBOOK_OUTPUTS, MAX_FIGURES, False
    for cell in cells:
        kept, streamed = [], {"stdout": 0, "stderr": 0}
        for output in cell["outputs"]:
            if exhausted:
                break
            if output["output_type"] == "stream":
                room = MAX_OUTPUT_TEXT + _NOTE_CHARS - streamed[output["name"]]
                output["text"] = output["text"][:max(room, 0)]
                if not output["text"]:
                    continue
                streamed[output["name"]] += len(output["text"])
                size = len(output["text"].encode("utf-8", "surrogatepass"))
            else:
                if "image/png" in output.get("data", {}):
                    if figures > 0:
                        figures -= 1
                    else:
                        del output["data"]["image/png"]
                size = len(json.dumps(output))
            if size > left:
                exhausted = True
                kept.append({"output_type": "stream", "name": "stderr", "text": EXHAUSTED_NOTE})
                break
            left -= size
            kept.append(output)
        cell["outputs"] = kept


def _text(value, limit: int = MAX_OUTPUT_TEXT) -> str:
    text = value if isinstance(value, str) else ""
    return strip_control_chars(text[:limit])


def _png(value) -> str | None:
    """`value` if it is base64 of a PNG no larger than a figure the sandbox would draw."""
    if not isinstance(value, str):
        return None
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    if not data.startswith(_PNG_MAGIC) or len(data) < 24:
        return None
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    # bbox_inches="tight" may make a drawn figure a little larger than its nominal size
    return value if 0 < width * height <= 2 * MAX_FIGURE_PIXELS else None
