"""Similarity sees through packed code: a copy run from an encoded, compressed string is decoded
statically (never run), compared with its victim and flagged "packed code"; packing that cannot
be read back is flagged as undecodable; an honest class has no packed flags."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from class_similarity import answered_reference, similarity_of
from packing import DECODABLE, UNDECODABLE, marshalled, zlib_base64

from autograder.build import write_reference_submission
from autograder.commands.similarity import DEFAULT_THRESHOLD
from autograder.similarity.packed import MAX_DECODED, unpack
from autograder.similarity.sources import code_parts

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "lec01_codesign"
CORPUS = ROOT / "tests" / "corpus" / ASSIGNMENT
HONEST = ("correct_loops", "float32", "different_algebra", "correct_ml_dtypes")
VICTIM, PACKER = "different_algebra", "packer"
MARSHALLER, MARSHALLED_FROM = "marsha", "correct_loops"


def victim_source() -> str:
    return (CORPUS / VICTIM / "codesign.py").read_text("utf-8")


@pytest.mark.parametrize("packing", sorted(DECODABLE))
def test_each_packing_is_found_and_decoded_to_the_copied_source(packing):
    source = victim_source()
    packed = DECODABLE[packing](source)
    assert "def " not in packed                            # nothing of the copy is visible as code
    found = unpack(packed)
    assert found.status in ("decoded", "undecodable") and found.sites
    assert [text for _, text in found.decoded_texts][-1] == source


@pytest.mark.parametrize("packing", sorted(UNDECODABLE))
def test_packing_that_cannot_be_read_statically_is_flagged_undecodable(packing):
    found = unpack(UNDECODABLE[packing](victim_source()))
    assert found.status == "undecodable" and found.decoded_texts == []
    assert all(site.reason for site in found.sites)


def test_decoding_is_bounded():
    bomb = unpack(UNDECODABLE["zlib_bomb"](""))
    assert f"more than {MAX_DECODED >> 20} MiB" in bomb.sites[0].reason
    # 2**200 characters if it were built: given up on within a few times MAX_DECODED of memory.
    doubling = 'a0 = "#"\n' + "".join(f"a{i + 1} = a{i} + a{i}\n" for i in range(200)) + "exec(a200)\n"
    tracemalloc.start()
    try:
        doubled = unpack(doubling)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert doubled.status == "undecodable" and doubled.decoded_texts == [] and doubled.sites[0].reason
    assert peak < 4 * MAX_DECODED, f"{peak} bytes held while giving up"
    nested = victim_source()
    for _ in range(12):
        nested = zlib_base64(nested)
    deep = unpack(nested)
    assert deep.status == "undecodable" and any("levels deep" in s.reason for s in deep.sites)


def test_honest_code_has_no_packed_code(tmp_path):
    write_reference_submission(ASSIGNMENT, tmp_path)
    folders = [CORPUS / name for name in HONEST] + [ROOT / "assignments" / ASSIGNMENT, tmp_path]
    for folder in folders:
        parts, _ = code_parts(folder, ("codesign.py", "handout.ipynb"))
        assert parts and [label for label, source in parts if unpack(source).sites] == [], folder


# ---------------------------------------------------------------------------------------------
# through `python -m autograder similarity`
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """Four independent correct solutions with the answered notebook, a student who runs
    the victim's code from a zlib+base64 string, one who runs a classmate's from marshal bytes."""
    codes = {name: (CORPUS / name / "codesign.py").read_text("utf-8") for name in HONEST}
    codes[PACKER] = zlib_base64(codes[VICTIM])
    codes[MARSHALLER] = marshalled(codes[MARSHALLED_FROM])
    return similarity_of(codes, answered_reference(tmp_path_factory), tmp_path_factory)


def test_the_packed_copy_scores_high_against_its_victim_and_is_marked(checked):
    done, _, pairs = checked
    row = pairs[frozenset((VICTIM, PACKER))]
    print(f"packed copy against its victim: {float(row['score']):.3f}")
    assert float(row["score"]) >= 0.8 and row["flagged"] == "yes"
    assert row["packed"] == f"{PACKER}: packed code decoded"
    assert max(pairs.values(), key=lambda r: float(r["score"])) is row
    assert f"packed code: {PACKER} (decoded" in done.stdout and "zlib.decompress(base64.b64decode(" in done.stdout


def test_undecodable_packing_is_marked_on_every_pair_of_that_student(checked):
    done, _, pairs = checked
    rows = [row for pair, row in pairs.items() if MARSHALLER in pair]
    assert len(rows) == len(HONEST) + 1
    assert all(f"{MARSHALLER}: packed code undecodable" in row["packed"] for row in rows)
    assert f"packed code: {MARSHALLER} (undecodable" in done.stdout and "marshal" in done.stdout


def test_an_honest_class_has_no_packed_marks(checked):
    _, _, pairs = checked
    honest = [row for pair, row in pairs.items() if pair <= set(HONEST)]
    assert len(honest) == 6 and all(row["packed"] == "" for row in honest)
    assert all(float(row["score"]) < DEFAULT_THRESHOLD for row in honest)


def test_the_report_lists_packed_code(checked):
    _, out, _ = checked
    page = (out / "report.html").read_text(encoding="utf-8")
    section = page[page.index('id="packed-code"'):page.index("</div>", page.index('id="packed-code"'))]
    assert "Packed code" in section and PACKER in section and MARSHALLER in section
    assert not [name for name in HONEST if f"<b>{name}</b>" in section]
    staged = (out / "code" / "students" / f"{PACKER}.py").read_text(encoding="utf-8")
    assert victim_source().strip() in staged                # the decoded copy is what was compared
