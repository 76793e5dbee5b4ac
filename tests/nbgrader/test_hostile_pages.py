"""A student's payload through the real nbgrader workflow (generate_assignment, pregrade, autograde,
generate_feedback, nbgrader 0.9.6 with the course's nbgrader_config.py): the feedback page the TA
and the student open stays inert in headless Chromium. The student answers a choice question, a
free-text question and a cell's displayed output with HTML that would run if it were live."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from browser import PAYLOAD, assert_inert, dump_dom

from autograder.engine.registry import load_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ASSIGNMENT = "lec01_codesign"
CONFIG = load_config(ASSIGNMENT)
STUDENT = "mallory"


def run(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NBGRADER_EXECUTION", "CS349E_TRUSTED_GRADING")}
    done = subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=600,
                          start_new_session=True)
    assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _answer_with_payload(notebook: Path) -> None:
    choice = CONFIG.items_of("choice")[0]
    text = CONFIG.items_of("text")[0]
    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        if cell.get("id") == f"{choice.id}_answer":
            cell.source = f"{choice.id} = {PAYLOAD!r}"
        elif cell.get("id") == f"{text.id}_answer":
            cell.source = PAYLOAD
    setup = next(i for i, c in enumerate(nb.cells) if "from selfcheck import check" in c.source)
    nb.cells.insert(setup + 1, nbformat.v4.new_code_cell(
        f"from IPython.display import HTML, Markdown, display\n"
        f"display(HTML({PAYLOAD!r}))\ndisplay(Markdown({PAYLOAD!r}))\nprint({PAYLOAD!r})"))
    nbformat.write(nb, notebook)


@pytest.fixture(scope="module")
def feedback(tmp_path_factory, released_course) -> Path:
    root = released_course(tmp_path_factory.mktemp("course"))   # generate_assignment ran (conftest.py)
    submitted = root / "submitted" / STUDENT / ASSIGNMENT
    shutil.copytree(root / "release" / ASSIGNMENT, submitted)
    _answer_with_payload(submitted / "handout.ipynb")
    run(root, "-m", "autograder", "pregrade", ASSIGNMENT)
    run(root, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force")
    run(root, "-m", "nbgrader", "generate_feedback", ASSIGNMENT, "--force")
    return root / "feedback" / STUDENT / ASSIGNMENT / "handout.html"


def test_the_payload_reached_the_feedback_page(feedback):
    page = feedback.read_text(encoding="utf-8")
    assert "onerror" in page and "a link" in page        # quoted: the student sees what they wrote


def test_nothing_the_student_wrote_runs_in_nbgraders_feedback_page(feedback, tmp_path):
    assert_inert(dump_dom(feedback, tmp_path / "profile"), must_show="a link")
