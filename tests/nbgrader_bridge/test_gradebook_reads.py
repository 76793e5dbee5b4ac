"""Autograde's gradebook work per student does not grow with the notebook's cells, and writes
exactly what nbgrader's own preprocessors write (a real gradebook, built from the release
notebook as generate_assignment builds it)."""

import copy
import os
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path

import nbformat
import pytest
from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.preprocessors import ComputeChecksums, OverwriteCells, SaveAutoGrades, SaveCells
from sqlalchemy import event
from sqlalchemy.engine import Engine

from autograder.engine.registry import load_config
from autograder.engine.results import ItemResult, SubmissionResult
from autograder.engine.vocabulary import AUTOMATIC_KINDS
from autograder.nbgrader_bridge.autograde_pipeline import COURSE, EXECUTED, RESOURCE, SaveTrustedGrades
from autograder.nbgrader_bridge.overwrite_cells import OverwriteCellsReadOnce

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT, NOTEBOOK, STUDENT = "lec01_codesign", "handout", "ada"
CONFIG = load_config(ASSIGNMENT)
SOURCE = nbformat.read(ROOT / "assignments" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
MOST_QUERIES = 8   # a handful per notebook, whatever its number of cells


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _resources(db_url: str) -> dict:
    return {"nbgrader": {"notebook": NOTEBOOK, "assignment": ASSIGNMENT, "student": STUDENT, "db_url": db_url}}


@pytest.fixture(scope="module")
def gradebook_file(tmp_path_factory) -> Path:
    """The release's cells saved as generate_assignment saves them, and one empty submission."""
    path = tmp_path_factory.mktemp("gradebook") / "gradebook.db"
    bin_dir = os.path.dirname(sys.executable)   # nbgrader runs `alembic` to create a gradebook
    old_path = os.environ.get("PATH", "")
    os.environ["PATH"] = os.pathsep.join([bin_dir, old_path])
    try:
        with Gradebook(f"sqlite:///{path}") as gb:
            gb.add_assignment(ASSIGNMENT)
        nb, _ = ComputeChecksums().preprocess(copy.deepcopy(SOURCE), {})
        SaveCells().preprocess(nb, _resources(f"sqlite:///{path}"))
        with Gradebook(f"sqlite:///{path}") as gb:
            gb.add_student(STUDENT)
            gb.add_submission(ASSIGNMENT, STUDENT)
    finally:
        os.environ["PATH"] = old_path
    return path


@pytest.fixture
def db_url(gradebook_file, tmp_path) -> str:
    """A fresh copy of the gradebook for one test."""
    shutil.copy(gradebook_file, tmp_path / "gradebook.db")
    return f"sqlite:///{tmp_path / 'gradebook.db'}"


@contextmanager
def counted_queries():
    statements = []

    def record(conn, cursor, statement, *args):
        if not statement.startswith("PRAGMA") and "sqlite_master" not in statement:   # opening a Gradebook
            statements.append(statement)

    event.listen(Engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(Engine, "before_cursor_execute", record)


def tampered_submission():
    """The release as a student may hand it in: a locked cell and a grade cell rewritten, points
    and a cell type changed, a grade cell deleted, one text answer written."""
    nb = copy.deepcopy(SOURCE)
    graded = [i for i, c in enumerate(nb.cells) if _meta(c).get("grade") and not _meta(c).get("solution")]
    texts = [i for i, c in enumerate(nb.cells) if _meta(c).get("grade") and _meta(c).get("solution")]
    locked = [i for i, c in enumerate(nb.cells) if _meta(c).get("locked") and not _meta(c).get("grade")]
    nb.cells[locked[0]].source = "我改了说明"
    nb.cells[graded[1]].source = "print('满分')"
    nb.cells[graded[2]].metadata["nbgrader"]["points"] = 100.0
    nb.cells[graded[3]].cell_type = "markdown"
    del nb.cells[graded[3]]["outputs"], nb.cells[graded[3]]["execution_count"]
    nb.cells[texts[0]].source = "因为带宽是瓶颈。"
    del nb.cells[graded[0]]
    return nb


def test_overwrite_cells_reads_the_release_once_and_restores_what_nbgrader_restores(db_url):
    theirs, ours = OverwriteCells(), OverwriteCellsReadOnce()
    with counted_queries() as nbgrader_queries:
        expected, _ = theirs.preprocess(tampered_submission(), _resources(db_url))
    with counted_queries() as queries:
        restored, _ = ours.preprocess(tampered_submission(), _resources(db_url))
    assert restored == expected
    assert len(nbgrader_queries) > 100   # one or two per cell with nbgrader metadata
    assert len(queries) <= MOST_QUERIES


def _pinned_result() -> SubmissionResult:
    """Every item of the assignment with a score of its own (some full, some partial, some zero)."""
    items = tuple(ItemResult(item.id, item.kind, round(item.points * ((i % 3) / 2), 2), item.points,
                             ("failed", "partial", "passed")[i % 3] if item.kind in AUTOMATIC_KINDS else "manual", "说明", title=item.title)
                  for i, item in enumerate(CONFIG.items))
    automatic = sum(i.score for i in items if i.kind in AUTOMATIC_KINDS)
    return SubmissionResult(STUDENT, automatic, CONFIG.total_points, items, "bubblewrap", 1.0, ASSIGNMENT)


def _rows(db_url: str) -> tuple[dict, dict]:
    with Gradebook(db_url) as gb:
        submission = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, STUDENT)
        grades = {g.name: (g.auto_score, g.manual_score, g.needs_manual_grade) for g in submission.grades}
        comments = {c.name: c.auto_comment for c in submission.comments}
    return grades, comments


def test_save_trusted_grades_writes_nbgraders_grades_and_the_pinned_scores_in_few_queries(db_url, tmp_path):
    submitted, _ = OverwriteCells().preprocess(tampered_submission(), _resources(db_url))
    theirs_url = f"sqlite:///{tmp_path / 'nbgraders.db'}"
    shutil.copy(tmp_path / "gradebook.db", tmp_path / "nbgraders.db")
    with counted_queries() as nbgrader_queries:
        SaveAutoGrades().preprocess(copy.deepcopy(submitted), _resources(theirs_url))
    result = _pinned_result()
    resources = {**_resources(db_url), RESOURCE: result, EXECUTED: {"cells": []}, COURSE: None}
    with counted_queries() as queries:
        SaveTrustedGrades().preprocess(copy.deepcopy(submitted), resources)

    expected_grades, expected_comments = _rows(theirs_url)
    grades, comments = _rows(db_url)
    automatic = {item.id for item in CONFIG.items_of(*AUTOMATIC_KINDS)}
    assert comments == expected_comments and "No response." in comments.values() and None in comments.values()
    assert {k: v for k, v in grades.items() if k not in automatic} == \
        {k: v for k, v in expected_grades.items() if k not in automatic}
    with Gradebook(db_url) as gb:
        max_scores = {g.name: g.max_score for g in gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, STUDENT).grades}
    assert {k: v for k, v in grades.items() if k in automatic} == \
        {k: (min(result.item(k).score, max_scores[k]), None, False) for k in automatic}
    deleted = [c for c in SOURCE.cells if utils.is_grade(c) and _meta(c)["grade_id"] not in
               {_meta(s).get("grade_id") for s in submitted.cells}]
    assert len(nbgrader_queries) > 80   # a query and a commit per grade or answer cell
    assert len(queries) <= MOST_QUERIES
    assert not deleted or all(grades[_meta(c)["grade_id"]][0] is not None for c in deleted)


