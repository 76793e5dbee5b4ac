"""A student's payload through the real nbgrader workflow (generate_assignment, pregrade, autograde,
generate_feedback, nbgrader 0.9.6 with the course's nbgrader_config.py): the feedback page the TA
and the student open stays inert in headless Chromium. The student answers a choice question, a
free-text question and a cell's displayed output with HTML that would run if it were live."""

from __future__ import annotations

import os
import re
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


def test_a_notebook_of_many_cells_reaches_the_pages_bounded(tmp_path, released_course, reference_submission):
    """Pages cost about 0.5 ms of CPU a cell, formgrader's view more (it reads, copies and checks the
    notebook before rendering it), and the trusted grader reads 20 MB of notebook: 100,000 one-line
    Markdown cells cost autograde 34 s, generate_feedback 90 s and 1.7 GB, and formgrader's one thread
    tens of seconds each time a TA opened the student. The autograded notebook, which both pages read,
    keeps every cell of the release and the student's own up to 1,000 cells in all, with a note; the
    submitted notebook keeps them all."""
    from autograder.nbgrader_bridge.page_cells import MOST_PAGE_CELLS

    root = released_course(tmp_path / "course")
    submitted = root / "submitted" / STUDENT / ASSIGNMENT
    shutil.copytree(root / "release" / ASSIGNMENT, submitted)
    for name in ("codesign.py", "handout.ipynb"):
        shutil.copyfile(reference_submission / name, submitted / name)
    nb = nbformat.read(submitted / "handout.ipynb", as_version=4)
    release_cells = len(nb.cells)
    graded = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    nb.cells[3:3] = [nbformat.v4.new_markdown_cell(f"my note {index}") for index in range(20_000)]
    nbformat.write(nb, submitted / "handout.ipynb")
    run(root, "-m", "autograder", "pregrade", ASSIGNMENT)
    run(root, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force")
    autograded = nbformat.read(root / "autograded" / STUDENT / ASSIGNMENT / "handout.ipynb", as_version=4)
    assert len(autograded.cells) <= MOST_PAGE_CELLS + 1
    assert [c.metadata["nbgrader"]["grade_id"] for c in autograded.cells
            if c.metadata.get("nbgrader", {}).get("grade")] == graded           # every grade cell, in order
    own = [c.source for c in autograded.cells if c.source.startswith("my note")]
    assert own == [f"my note {index}" for index in range(len(own))] and len(own) >= MOST_PAGE_CELLS - release_cells
    notes = [int(m[1]) for c in autograded.cells if (m := re.search(r"另有 (\d+) 个你自己加的单元格", c.source))]
    assert len(notes) == 1 and notes[0] >= 20_000 - len(own)      # one note says how many are left out
    assert len(nbformat.read(submitted / "handout.ipynb", as_version=4).cells) == release_cells + 20_000
