"""Does the feedback for a module that fails to import name the right cause?"""

import pytest

from autograder.engine.invoke import import_failure_text
from autograder.sandbox import CallOutcome


def raised(exc_type, message):
    return CallOutcome(status="raised", exc_type=exc_type, exc_message=message)


def test_a_missing_submission_file_is_reported_as_missing():
    text = import_failure_text(raised("ModuleNotFoundError", "No module named 'codesign'"), "codesign")
    assert "没有找到 `codesign.py`" in text


@pytest.mark.parametrize("missing", ["solutions.lec01_codesign", "solutions", "codesign_helpers"])
def test_a_module_the_submission_imports_is_not_mistaken_for_the_submission(missing):
    """A student importing the reference must not be told their own file is missing."""
    text = import_failure_text(raised("ModuleNotFoundError", f"No module named '{missing}'"), "codesign")
    assert "没有找到" not in text and missing in text


def test_a_syntax_error_says_so():
    text = import_failure_text(raised("SyntaxError", "invalid syntax (codesign.py, line 3)"), "codesign")
    assert "语法错误" in text