@pytest.mark.parametrize("kind", ["grade", "solution", "locked"])
def test_a_cell_pasted_from_another_notebook_costs_that_cell_not_the_students_autograde(db_url, kind):
    """A student pastes a cell from another assignment's notebook (or writes its metadata by hand):
    valid nbgrader metadata with a grade_id this release does not have. nbgrader's OverwriteCells
    drops only its grade_id, and CheckCellMetadata then refused the whole notebook, so the
    student was never autograded (the export said 0 or nothing while the trusted grader had a
    score). The pasted cell becomes an ordinary cell; every release cell keeps its metadata."""
    from nbgrader.preprocessors import CheckCellMetadata

    from autograder.nbgrader_bridge.sanitize_metadata import DropInvalidCellMetadata

    meta = {"grade": kind == "grade", "solution": kind == "solution", "locked": kind != "solution",
            "grade_id": "q99_last_terms", "schema_version": 3, "task": False}
    if kind == "grade":
        meta["points"] = 100.0
    pasted = nbformat.v4.new_code_cell("answer = 42", metadata={"nbgrader": meta})
    nb = copy.deepcopy(SOURCE)
    nb.cells.insert(3, pasted)
    resources = _resources(db_url)
    for step in (DropInvalidCellMetadata(), OverwriteCellsReadOnce(), CheckCellMetadata()):
        nb, resources = step.preprocess(nb, resources)
    assert "nbgrader" not in nb.cells[3].metadata and nb.cells[3].source == "answer = 42"
    release = [(c.source, _meta(c).get("grade_id")) for c in SOURCE.cells]
    assert [(c.source, _meta(c).get("grade_id")) for i, c in enumerate(nb.cells) if i != 3] == release


