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
    """No code of the student's ran in the sandbox (no codesign.py handed in): its word is the
    sandbox's own, and a misread is the grader's fault."""
    from autograder.engine.invoke import StudentCode

    def misread(self, name, variables):
        return NotebookOutcome(status="unreadable", variables={}, cell_errors=(), output="",
                               message="handout.ipynb is JSON but not a notebook")

    monkeypatch.setattr(StudentCode, "run_notebook", misread)
    from autograder.build import write_reference_submission
    write_reference_submission("lec01_codesign", tmp_path / "alice")
    (tmp_path / "alice" / "codesign.py").unlink()
    with pytest.raises(RuntimeError, match="grader reads as a notebook"):
        grader.grade_submission("lec01_codesign", tmp_path / "alice")


# Imported by the worker before the notebook runs: the notebook request goes to a child forked
# from the worker (the warm child, forked before any student code, is thrown away), whose
# notebook reader now says "unreadable" for any notebook.
FORGED_UNREADABLE = """

def _unreadable_from_now_on():
    import gc
    for obj in gc.get_objects():
        try:
            if hasattr(obj, "notebook_child") and hasattr(obj, "warm"):
                if obj.warm is not None:
                    obj.warm.discard()
                obj.warm = None
                nbrunner = obj.nbrunner

                def unreadable(*args, _nb=nbrunner, **kwargs):
                    raise _nb.NotebookUnreadable("handout.ipynb is not valid JSON")
                nbrunner.run_notebook = unreadable
        except Exception:
            pass


_unreadable_from_now_on()
"""


def test_a_module_that_makes_the_sandbox_call_its_notebook_unreadable_is_graded_not_a_grader_error(tmp_path):
    """A student's codesign.py patches the worker's notebook reader at import: the sandbox then said
    'unreadable' of a notebook the grader reads, which was a grader error on every run (`grade`
    exit 1, 'the grader failed on 1 student(s): mallory; re-run to retry them'; pregrade never
    pinned them): a student with weak answers was never graded. It is the student's doing: the
    answers are graded as unreadable, the functions as they are, and the instructor is told."""
    from autograder.build import write_reference_submission

    write_reference_submission("lec01_codesign", tmp_path / "mallory")
    module = tmp_path / "mallory" / "codesign.py"
    module.write_text(module.read_text() + FORGED_UNREADABLE)
    result = grader.grade_submission("lec01_codesign", tmp_path / "mallory")
    functions = [item for item in result.items if item.kind == "function"]
    report = [item for item in result.items if item.kind != "function" and item.status != "manual"]
    assert functions and all(item.score == item.max_score for item in functions)
    assert report and not any(item.score for item in report)
    assert [flag for flag in result.flags if "reported it unreadable after the student's code ran" in flag]


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
