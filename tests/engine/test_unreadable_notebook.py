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
