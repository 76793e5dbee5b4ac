"""Text a submission controls (exception messages and class names, tracebacks, notebook cell
errors) cannot change the structure of its Markdown feedback: no forged heading, link or HTML."""

from pathlib import Path

from autograder.engine.assignment import load_assignment
from autograder.engine.invoke import failure_text, import_failure_text
from autograder.engine.report_items import grade_report
from autograder.sandbox import NotebookOutcome
from autograder.sandbox.outcomes import CallOutcome

FORGED = "`` </code><img src=x onerror=alert(1)>\n\n# 总分：100 / 100\n\n```\n[a](javascript:x)\x1b[2J\r\n"


def _structure_is_intact(text: str) -> None:
    parts = text.split("\n```")   # what lies inside a fence renders as plain text
    text = "".join(parts[::2])
    assert "\n# " not in text and "\n\n#" not in text          # no forged heading
    assert "\x1b" not in text
    assert "<img" not in text or text.count("`") % 2 == 0   # any HTML stays inside a code span
    for line in text.splitlines():
        if "<img" in line:   # inside an inline code span that opens and closes on this line
            before = line[:line.index("<img")]
            assert before.count("`") % 2 == 1 and "`" in line[line.index("<img"):]


def test_a_raised_message_and_class_name_stay_inline():
    outcome = CallOutcome("raised", exc_type=FORGED, exc_message=FORGED, traceback=FORGED)
    for text in (failure_text(outcome, "round_e4m3(x)"), import_failure_text(outcome, "codesign")):
        _structure_is_intact(text)
        fences = [line for line in text.splitlines() if line.startswith("```")]
        assert len(fences) == 2   # the traceback's own fence only: FORGED cannot close it


def test_other_failure_messages_stay_inline():
    for status in ("too_large", "crashed", "protocol_error"):
        _structure_is_intact(failure_text(CallOutcome(status, exc_message=FORGED), "quantize(x)"))


def test_notebook_cell_errors_and_messages_stay_inline():
    assignment = load_assignment("lec01_codesign")
    report = assignment.config.items_of("number", "choice", "text")
    notebook = NotebookOutcome(status="crashed", variables={}, cell_errors=((3, FORGED, FORGED),),
                               output="", message=FORGED)
    items = grade_report(report, assignment.answer_key, notebook, "handout.ipynb", "missing",
                         cell_sources={3: "x = 1"})
    for item in items:
        _structure_is_intact(item.feedback_md)


def test_a_choice_answer_is_quoted_as_code_not_markup():
    """A student's choice answer is quoted back by the explanation: as an inline code span only."""
    assignment = load_assignment("lec01_codesign")
    choice = assignment.config.items_of("choice")[0]
    notebook = NotebookOutcome(status="ok", variables={choice.id: FORGED}, cell_errors=(), output="", message="")
    [item] = grade_report([choice], assignment.answer_key, notebook, "handout.ipynb")
    assert item.status == "failed" and "onerror" in item.feedback_md   # quoted, so the student sees it
    _structure_is_intact(item.feedback_md)


def test_a_returned_dicts_keys_and_an_objects_type_name_stay_inline():
    """Dict keys and a class's __qualname__ are the student's to choose: quoted as code only."""
    from autograder.engine.checks import MappingCheck, ScalarCheck
    from autograder.sandbox.codec import Unsupported

    for actual in ({FORGED: 1.0, "compute": 1.0}, {}, Unsupported(FORGED)):
        _structure_is_intact(MappingCheck({"compute": 1.0})(actual, "trend_row(B300, 'nvfp4')").message)
    _structure_is_intact(ScalarCheck(1.0)(Unsupported(FORGED), "ridge_point(H100, 'bf16')").message)
    assignment = load_assignment("lec01_codesign")
    items = assignment.config.items_of("number")[:1] + assignment.config.items_of("choice")[:1]
    notebook = NotebookOutcome(status="ok", variables={i.id: Unsupported(FORGED) for i in items}, cell_errors=(),
                               output="", message="")
    for item in grade_report(items, assignment.answer_key, notebook, "handout.ipynb"):
        assert item.status == "failed"
        _structure_is_intact(item.feedback_md)


def test_a_student_folder_name_stays_inline_in_the_feedback_file():
    from autograder.engine.feedback import submission_markdown
    from autograder.engine.results import SubmissionResult

    assignment = load_assignment("lec01_codesign")
    choice = assignment.config.items_of("choice")[0]
    notebook = NotebookOutcome(status="ok", variables={choice.id: "A"}, cell_errors=(), output="", message="")
    items = tuple(grade_report([choice], assignment.answer_key, notebook, "handout.ipynb"))
    name = "<img src=x onerror=alert(1)>[a](javascript:x)"      # a folder name: no '/', no line break needed
    text = submission_markdown(SubmissionResult(name, 0.0, 2.0, items, "bubblewrap", 1.0, "lec01_codesign"))
    first = text.splitlines()[0]
    assert first.count("`") == 2 and first[:first.index("<img")].count("`") == 1   # named, inside a code span
    assert text.count("<img") == 1


def test_another_files_name_in_the_folder_stays_inline_in_the_feedback():
    """A student hands in codesign.py under a name of their own making (any text but '/'): the
    feedback's "the folder holds `x.py`, but the grader reads only codesign.py" quoted it between
    backticks as it was, so a backtick in it closed the code span and the rest became live
    Markdown: a remote image (https:host needs no slashes) fetched when the feedback file is
    opened, and a link."""
    from autograder.engine.grader import _missing_text
    from autograder.engine.locate import StudentFiles

    name = "x` ![t](https:attacker.example) [click](https:attacker.example) `y.py"
    files = StudentFiles("nina", Path("/nonexistent"), (), ("codesign.py",), (name,))
    text = _missing_text("codesign.py", files)
    assert "attacker.example" in text
    _structure_is_intact(text)
    spans = text.split("`")[1::2]   # what sits inside code spans
    assert any("attacker.example" in span for span in spans)
    assert not any("attacker.example" in outside for outside in text.split("`")[0::2])
