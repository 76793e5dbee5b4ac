"""Is every corpus submission graded as it deserves, with hostile ones next to honest ones in ONE
batch (-j 2), and does nothing a hostile submission does leak out of its sandbox?"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autograder.engine.registry import REPO_ROOT
from autograder.gradescope.schema import check_results
from engine.conftest import MARKERS
from engine.corpus import LOW_FRACTION, corpus_cases, items_answered_without_the_student_module, score_outside

CASES = {case.name: case for case in corpus_cases()}
ORPHAN_MARKER = MARKERS["cs349e-orphan-marker"]
ESCAPE_MARKER = MARKERS["cs349e-escape-marker"]


def test_batch_graded_everyone_under_bubblewrap(graded_batch):
    """Did the batch grade every student (none skipped, no grader error) with bubblewrap?"""
    report = graded_batch.report
    students = graded_batch.recorded_students()
    assert [(s, error) for s, error in report.failed if s not in graded_batch.overloaded] == []
    assert sorted(report.graded) == students
    assert [r.student for r in report.results] == students
    assert report.isolation == "bubblewrap"
    assert {r.isolation for r in report.results} <= {"bubblewrap", "none"}  # none: nothing was run
    graded_batch.skip_if_overloaded()


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_gets_the_grade_it_deserves(graded_batch, name):
    """Does each case score as its case.toml says (honest ones full marks, hostile ones low)?"""
    case = CASES[name]
    result = graded_batch.result(name)
    auto = [item for item in result.items if item.status != "manual"]
    functions = [item for item in result.items if item.kind == "function"]
    if case.score == "full":
        bad = [(i.id, i.status, i.feedback_md[:600]) for i in auto if i.status != "passed" and i.id not in case.loses]
        assert bad == [] and sorted(i.id for i in auto if i.status != "passed") == sorted(case.loses)
        assert result.score == result.auto_max_score - sum(i.max_score for i in auto if i.id in case.loses)
    elif case.score == "zero":  # nothing for what needs the student's functions
        assert score_outside(result, items_answered_without_the_student_module())[0] == 0
    elif case.score == "low":  # judged on the items that need the student's functions
        score, maximum = score_outside(result, items_answered_without_the_student_module())
        assert score <= LOW_FRACTION * maximum
    elif case.score == "partial":
        assert 0 < result.score < result.auto_max_score
    elif case.score == "functions":
        assert all(i.status == "passed" for i in functions)
        assert result.score < result.auto_max_score
    feedback = graded_batch.feedback(name)
    for expected in case.feedback:
        assert expected in feedback, f"{name}: feedback lacks {expected!r}"


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.score not in ("full", "partial")))
def test_low_grades_are_explained_per_item(graded_batch, name):
    """Does every item that lost points say why, in Chinese, in its feedback?"""
    for item in graded_batch.result(name).items:
        if item.status in ("failed", "error", "partial"):
            text = item.feedback_md
            assert len(text.strip()) > 20 and any("\u4e00" <= ch <= "\u9fff" for ch in text), (name, item.id)


def test_no_process_outlives_its_sandbox(graded_batch):
    """Are the children a submission started (even detached ones) gone after grading?"""
    survivors = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if ORPHAN_MARKER.encode() in (entry / "cmdline").read_bytes():
                    survivors.append(entry.name)
            except OSError:
                pass
    assert survivors == []


def test_nothing_was_written_outside_the_sandbox(graded_batch):
    """Did the file-writing submission leave no marker next to its folder, in the repo or in /tmp?"""
    places = {Path("/"), Path("/tmp"), REPO_ROOT, REPO_ROOT / "solutions", REPO_ROOT / "autograder",
              graded_batch.submissions, graded_batch.submissions / "writes_outside", Path(os.path.expanduser("~"))}
    places |= set(graded_batch.submissions.parents)
    assert [p for p in places if (p / ESCAPE_MARKER).exists()] == []


def test_outputs_stay_small_after_a_200mb_flood(graded_batch):
    """Is the captured output truncated so results and feedback stay small?"""
    for folder, suffix in (("results", ".json"), ("feedback", ".md")):
        size = (graded_batch.out / folder / f"prints_200mb{suffix}").stat().st_size
        assert size < 300_000


def test_results_follow_gradescope_spec(graded_batch):
    """Is every results/<student>.json a valid Gradescope results.json?"""
    for path in sorted((graded_batch.out / "results").glob("*.json")):
        check_results(json.loads(path.read_text("utf-8")))


def test_grades_csv_has_one_sorted_row_per_student(graded_batch):
    """Does grades.csv list every student once, sorted, with the fixed leading columns?"""
    lines = (graded_batch.out / "grades.csv").read_text("utf-8").splitlines()
    header = lines[0].split(",")
    assert header[:3] == ["student", "score", "max_score"]
    students = [line.split(",")[0] for line in lines[1:]]
    assert students == graded_batch.recorded_students()
    graded_batch.skip_if_overloaded()


def test_feedback_never_shows_hidden_tests_or_reference_code(graded_batch):
    """Does no feedback quote the reference's code, the hidden tests' source, or solution markers?"""
    forbidden = ("### BEGIN SOLUTION", "np.ldexp(np.rint(np.ldexp(a, -step_exp))", "autograder/lec01_codesign",
                 "def suite(", "quantize_check(", "answer_key")
    for path in (graded_batch.out / "feedback").glob("*.md"):
        text = path.read_text("utf-8")
        assert not [f for f in forbidden if f in text], path.name
