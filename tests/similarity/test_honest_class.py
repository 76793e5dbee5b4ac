"""Does similarity leave students alone who wrote `codesign.py` from the docstrings alone? The
docstrings prescribe the method (frexp, ldexp, rint, copysign, reshape into blocks), so honest
code converges on the reference; only what a pair shares beyond it is evidence. Five independent
implementations (tests/similarity/honest/: vectorised as the docstrings suggest, scalar loops,
lookup tables, a hand-written round-half-even, a terse one without docstrings) and the reference
itself (a student who followed every hint) are never flagged, while a renamed and reordered copy
and a packed copy of one of them still are."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from disguise import disguise
from packing import zlib_base64

from autograder.build import write_reference_submission
from autograder.commands.similarity import DEFAULT_THRESHOLD

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "lec01_codesign"
HONEST_DIR = Path(__file__).resolve().parent / "honest"
HONEST = ("follower", "loops", "tables", "halfeven", "terse")
REFERENCE_LIKE = "alice"                  # the reference's own code, as a student who followed every hint
COPIES = {"mallory": "tables", "packer": "loops"}


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    submissions = tmp_path_factory.mktemp("class")
    answered = tmp_path_factory.mktemp("answered")
    write_reference_submission(ASSIGNMENT, answered)
    codes = {name: (HONEST_DIR / name / "codesign.py").read_text("utf-8") for name in HONEST}
    codes[REFERENCE_LIKE] = (answered / "codesign.py").read_text("utf-8")
    codes["mallory"] = disguise(codes["tables"], seed=5)
    codes["packer"] = zlib_base64(codes["loops"])
    for name, code in codes.items():
        (submissions / name).mkdir()
        (submissions / name / "codesign.py").write_text(code, encoding="utf-8")
        shutil.copyfile(answered / "handout.ipynb", submissions / name / "handout.ipynb")
    out = tmp_path_factory.mktemp("similarity")
    done = subprocess.run([sys.executable, "-m", "autograder", "similarity", ASSIGNMENT, str(submissions),
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with open(out / "pairs.csv", encoding="utf-8") as handle:
        rows = {frozenset((row["student_a"], row["student_b"])): row for row in csv.DictReader(handle)}
    return rows, done.stdout


@pytest.fixture(scope="module")
def pairs(checked):
    return checked[0]


def test_no_honest_student_is_flagged_against_another_or_the_reference(pairs):
    honest = set(HONEST) | {REFERENCE_LIKE}
    scores = {tuple(sorted(pair)): float(row["score"]) for pair, row in pairs.items() if pair <= honest}
    assert len(scores) == len(honest) * (len(honest) - 1) // 2
    assert {pair: score for pair, score in scores.items() if score >= DEFAULT_THRESHOLD} == {}, scores


@pytest.mark.parametrize("copier", sorted(COPIES))
def test_a_renamed_or_packed_copy_is_still_flagged(pairs, copier):
    row = pairs[frozenset((copier, COPIES[copier]))]
    assert float(row["score"]) >= DEFAULT_THRESHOLD and row["flagged"] == "yes", row


def test_only_the_reference_itself_is_pointed_out_as_like_the_reference(checked):
    """Handing in the reference shows in the student's share of it, which no pair can show."""
    _, stdout = checked
    pointed = [line.split(":")[1].strip() for line in stdout.splitlines() if line.startswith("like the reference:")]
    assert pointed == [REFERENCE_LIKE]
