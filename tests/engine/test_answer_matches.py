"""The copy report's comparison (views/answer_matches.py), on results the grader's own report
grading produced: it accepts an answer for a classmate's key exactly when the grader would, flags
the student who handed in a classmate's numbers (never the classmate), and nothing in an honest
class. The end-to-end test through nbgrader and Gradescope is tests/nbgrader/test_copied_answers.py."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from autograder.views.answer_matches import (LECTURE_SOURCE, compare_class, report_csv, report_json)
from autograder.engine.registry import GradingConfig, Item
from autograder.engine.report_items import grade_report
from autograder.engine.results import ItemResult, SubmissionResult
from autograder.sandbox import NotebookOutcome

ITEMS = (Item(id="q01", kind="number", points=2, rtol=0.01), Item(id="q02", kind="number", points=2, atol=0.5),
         Item(id="q03", kind="number", points=1, rtol=0.02, atol=1e-3), Item(id="q04", kind="choice", points=1,
                                                                               choices=("A", "B")))
CONFIG = GradingConfig("fx", None, ("h.ipynb",), ITEMS, "digest")


def variant_keys(n: int) -> dict[str | None, dict]:
    """A class of n variants, and the lecture's own example (None): numbers a variant's formula
    gives for n distinct parameters, spread so no two variants' keys are within tolerance."""
    keys = {None: {"q01": 100.0, "q02": 10.0, "q03": 0.25, "q04": "A"}}
    for i in range(n):
        keys[f"s{i:02d}"] = {"q01": 100.0 * 1.1 ** (i + 1), "q02": 10.0 + 2 * (i + 1), "q03": 0.25 * 1.05 ** (i + 1),
                             "q04": "AB"[i % 2]}
    return keys


def graded(student: str, answers: dict, keys: dict) -> SubmissionResult:
    """The student's result, graded by the grader's own report grading against their own keys."""
    items = grade_report(ITEMS, keys[student], NotebookOutcome("ok", answers, (), ""), "h.ipynb")
    return SubmissionResult(student, sum(i.score for i in items), 6.0, tuple(items), "bubblewrap", 1.0, assignment="fx")


def report(results, keys, min_items=3):
    return compare_class(CONFIG, results, lambda s: keys[s], min_items)


def test_an_honest_class_gives_no_flags():
    keys = variant_keys(12)
    results = [graded(s, keys[s], keys) for s in keys if s is not None]
    assert all(r.score == r.max_score for r in results)
    assert report(results, keys, min_items=1).flags == ()


def test_the_student_who_hands_in_a_classmates_numbers_is_flagged_with_that_classmate_only():
    keys = variant_keys(6)
    results = [graded(s, keys[s], keys) for s in keys if s not in (None, "s03")]
    results.append(graded("s03", keys["s01"], keys))   # s01's answers, choice included
    assert [i.status for i in results[-1].items[:3]] == ["failed"] * 3   # wrong numbers for s03's own variant
    done = report(results, keys)
    assert [(f.student, f.source, f.items, f.own_right, f.compared) for f in done.flags] == [
        ("s03", "s01", ("q01", "q02", "q03"), 0, 3)]
    assert done.items == ("q01", "q02", "q03") and set(done.students) == {f"s{i:02d}" for i in range(6)}


def test_fewer_matched_items_than_the_threshold_are_not_flagged():
    keys = variant_keys(4)
    mixed = {**keys["s02"], "q01": keys["s01"]["q01"], "q02": keys["s01"]["q02"]}   # two of s01's numbers
    results = [graded("s00", keys["s00"], keys), graded("s01", keys["s01"], keys), graded("s02", mixed, keys)]
    assert report(results, keys).flags == ()
    [flag] = report(results, keys, min_items=2).flags
    assert (flag.student, flag.source, flag.items, flag.own_right) == ("s02", "s01", ("q01", "q02"), 1)


def test_the_lectures_worked_example_is_told_apart_from_a_classmate():
    keys = variant_keys(3)
    results = [graded("s00", keys[None], keys), graded("s01", keys["s01"], keys)]
    [flag] = report(results, keys).flags
    assert (flag.student, flag.source) == ("s00", LECTURE_SOURCE)


@pytest.mark.parametrize("item", ITEMS[:3], ids=lambda i: i.id)
def test_the_report_accepts_an_answer_for_a_classmates_key_exactly_when_the_grader_would(item):
    """Around the classmate's key, at and beyond the tolerance's edge: the grader's verdict for the
    classmate's key and the report's match agree on every answer."""
    keys = variant_keys(2)
    other = keys["s01"][item.id]
    edge = item.atol + item.rtol * abs(other)
    for answer in other + edge * np.array([-1.001, -1.0, -0.999, -0.5, 0.0, 0.5, 0.999, 1.0, 1.001]):
        grader_says = grade_report([item], keys["s01"], NotebookOutcome("ok", {item.id: float(answer)}, (), ""),
                                   "h.ipynb")[0].status == "passed"
        student = graded("s00", {**keys["s00"], item.id: float(answer)}, keys)
        flags = report([student, graded("s01", keys["s01"], keys)], keys, min_items=1).flags
        assert any(f.source == "s01" for f in flags) == grader_says, (item.id, answer)


