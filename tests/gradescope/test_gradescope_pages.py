"""Does a student's payload stay text on the Gradescope page? results.json says how each output
is rendered (`output_format`): the page below renders each format the way Gradescope documents it
(text and ansi as preformatted text, md through a Markdown renderer that passes HTML through, html
as is) and is opened in headless Chromium."""

from __future__ import annotations

import html

import pytest
from browser import PAYLOAD, assert_inert, dump_dom

from autograder.engine.assignment import load_assignment
from autograder.engine.outputs import gradescope_results
from autograder.engine.report_items import grade_report
from autograder.engine.results import SubmissionResult
from autograder.gradescope.results import failure_results, final_results
from autograder.sandbox import NotebookOutcome

INERT_FORMATS = {"text", "ansi"}   # shown as preformatted text by Gradescope


def _student_result(student: str = "mallory") -> SubmissionResult:
    """A submission whose choice answer, printed output and folder name are the payload."""
    assignment = load_assignment("lec01_codesign")
    choice = assignment.config.items_of("choice")[0]
    notebook = NotebookOutcome(status="ok", variables={choice.id: PAYLOAD}, cell_errors=(), output=PAYLOAD,
                               message="")
    items = grade_report([choice], assignment.answer_key, notebook, "handout.ipynb")
    return SubmissionResult(student, 0.0, items[0].max_score, tuple(items), "bubblewrap", 1.0, "lec01_codesign")


def _rendered(text: str, fmt: str) -> str:
    if fmt in INERT_FORMATS:
        return f"<pre>{html.escape(text)}</pre>"
    if fmt == "md":
        from nbconvert.filters import markdown2html   # a Markdown renderer that passes HTML through
        return markdown2html(text)
    return text


def _page(results: dict) -> str:
    parts = [_rendered(results["output"], results.get("output_format", "text"))]
    parts += [_rendered(t["output"], t.get("output_format", results.get("test_output_format", "text")))
              for t in results["tests"]]
    return "<!DOCTYPE html><html><body>" + "".join(f"<section>{p}</section>" for p in parts) + "</body></html>"


def _all_formats(results: dict) -> set[str]:
    return {results.get("output_format", "text")} | {t.get("output_format", "text") for t in results["tests"]}


@pytest.mark.parametrize("where", ["engine", "gradescope"])
def test_results_use_only_formats_that_cannot_run_code(where):
    engine = gradescope_results(_student_result())
    results = engine if where == "engine" else final_results(engine, visibility="visible")
    assert _all_formats(results) <= INERT_FORMATS
    assert _all_formats(failure_results("x", max_score=1.0)) <= INERT_FORMATS


def test_a_students_payload_stays_text_on_the_gradescope_page(tmp_path):
    results = final_results(gradescope_results(_student_result()), visibility="visible")
    page = tmp_path / "gradescope.html"
    page.write_text(_page(results), encoding="utf-8")
    assert_inert(dump_dom(page, tmp_path / "profile"), must_show="onerror")
