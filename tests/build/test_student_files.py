"""The generic student files come from templates filled with what grading.toml declares."""

import re

import pytest

from autograder.build import student_files
from autograder.build.student_files import TemplateError, generic_student_files, render_template
from autograder.engine.registry import load_config
from autograder.engine.vocabulary import tolerance_phrase
from discovery import assignments


def test_a_placeholder_the_build_does_not_know_fails_the_build(tmp_path, monkeypatch):
    (tmp_path / "x.tmpl").write_text("a = {{STUDENT_MODULE}}\nb = {{TYPO}}\n")
    monkeypatch.setattr(student_files, "TEMPLATES", tmp_path)
    with pytest.raises(TemplateError, match="TYPO"):
        render_template("x.tmpl", {"STUDENT_MODULE": "m"})


@pytest.mark.parametrize("name", assignments())
def test_every_placeholder_is_filled_and_the_files_are_python(name):
    for rel, text in generic_student_files(load_config(name)).items():
        assert not re.search(r"\{\{[A-Z_]+\}\}", text), rel
        compile(text, rel, "exec")


@pytest.mark.parametrize("rtol, atol, unit, phrase", [
    (0.02, 0.0, "×", "与参考答案的相对误差不超过 2%"),
    (0.0, 0.5, "GB", "绝对误差不超过 0.5 GB"),
    (0.01, 1.0, "", "与参考答案的相对误差不超过 1%，或绝对误差不超过 1"),
    (1e-9, 0.0, "", "与参考答案的相对误差不超过 1e-09（相对值）"),
    (0.0, 0.0, "", "要求完全相等"),
])
def test_one_tolerance_phrase_for_notebook_checks_and_feedback(rtol, atol, unit, phrase):
    assert tolerance_phrase(rtol, atol, unit) == phrase
