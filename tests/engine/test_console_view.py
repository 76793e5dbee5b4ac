"""Is the gradebook summary readable cold: labels that explain themselves, and every item not
passed shown in full (wrapped, never cut with "…") at 100 and 160 columns and when piped?"""

from __future__ import annotations

import io
import re
from dataclasses import replace

import pytest

from autograder.engine import load_config
from autograder.engine.batch import BatchReport
from autograder.views import console_view
from autograder.views.console_view import print_summary
from autograder.engine.gradebook_rows import GradebookRow
from autograder.engine.lateness import Lateness
from autograder.engine.results import ItemResult, SubmissionResult

CONFIG = load_config("lec01_codesign")


def result(student: str, failing: set[str], late: Lateness | None = None) -> SubmissionResult:
    items = []
    for item in CONFIG.items:
        if item.kind == "text":
            items.append(ItemResult(item.id, item.kind, 0.0, item.points, "manual", "", "", item.title))
        elif item.id in failing:
            items.append(ItemResult(item.id, item.kind, 0.0, item.points, "failed", "", "", item.title))
        else:
            items.append(ItemResult(item.id, item.kind, item.points, item.points, "passed", "", "", item.title))
    return SubmissionResult(student, sum(i.score for i in items), CONFIG.total_points, tuple(items),
                            "bubblewrap", 1.0, CONFIG.assignment, "f" * 64, late=late)


AUTO = [i.id for i in CONFIG.items if i.kind != "text"]
MANUAL_POINTS = sum(i.points for i in CONFIG.items if i.kind == "text")
LATE = Lateness("2030-02-02T10:00:00Z", "2030-01-31T15:59:00Z", 151260.0, 2, 20.0, 12.3, "timestamp.txt")


def report(*results: SubmissionResult) -> BatchReport:
    return BatchReport(CONFIG.assignment, tuple(GradebookRow.of(r) for r in results), tuple(r.student for r in results),
                       (), (), "bubblewrap", 1.0)


def render(table_report: BatchReport, width: int) -> str:
    """What `grade` prints at the end on a terminal `width` columns wide."""
    out = io.StringIO()
    print_summary(table_report, "OUT", stream=out, width=width)
    return out.getvalue()


def squeeze(text: str) -> str:
    """The table's text without borders and line breaks (a wrapped cell reads as one)."""
    return re.sub(r"[\s│┃┆|]+", "", text)


@pytest.mark.parametrize("width", [80, 100, 160])
@pytest.mark.parametrize("late", [None, LATE])
def test_every_item_not_passed_is_shown_whole_and_nothing_is_cut(width, late):
    many = set(AUTO[:-1])      # all but one: not the "all items" shorthand
    text = render(report(result("amy", set()), result("bob", many, late)), width)
    assert "…" not in text
    assert all(len(line) <= width for line in text.splitlines())
    table = [line for line in text.splitlines() if line.startswith(("┏", "│", "└"))]
    assert all(line.endswith(("┓", "│", "┘")) for line in table), "the table is wider than the terminal"
    flat = squeeze(text)
    for item_id in many:
        assert f"{item_id}(0/" in flat, item_id


def test_labels_explain_automatic_and_hand_graded_points():
    text = render(report(result("amy", set())), 160)
    assert "automatic" in text and "hand-graded" in text and f"{MANUAL_POINTS:g} pending" in text
    assert "manual" not in text and " pts" not in text
    assert squeeze("hand-graded: free-text points a TA still grades in formgrader") in squeeze(text)


def test_nothing_passed_is_said_in_words():
    text = render(report(result("carl", set(AUTO))), 100)
    assert f"all {len(AUTO)} items: 0 points" in text


def test_the_late_column_appears_only_when_lateness_is_known():
    assert "late penalty" not in render(report(result("amy", set())), 160)
    on_time = replace(LATE, seconds_late=0.0, days_charged=0, percent=0.0, penalty=0.0)
    text = render(report(result("amy", set(), on_time), result("bob", {"quantize"}, LATE), result("cy", set())), 160)
    assert "late penalty" in text and "on time" in text and "-12.3 (2d 20%)" in text and "?" in text


