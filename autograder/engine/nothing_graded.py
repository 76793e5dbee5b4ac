"""Why a submission earned no automatic point, in words an instructor acts on.

A gradebook row of zeros looks the same whether the folder was empty, the notebook could not be
read, the skeleton came back unchanged, or the code was simply wrong. The first three are said
(as flags of the result: the summary's `flagged:` lines, grades.csv's flags column, and the row's
items-not-passed cell); being off the course roster is said by the summary (console_view).
"""

from __future__ import annotations

import json

from autograder.engine.locate import StudentFiles
from autograder.engine.registry import GradingConfig
from autograder.engine.results import ItemResult
from autograder.sandbox.nbrunner import beyond_a_notebook

READ_LIMIT = 64 * 1024 * 1024   # a notebook larger than this is not opened here (the grader says why)


def why_nothing(config: GradingConfig, files: StudentFiles, items: list[ItemResult]) -> tuple[str, ...]:
    """The reasons a submission scored 0 automatic points (an unreadable notebook whatever the
    score: none of its answers counted); () when there is nothing to say."""
    notebook = config.notebook
    problem = _unreadable(files, notebook) if notebook in files.present else ""
    unreadable = (f"{notebook} cannot be read as a notebook ({problem}): none of its answers was graded",) if problem else ()
    if any(item.score for item in items if item.status != "manual"):
        return unreadable
    if not files.present:
        return (f"no files: none of {', '.join(config.student_files)} was handed in",)
    reasons = list(unreadable)
    module = f"{config.student_module}.py" if config.student_module else None
    if module in files.present:
        released = config.folder / module
        if released.is_file() and files.read(module) == released.read_bytes():
            reasons.append(f"{module} is the released skeleton, unchanged")
    missing = [name for name in config.student_files if name not in files.present]
    if missing:
        reasons.append(f"not handed in: {', '.join(missing)}")
    return tuple(reasons)


def _unreadable(files: StudentFiles, name: str) -> str:
    try:
        if files.size(name) > READ_LIMIT:
            return ""
        text = files.read(name).decode("utf-8")
        # The sandbox's one bound, before parsing: the depth alone let 18 MB of `{}` through, parsed
        # whole here in the grader's process (450 MB) and then not named though the sandbox refused it.
        beyond = beyond_a_notebook(text)
        if beyond:
            return beyond
        data = json.loads(text)
    except RecursionError:   # a student's JSON nested deeper than the parser recurses
        return "not JSON: nested too deeply"
    except (OSError, ValueError) as err:
        return f"not JSON: {type(err).__name__}"
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return "JSON without a list of cells"
    return ""
