"""Does similarity leave students alone who wrote `codesign.py` from the docstrings alone? The
docstrings prescribe the method (frexp, ldexp, rint, copysign, reshape into blocks), so honest
code converges on the reference; only what a pair shares beyond it is evidence. Five independent
implementations (tests/similarity/honest/: vectorised as the docstrings suggest, scalar loops,
lookup tables, a hand-written round-half-even, a terse one without docstrings) and the reference
itself (a student who followed every hint) are never flagged, while a renamed and reordered copy
and a packed copy of one of them still are."""

from __future__ import annotations

from pathlib import Path

import pytest
from class_similarity import answered_reference, similarity_of
from disguise import disguise
from packing import zlib_base64

from autograder.commands.similarity import DEFAULT_THRESHOLD

HONEST_DIR = Path(__file__).resolve().parent / "honest"
HONEST = ("follower", "loops", "tables", "halfeven", "terse")
REFERENCE_LIKE = "alice"                  # the reference's own code, as a student who followed every hint
COPIES = {"mallory": "tables", "packer": "loops"}


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    answered = answered_reference(tmp_path_factory)
    codes = {name: (HONEST_DIR / name / "codesign.py").read_text("utf-8") for name in HONEST}
    codes[REFERENCE_LIKE] = (answered / "codesign.py").read_text("utf-8")
    codes["mallory"] = disguise(codes["tables"], seed=5)
    codes["packer"] = zlib_base64(codes["loops"])
    done, _, rows = similarity_of(codes, answered, tmp_path_factory)
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
