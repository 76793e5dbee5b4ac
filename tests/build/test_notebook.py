"""The released notebook of every assignment: one grade cell per grading.toml item with its points,
stub answer cells, locked prompts, and a source that cannot disagree with grading.toml."""

import ast
import importlib
import json
from dataclasses import replace
from types import SimpleNamespace

import nbformat
import pytest

from autograder.build import NotebookSourceError, generated_files
from authoring.cells import FunctionCheck, Question
from autograder.build.notebook import ANSWER_STUB, TEXT_STUB, answer_cell_id, render_notebook
from autograder.engine.registry import load_config
from autograder.engine.vocabulary import tolerance_phrase
from discovery import assignments
from solutions.lec01_codesign.handout import CELLS

CONFIG = load_config("lec01_codesign")


@pytest.fixture(scope="module", params=assignments())
def source(request):
    config = load_config(request.param)
    cells = importlib.import_module(f"solutions.{request.param}.{config.notebook.removesuffix('.ipynb')}").CELLS
    text = generated_files(request.param)[config.notebook]
    return SimpleNamespace(config=config, cells=cells, text=text, notebook=nbformat.reads(text, as_version=4))


@pytest.fixture(scope="module")
def released(source):
    return source.notebook


def _nbgrader(cell):
    return cell.metadata.get("nbgrader", {})


def test_the_notebook_is_valid_and_its_cell_ids_are_unique(released):
    nbformat.validate(released)
    ids = [cell.id for cell in released.cells]
    assert len(ids) == len(set(ids))
    grade_ids = [_nbgrader(c)["grade_id"] for c in released.cells if _nbgrader(c)]
    assert len(grade_ids) == len(set(grade_ids))


def test_the_first_cell_that_runs_imports_check(released):
    """(After the STUDENT_ID cell of an assignment with variants, which names no check.)"""
    from autograder.build.notebook import STUDENT_ID_CELL_ID

    first_code = next(c for c in released.cells if c.cell_type == "code" and c.get("id") != STUDENT_ID_CELL_ID)
    assert first_code.source.startswith("from selfcheck import check")
    assert _nbgrader(first_code)["locked"]


def test_every_item_has_exactly_one_grade_cell_with_its_points(source, released):
    grade_cells = {_nbgrader(c)["grade_id"]: c for c in released.cells if _nbgrader(c).get("grade")}
    assert set(grade_cells) == {item.id for item in source.config.items}
    for item in source.config.items:
        cell = grade_cells[item.id]
        assert _nbgrader(cell)["points"] == item.points
        if item.kind == "text":  # answered in place, graded by hand
            assert cell.cell_type == "markdown" and _nbgrader(cell)["solution"] and cell.source == TEXT_STUB
        else:
            assert cell.cell_type == "code" and _nbgrader(cell)["locked"]
            assert cell.source == f'check("{item.id}")'


def test_answer_cells_are_stubs_that_leave_the_variable_undefined(source, released):
    cells = {_nbgrader(c).get("grade_id"): c for c in released.cells}
    for item in source.config.items_of("number", "choice"):
        cell = cells[answer_cell_id(item.id)]
        assert _nbgrader(cell)["solution"] and not _nbgrader(cell)["locked"]
        assert cell.source == ANSWER_STUB
        assert ast.parse(cell.source).body == []  # only a comment: running it defines nothing


def test_each_question_states_variable_format_unit_tolerance_and_points(source, released):
    prompts = {_nbgrader(c).get("grade_id"): c.source for c in released.cells}
    for item in source.config.items_of("number", "choice", "text"):
        prompt = prompts[f"{item.id}_prompt"]
        assert f"（{item.points:g} 分）" in prompt
        if item.kind == "number":
            assert f"`{item.id}`" in prompt and (f"单位：{item.unit}" in prompt or not item.unit)
            assert tolerance_phrase(item.rtol, item.atol, item.unit) in prompt
        if item.kind == "choice":
            assert all(f'`"{c}"`' in prompt for c in item.choices)
            assert all(f"- **{c}**" in prompt for c in item.choices)


def test_markdown_and_grade_cells_are_locked(released):
    for cell in released.cells:
        meta = _nbgrader(cell)
        if cell.cell_type == "markdown" and not meta.get("solution"):
            assert meta.get("locked"), cell.source[:60]


def test_the_answered_notebook_differs_only_in_answer_cells(source, released):
    answered = render_notebook(source.cells, source.config, answered=True)
    assert [c.id for c in answered.cells] == [c.id for c in released.cells]
    changed = {c.id for c, r in zip(answered.cells, released.cells) if c.source != r.source}
    expected = {answer_cell_id(i.id) for i in source.config.items_of("number", "choice")} | {
        i.id for i in source.config.items_of("text")}
    assert changed == expected


def test_the_notebook_json_is_stable(source):
    text = source.text
    data = json.loads(text)
    assert text == json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("mutate, message", [
    (lambda cells: [c for c in cells if not (isinstance(c, FunctionCheck) and c.function == "quantize")],
     "missing: \\['quantize'\\]"),
    (lambda cells: cells + [FunctionCheck("quantize")], "repeated: \\['quantize'\\]"),
    (lambda cells: cells + [FunctionCheck("q99_unknown")], "does not list"),
    (lambda cells: [FunctionCheck("q01_compute_headline") if isinstance(c, Question) and c.id == "q01_compute_headline"
                    else c for c in cells], "is a number item"),
    (lambda cells: [replace(c, answer="answer = 7") if isinstance(c, Question) and c.id == "q01_compute_headline"
                    else c for c in cells], "does not assign the variable q01_compute_headline"),
])
def test_a_source_that_disagrees_with_grading_toml_fails_the_build(mutate, message):
    with pytest.raises(NotebookSourceError, match=message):
        render_notebook(tuple(mutate(list(CELLS))), CONFIG, answered=False)


@pytest.mark.parametrize("answered", [False, True])
def test_nbgrader_accepts_the_cell_metadata(source, answered):
    validator = pytest.importorskip("nbgrader.nbgraderformat").MetadataValidator()
    validator.validate_nb(render_notebook(source.cells, source.config, answered=answered))
