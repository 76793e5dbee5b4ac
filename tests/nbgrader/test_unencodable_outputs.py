"""Text that no UTF-8 file can hold (a lone surrogate in an exception's message, or in a cell as
the notebook file spells it) through the real nbgrader workflow (pregrade, autograde,
generate_feedback with the course's nbgrader_config.py): the student is autograded and gets
feedback like any other, the text shown with escapes, never an error that leaves them without a
grade (autograde dropped their notebook: UnicodeEncodeError)."""

from __future__ import annotations

import json
import shutil

import nbformat
import pytest
from test_hostile_pages import ASSIGNMENT, run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

STUDENT = "mallory"


def test_a_lone_surrogate_in_a_cells_output_is_autograded_and_shown(tmp_path, released_course, reference_submission):
    root = released_course(tmp_path / "course")
    submitted = root / "submitted" / STUDENT / ASSIGNMENT
    shutil.copytree(reference_submission, submitted)
    notebook = submitted / "handout.ipynb"
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell('raise ValueError("bad \\ud800 text")'))
    nb.cells.insert(2, nbformat.v4.new_markdown_cell("note \ud800 here"))   # a JSON escape in the file itself
    notebook.write_text(json.dumps(nb), "utf-8")
    run(root, "-m", "autograder", "pregrade", ASSIGNMENT)
    run(root, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force")
    autograded = root / "autograded" / STUDENT / ASSIGNMENT / "handout.ipynb"
    text = autograded.read_text("utf-8")
    assert "bad \\\\ud800 text" in text and "note \\\\ud800 here" in text   # shown as escapes
    run(root, "-m", "nbgrader", "generate_feedback", ASSIGNMENT, "--force")
    assert (root / "feedback" / STUDENT / ASSIGNMENT / "handout.html").is_file()
