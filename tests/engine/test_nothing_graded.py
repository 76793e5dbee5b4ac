"""Does the gradebook say *why* a student has nothing (no files, an unreadable notebook, the
skeleton handed back unchanged) and name a student who is not on the course roster, instead of
"all 43 items: 0 points" for all of them alike?"""

import io
import shutil

import pytest

from autograder.engine.batch import BatchReport
from autograder.views.console_view import print_summary
from autograder.engine.gradebook_rows import GradebookRow
from autograder.engine.grader import grade_submission
from autograder.engine.registry import load_config

CONFIG = load_config("lec01_codesign")
EXAMPLES = CONFIG.folder.parents[1] / "examples" / "lec01_codesign" / "submissions"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    (root / "alice").mkdir()                                   # on the roster, handed in nothing
    shutil.copytree(CONFIG.folder, root / "bob", ignore=lambda d, names: [n for n in names if n not in CONFIG.student_files])
    shutil.copytree(EXAMPLES / "alice", root / "frank")         # full marks, not on the roster
    shutil.copytree(EXAMPLES / "dave", root / "dave")
    (root / "dave" / "handout.ipynb").write_text("{not json")   # his functions count, his answers cannot
    results = {s: grade_submission("lec01_codesign", root / s) for s in ("alice", "bob", "dave", "frank")}
    out = io.StringIO()
    report = BatchReport("lec01_codesign", tuple(GradebookRow.of(results[s]) for s in sorted(results)), tuple(sorted(results)), (), (),
                         "bubblewrap", 1.0)
    print_summary(report, "OUT", stream=out, width=200)
    return results, out.getvalue()


def test_an_empty_folder_says_no_files(graded):
    results, summary = graded
    assert results["alice"].flags == ("no files: none of codesign.py, handout.ipynb was handed in",)
    assert "all 43 items: 0 points (no files:" in summary.replace("\n", " ") or "(no files:" in summary


def test_the_skeleton_handed_back_says_unchanged(graded):
    results, summary = graded
    assert "codesign.py is the released skeleton, unchanged" in results["bob"].flags
    assert "flagged: bob: codesign.py is the released skeleton, unchanged" in summary


def test_an_unreadable_notebook_is_named_even_when_the_functions_scored(graded):
    results, summary = graded
    assert results["dave"].score > 0
    assert any(f.startswith("handout.ipynb cannot be read as a notebook (not JSON") for f in results["dave"].flags)


def test_a_student_off_the_roster_is_flagged_and_one_on_it_is_not(graded):
    results, summary = graded
    assert results["frank"].score > 0   # graded as anyone is (in the variant of the id frank)
    assert "flagged: frank: not on the course roster (roster.txt)" in summary
    assert "flagged: alice: not on the course roster" not in summary


def test_a_notebook_of_millions_of_empty_objects_is_named_unreadable_in_bounded_memory(tmp_path):
    """6 million `{}` in a notebook's metadata (18 MB, under the 20 MB a file may have): the sandbox
    calls it unreadable by nbrunner's bound, but the reason-giver parsed it whole in the grader's own
    process (450 MB traced, 2 s untraced, per student) and then said nothing about it."""
    from memory_peak import traced_peak
    from autograder.engine.locate import locate
    from autograder.engine.nothing_graded import why_nothing

    (tmp_path / "handout.ipynb").write_text('{"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": {"x": ['
                                            + ",".join(["{}"] * 6_000_000) + "]}}")
    files = locate(tmp_path, CONFIG)
    with traced_peak() as peak:
        flags = why_nothing(CONFIG, files, [])
    assert peak.bytes < 128 * 1024**2, peak.bytes
    assert any(f.startswith("handout.ipynb cannot be read as a notebook (holds 6,000,00") for f in flags), flags