def _forge_grade_on_an_answer_cell(nb):
    """A solution-only answer cell of the release, now claiming to be a grade cell worth 1 point."""
    index = next(i for i, c in enumerate(nb.cells) if _meta(c).get("solution") and not _meta(c).get("grade"))
    nb.cells[index].metadata["nbgrader"].update(grade=True, points=1.0)
    return index


def _forge_code_on_a_text_answer(nb):
    """A free-text (markdown, grade and solution) cell of the release, now a code cell that is no solution."""
    index = next(i for i, c in enumerate(nb.cells) if _meta(c).get("grade") and _meta(c).get("solution")
                 and c.cell_type == "markdown")
    cell = nb.cells[index]
    cell.cell_type, cell.outputs, cell.execution_count = "code", [], None
    cell.metadata["nbgrader"].update(solution=False)
    return index


@pytest.mark.parametrize("forge", [_forge_grade_on_an_answer_cell, _forge_code_on_a_text_answer])
def test_forged_flags_on_a_release_cell_cost_nothing_and_are_restored(db_url, forge):
    """A student rewrites the flags (grade, solution, task) of a cell the release has, keeping its
    valid schema: nbgrader restores type, locked, points and checksum but not the flags, so its own
    next lookup (MissingEntry: no such grade cell) or CheckCellMetadata (a markdown grade cell that
    is no solution) ended that student's autograde every time. The release's flags come back; the
    student's answer stays."""
    from nbgrader.preprocessors import CheckCellMetadata

    from autograder.nbgrader_bridge.sanitize_metadata import DropInvalidCellMetadata

    nb = copy.deepcopy(SOURCE)
    index = forge(nb)
    nb.cells[index].source = "学生的答案"
    resources = _resources(db_url)
    for step in (DropInvalidCellMetadata(), OverwriteCellsReadOnce(), CheckCellMetadata()):
        nb, resources = step.preprocess(nb, resources)
    release = SOURCE.cells[index]
    flags = ("grade", "solution", "locked", "task", "grade_id")
    assert {f: _meta(nb.cells[index]).get(f, False) for f in flags} == {f: _meta(release).get(f, False) for f in flags}
    assert nb.cells[index].cell_type == release.cell_type and nb.cells[index].source == "学生的答案"
    if _meta(release).get("grade"):
        assert _meta(nb.cells[index])["points"] == _meta(release)["points"]
    else:
        assert "points" not in _meta(nb.cells[index]) or not _meta(nb.cells[index]).get("grade")


ESCAPES = "\x1b]52;c;aGk=\x07\x1b[2J\x1b[H"   # OSC 52 writes the instructor's clipboard; then the screen is cleared


def test_what_a_student_wrote_into_cells_reaches_autogrades_log_without_terminal_escapes(db_url):
    """nbgrader's sanitising logs what it restores and refuses: a locked cell rewritten, a grade_id
    the release does not have, a duplicated grade_id. A terminal escape sequence the student writes
    into that cell's source or that grade_id must not reach the instructor's terminal through
    `nbgrader autograde`'s log: the locked cell is named by its checksum, the grade_id quoted
    escaped (the schema refuses it before any lookup)."""
    import logging

    from nbgrader.preprocessors import CheckCellMetadata, ClearOutput, DeduplicateIds, OverwriteKernelspec

    from autograder.nbgrader_bridge.sanitize_metadata import DropInvalidCellMetadata

    nb = copy.deepcopy(SOURCE)
    locked = next(c for c in nb.cells if _meta(c).get("locked") and not _meta(c).get("grade"))
    locked.source = ESCAPES + "说明"
    answer = next(c for c in nb.cells if _meta(c).get("solution") and not _meta(c).get("grade"))
    twin = copy.deepcopy(answer)
    twin.metadata["nbgrader"]["grade_id"] = answer.metadata["nbgrader"]["grade_id"] + ESCAPES
    nb.cells.insert(1, twin)
    nb.cells.insert(1, copy.deepcopy(twin))
    records: list[logging.LogRecord] = []
    capture = logging.Handler()
    capture.emit = records.append
    resources = _resources(db_url)
    steps = (DropInvalidCellMetadata(), ClearOutput(), DeduplicateIds(), OverwriteKernelspec(), OverwriteCellsReadOnce(),
             CheckCellMetadata())
    for step in steps:
        step.log.addHandler(capture)
    try:
        for step in steps:
            nb, resources = step.preprocess(nb, resources)
    finally:
        for step in steps:
            step.log.removeHandler(capture)
    messages = [logging.Formatter().format(record) for record in records]
    assert len(messages) >= 2, messages      # the grade_id refused and the locked cell restored were both logged
    assert not [m for m in messages if "\x1b" in m or "\x07" in m], messages