def test_a_narrow_terminal_lists_the_items_under_the_table_and_a_wide_one_in_it():
    students = report(result("amy", set()), result("bob", {"quantize"}, LATE))
    assert "bob: quantize(0/20)" in render(students, 100)
    wide = render(students, 160)
    assert "bob: quantize" not in wide and "quantize(0/20)" in wide


def test_piped_output_is_plain_and_wide_enough():
    out = io.StringIO()
    print_summary(report(result("amy", set()), result("bob", set(AUTO[:10]))), "OUT", stream=out)
    text = out.getvalue()
    assert "\x1b[" not in text and "…" not in text and "outputs in OUT/" in text


MARKUP_NAME = "[link=https://example.org/x][bold red]eve[/bold red][/link]"


@pytest.mark.parametrize("tty", [False, True])
def test_a_student_name_is_printed_as_given_never_as_rich_markup(tty):
    """A folder name is the student's to choose: rich must print its brackets, not follow them."""
    from autograder.views.console_view import BatchProgress

    class Stream(io.StringIO):
        def isatty(self):
            return tty

    out = Stream()
    print_summary(report(result(MARKUP_NAME, set())), "out", stream=out, width=160)
    progress = Stream()
    with BatchProgress(progress) as shown:
        shown.on_start(2, 0)
        shown.on_result(MARKUP_NAME, result(MARKUP_NAME, set()), None)
        shown.on_result(MARKUP_NAME, None, f"worker failed: {MARKUP_NAME}")
    for text in (out.getvalue(), progress.getvalue()):
        assert "\x1b]8;" not in text                                    # no terminal hyperlink
        assert MARKUP_NAME in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text), text


def test_piped_progress_lines_are_whole_lines():
    """Not a terminal (a log file, CI): one line per student, never wrapped at 80 columns."""
    from autograder.views.console_view import BatchProgress

    out = io.StringIO()
    with BatchProgress(stream=out) as progress:
        progress.on_start(2, 0)
        progress.on_result("a_student_with_a_rather_long_folder_name", result("a_student_with_a_rather_long_folder_name", set()), None)
        progress.on_result("bob", None, "Traceback: something in the grader broke\nsecond line")
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("graded a_student_with_a_rather_long_folder_name: ") and lines[0].endswith(" s]")
    assert len(lines[0]) > 80
    assert lines[1].startswith("grader error for bob") and lines[2] == "Traceback: something in the grader broke"


@pytest.mark.parametrize("width", [60, 160])
def test_a_class_larger_than_one_table_is_printed_part_by_part_with_every_student(monkeypatch, width):
    """Rendering holds every cell of a table: a large class is printed in parts of TABLE_ROWS
    students, each student once, the legend once, at the end."""
    monkeypatch.setattr(console_view, "TABLE_ROWS", 2)
    students = [f"s{i}" for i in range(5)]
    text = render(report(*(result(s, {AUTO[0]} if s == "s3" else set()) for s in students)), width)
    flat = squeeze(text)
    assert [flat.count(squeeze(f"({len(students)} students; {a}–{b})")) for a, b in ((1, 2), (3, 4), (5, 5))] == [1, 1, 1]
    assert all(re.search(rf"[│ ]{s}[│ :]", text) for s in students)
    assert f"{AUTO[0]}(0/" in flat and flat.count(squeeze("hand-graded: free-text points")) == 1
    assert flat.index(squeeze("hand-graded: free-text points")) > flat.index("s4")


def test_terminal_control_sequences_in_a_name_or_flag_are_shown_not_sent():
    """A folder name is any text but '/' (a hub whose students share one uid collects any name): an
    ESC sequence in it (OSC 52 writes the instructor's clipboard, ESC[2J clears the screen) or a
    line break must reach the terminal as visible text."""
    name = "amy\x1b]52;c;cm0gLXJmIH4K\x07\x1b[2J\nbob"
    graded = replace(result(name, {AUTO[0]}), flags=("notebook declares STUDENT_ID \x1b[31mbob",))
    printed = render(report(graded), 160)
    progress = io.StringIO()
    console_view.BatchProgress(progress).on_result(name, graded, None)
    console_view.BatchProgress(progress).on_result(name, None, "OSError: no such file: 'x\x1b[2J'")
    for text in (printed, progress.getvalue()):
        assert "\x1b" not in text and "\x07" not in text and "\nbob" not in text, text
        assert "\\x1b" in text