def test_absent_unreadable_and_unrecorded_answers_match_nothing():
    keys = variant_keys(3)
    absent = graded("s00", {}, keys)
    unreadable = graded("s01", {"q01": [keys["s02"]["q01"]], "q02": str(keys["s02"]["q02"]),
                                "q03": True}, keys)
    older = SubmissionResult("s02", 0.0, 6.0, tuple(ItemResult(i.id, i.kind, 0.0, i.points, "failed", "")
                                                    for i in ITEMS), "bubblewrap", 1.0, assignment="fx")
    done = report([absent, unreadable, older], keys, min_items=1)
    assert done.flags == ()
    assert [s for s, _ in done.notes] == ["s02"] and "--force" in done.notes[0][1]


def test_a_student_the_keys_refuse_is_a_note_not_a_crash():
    keys = variant_keys(2)

    def keys_of(student):
        if student == "s01":
            raise ValueError("the student id contains control characters")
        return keys[student]

    done = compare_class(CONFIG, [graded("s00", keys["s00"], keys), graded("s01", keys["s00"], keys)], keys_of, 1)
    assert done.flags == () and done.notes == (("s01", "no keys for this student: the student id contains "
                                                       "control characters"),)


def test_the_csv_and_json_reports_list_every_flagged_pair():
    keys = variant_keys(3)
    keys["=HYPERLINK(1)"] = keys.pop("s02")
    results = [graded("s00", keys["s00"], keys), graded("s01", keys["s00"], keys),
               graded("=HYPERLINK(1)", keys["s00"], keys)]
    done = report(results, keys)
    rows = list(csv.DictReader(io.StringIO(report_csv(done))))
    assert [(r["student"], r["matches_keys_of"], r["count"], r["items"]) for r in rows] == [
        ("'=HYPERLINK(1)", "s00", "3", "q01 q02 q03"), ("s01", "s00", "3", "q01 q02 q03")]
    data = json.loads(report_json(done))
    assert [(f["student"], f["source"]) for f in data["flags"]] == [("=HYPERLINK(1)", "s00"), ("s01", "s00")]
    assert data["min_items"] == 3 and data["items"] == ["q01", "q02", "q03"]


def test_a_notebook_declaring_the_classmates_id_is_shown_beside_the_flag():
    from dataclasses import replace

    keys = variant_keys(3)
    results = [graded("s00", keys["s00"], keys), graded("s01", keys["s01"], keys),
               replace(graded("s02", keys["s00"], keys), student_id="s02", declared_id="s00")]
    done = report(results, keys)
    [flag] = done.flags
    assert (flag.student, flag.source, flag.declared) == ("s02", "s00", "s00")
    assert done.declared_ids == (("s02", "s00"),)
    # the id typed with blanks around it is the student's own
    same = report([results[0], replace(results[1], declared_id=" s01 ")], keys)
    assert same.declared_ids == () and same.flags == ()


def test_results_graded_against_another_variant_than_the_seed_gives_now_are_notes():
    from dataclasses import replace

    keys = variant_keys(2)
    results = [replace(graded("s00", keys["s00"], keys), variant="aaaaaaaaaaaa"),
               replace(graded("s01", keys["s00"], keys), variant="bbbbbbbbbbbb")]
    done = compare_class(CONFIG, results, lambda s: keys[s], 1, variant_of=lambda s: "aaaaaaaaaaaa")
    assert done.students == ("s00",) and done.flags == ()
    assert done.notes[0][0] == "s01" and "seed was replaced" in done.notes[0][1]


def test_an_item_whose_key_is_the_same_for_every_student_is_named_as_one_no_copy_shows_in():
    """Lecture 1 has number items whose key does not change with the variant (q12p, q34a, …): a
    classmate's answer there is right for everyone, so the report can never flag it. It counted
    them among the items compared; it names them apart instead, so no one reads "not flagged" as
    "not copied" there."""
    same = Item(id="q05", kind="number", points=1, rtol=0.01)
    config = GradingConfig("fx", None, ("h.ipynb",), (*ITEMS, same), "digest")
    keys = {s: {**k, "q05": 42.0} for s, k in variant_keys(3).items()}

    def graded_all(student, answers):
        items = grade_report(config.items, keys[student], NotebookOutcome("ok", answers, (), ""), "h.ipynb")
        return SubmissionResult(student, sum(i.score for i in items), 7.0, tuple(items), "bubblewrap", 1.0,
                                assignment="fx")

    results = [graded_all("s00", keys["s00"]), graded_all("s01", keys["s00"]), graded_all("s02", keys["s02"])]
    done = compare_class(config, results, lambda s: keys[s], 3)
    assert done.items == ("q01", "q02", "q03")
    assert done.same_for_everyone == ("q05",)
    assert [(f.student, f.source, f.items) for f in done.flags] == [("s01", "s00", ("q01", "q02", "q03"))]
    assert json.loads(report_json(done))["same_for_everyone"] == ["q05"]
