"""A notebook the grader can read but the sandbox reports unreadable is a grader fault, not a 0."""

import json

import pytest

from autograder.engine import grader
from autograder.sandbox import NotebookOutcome


def test_the_grader_reads_notebooks_by_the_sandbox_rule(tmp_path):
    good, bad = tmp_path / "good.ipynb", tmp_path / "bad.ipynb"
    good.write_text(json.dumps({"cells": [], "nbformat": 4, "metadata": {}}))
    bad.write_text(json.dumps({"metadata": {}}))
    assert grader._code_cells(good) == {} and grader._code_cells(bad) is None


def test_a_sandbox_that_misreads_a_good_notebook_raises_instead_of_scoring(monkeypatch, tmp_path):
    from autograder.engine.invoke import StudentCode

    def misread(self, name, variables):
        return NotebookOutcome(status="unreadable", variables={}, cell_errors=(), output="",
                               message="handout.ipynb is JSON but not a notebook")

    monkeypatch.setattr(StudentCode, "run_notebook", misread)
    from autograder.build import write_reference_submission
    write_reference_submission("lec01_codesign", tmp_path / "alice")
    with pytest.raises(RuntimeError, match="grader reads as a notebook"):
        grader.grade_submission("lec01_codesign", tmp_path / "alice")


def test_a_notebook_nested_past_the_json_parsers_recursion_is_graded_as_unreadable(tmp_path):
    """A handout.ipynb of 200,000 nested JSON arrays: before, the trusted grader itself stopped
    with RecursionError (while saying why nothing was graded); now it is an unreadable notebook,
    its items 0, the module still graded, and the flag says why."""
    from autograder.build import write_reference_submission

    write_reference_submission("lec01_codesign", tmp_path / "mallory")
    depth = 200_000
    (tmp_path / "mallory" / "handout.ipynb").write_text('{"cells": ' + "[" * depth + "]" * depth + "}")
    result = grader.grade_submission("lec01_codesign", tmp_path / "mallory")
    functions = [item for item in result.items if item.kind == "function"]
    assert functions and all(item.score == item.max_score for item in functions)
    assert [flag for flag in result.flags if "handout.ipynb cannot be read as a notebook" in flag]
