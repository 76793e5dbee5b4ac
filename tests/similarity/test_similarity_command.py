"""`python -m autograder similarity`: does a disguised copy rank first, while independent correct
solutions (tests/corpus: loops, float32, other algebra, ml_dtypes) stay unflagged?"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from disguise import disguise

from autograder.build import write_reference_submission
from autograder.commands.similarity import DEFAULT_THRESHOLD

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "lec01_codesign"
CORPUS = ROOT / "tests" / "corpus" / ASSIGNMENT
HONEST = ("correct_loops", "float32", "different_algebra", "correct_ml_dtypes")
ORIGINAL, COPIER = "different_algebra", "mallory"


def similarity(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", "similarity", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """A class: four independent correct solutions, each with the answered notebook (honest
    students answer the report alike), a copier of one of them (renamed locals, reordered
    functions, notebook too), a student who handed in the skeleton and one whose notebook is
    not JSON (and the skeleton's functions)."""
    submissions = tmp_path_factory.mktemp("class")
    answered = tmp_path_factory.mktemp("answered")
    write_reference_submission(ASSIGNMENT, answered)
    for name in HONEST:
        (submissions / name).mkdir()
        shutil.copyfile(CORPUS / name / "codesign.py", submissions / name / "codesign.py")
        shutil.copyfile(answered / "handout.ipynb", submissions / name / "handout.ipynb")
    copier = submissions / COPIER / ASSIGNMENT            # nbgrader's layout works too
    copier.mkdir(parents=True)
    (copier / "codesign.py").write_text(disguise((CORPUS / ORIGINAL / "codesign.py").read_text("utf-8"), seed=3))
    shutil.copyfile(answered / "handout.ipynb", copier / "handout.ipynb")
    skeleton = submissions / "skel"
    shutil.copytree(ROOT / "assignments" / ASSIGNMENT, skeleton,
                    ignore=lambda _d, names: [n for n in names if n not in ("codesign.py", "handout.ipynb")])
    (submissions / "broken").mkdir()
    shutil.copyfile(ROOT / "assignments" / ASSIGNMENT / "codesign.py", submissions / "broken" / "codesign.py")
    (submissions / "broken" / "handout.ipynb").write_text("{not json")
    out = tmp_path_factory.mktemp("similarity")
    done = similarity(ASSIGNMENT, str(submissions), "--out", str(out))
    assert done.returncode == 0, done.stderr
    with open(out / "pairs.csv", encoding="utf-8") as handle:
        pairs = list(csv.DictReader(handle))
    return done, out, pairs


def _pair(row) -> frozenset[str]:
    return frozenset((row["student_a"], row["student_b"]))


def test_the_disguised_copy_really_differs_from_its_original():
    original = (CORPUS / ORIGINAL / "codesign.py").read_text("utf-8")
    copy = disguise(original, seed=3)
    assert copy != original and "def quantize(" in copy
    original_lines = {line.strip() for line in original.splitlines() if line.strip()}
    shared = [line for line in copy.splitlines() if line.strip() in original_lines and "=" in line]
    assert len(shared) < 0.2 * len(copy.splitlines())     # few assignment lines survive verbatim


def test_the_planted_copy_ranks_first_and_is_the_only_flagged_pair(checked):
    done, _, pairs = checked
    assert _pair(pairs[0]) == {ORIGINAL, COPIER} and pairs[0]["flagged"] == "yes"
    assert [row for row in pairs[1:] if row["flagged"]] == []
    honest_best = max(float(row["score"]) for row in pairs if _pair(row) <= set(HONEST))
    assert float(pairs[0]["score"]) >= 0.8 and honest_best < DEFAULT_THRESHOLD
    print(f"planted pair {float(pairs[0]['score']):.2f}, most similar honest pair {honest_best:.2f}")
    assert f"{ORIGINAL} ~ {COPIER}" in done.stdout or f"{COPIER} ~ {ORIGINAL}" in done.stdout


def test_every_pair_is_listed_once_and_the_skeleton_matches_nobody(checked):
    _, _, pairs = checked
    students = set(HONEST) | {COPIER, "skel", "broken"}
    assert {_pair(row) for row in pairs} == {frozenset((a, b)) for a in students for b in students if a < b}
    assert [row for row in pairs if "skel" in _pair(row) and float(row["score"]) > 0] == []


def test_an_unreadable_notebook_is_reported_and_the_rest_still_compared(checked):
    done, _, pairs = checked
    assert "broken: handout.ipynb" in done.stderr and "not valid JSON" in done.stderr
    assert sum("broken" in _pair(row) for row in pairs) == len(HONEST) + 2   # still one of the class


def test_the_html_report_shows_the_copy_and_needs_no_network(checked):
    from bs4 import BeautifulSoup

    _, out, _ = checked
    html = (out / "report.html").read_text(encoding="utf-8")
    assert f"{COPIER} ~ {ORIGINAL}" in html or f"{ORIGINAL} ~ {COPIER}" in html
    assert "highlight-red" in html and "highlight-green" in html
    assert "http://" not in html and "https://" not in html and "<script" not in html
    matrix = BeautifulSoup(html, "html.parser").find(id="matrix")
    header = [th.get_text() for th in matrix.find("tr").find_all("th")][1:]
    assert header == sorted(set(HONEST) | {COPIER, "skel", "broken"})   # students by name
    assert (out / "code" / "students" / f"{COPIER}.py").is_file()


def test_bad_input_is_a_usage_error_naming_it(tmp_path):
    missing = similarity(ASSIGNMENT, str(tmp_path / "nope"), "--out", str(tmp_path / "o"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    unknown = similarity("lec99", str(tmp_path), "--out", str(tmp_path / "o"))
    assert unknown.returncode == 2 and "lec99" in unknown.stderr
    threshold = similarity(ASSIGNMENT, str(tmp_path), "--out", str(tmp_path / "o"), "--threshold", "2")
    assert threshold.returncode == 2 and "--threshold" in threshold.stderr
