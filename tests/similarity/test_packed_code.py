"""Similarity sees through packed code: a copy run from an encoded, compressed string is decoded
statically (never run), compared with its victim and flagged "packed code"; packing that cannot
be read back is flagged as undecodable; an honest class has no packed flags."""

from __future__ import annotations

from pathlib import Path

import pytest
from class_similarity import answered_reference, similarity_of
from memory_peak import traced_peak
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
    with traced_peak() as peak:
        doubled = unpack(doubling)
    peak = peak.bytes
    assert doubled.status == "undecodable" and doubled.decoded_texts == [] and doubled.sites[0].reason
    assert peak < 4 * MAX_DECODED, f"{peak} bytes held while giving up"
    nested = victim_source()
    for _ in range(12):
        nested = zlib_base64(nested)
    deep = unpack(nested)
    assert deep.status == "undecodable" and any("levels deep" in s.reason for s in deep.sites)


# ---------------------------------------------------------------------------------------------
# the work one submission may cost
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def work(monkeypatch):
    """Characters ast.parse is given and bytes zlib decompresses, counted while the test runs."""
    import ast
    import zlib

    counted = {"parsed": 0, "decompressed": 0}
    parse, decompressobj = ast.parse, zlib.decompressobj

    def parsing(source, *args, **kwargs):
        counted["parsed"] += len(source)
        return parse(source, *args, **kwargs)

    class Counting:
        def __init__(self, *args):
            self.inner = decompressobj(*args)

        def decompress(self, data, *args):
            out = self.inner.decompress(data, *args)
            counted["decompressed"] += len(out)
            return out

    monkeypatch.setattr(ast, "parse", parsing)
    monkeypatch.setattr(zlib, "decompressobj", Counting)
    return counted


def lines_of(n: int) -> bytes:
    return b"x=1\n" * (n // 4)


def test_a_decoding_repeated_at_every_site_is_done_once_and_never_parsed_past_the_budget(work):
    """Do five sites decoding the same 1 MiB of code cost one decompression and no parse of it?
    Each site was evaluated afresh and its 1 MiB parsed before the budget was charged: 2.5 s of
    CPU a site, and 200,000 characters of source hold 8,000 sites."""
    import zlib

    from autograder.similarity.sources import MAX_COMPARED_CHARS, unpacked_text

    source = f"import zlib\nZ = {zlib.compress(lines_of(MAX_DECODED - 4), 9)!r}\n" + "zlib.decompress(Z)\n" * 5
    text, packed = unpacked_text([("codesign.py", source)])
    assert work["decompressed"] <= MAX_DECODED
    assert work["parsed"] <= len(source) + 100, work
    assert packed.status == "undecodable" and len(packed.places) == 5
    assert all("more decoded text than the comparison reads" in place for place in packed.places)
    assert len(text) < len(source) + MAX_COMPARED_CHARS


def test_distinct_decodings_are_parsed_only_within_the_budget(work):
    """Are ten different decoded texts of 50,000 characters read only as far as the 200,000
    characters of the budget go (each at most twice: is it code, and its own packed code), the
    rest reported unread, with one decompression for all ten?"""
    import zlib

    from autograder.similarity.sources import MAX_COMPARED_CHARS, unpacked_text

    source = (f"import codecs, zlib\nZ = {zlib.compress(lines_of(50_000), 9)!r}\n"
              + "".join(f"codecs.decode(zlib.decompress(Z)[{4 * i}:], 'utf-8')\n" for i in range(10)))
    text, packed = unpacked_text([("codesign.py", source)])
    assert work["decompressed"] <= 50_000
    assert work["parsed"] <= len(source) + 2 * MAX_COMPARED_CHARS, work
    decoded = [place for place in packed.places if " decoded (" in place]
    assert len(decoded) == MAX_COMPARED_CHARS // 50_000 and len(packed.places) == 10
    assert len(text) <= len(source) + MAX_COMPARED_CHARS + 1000


A = "zlib.decompress(Z)"
GROWING = {   # operations whose result would be a thousand times a value's cap
    "join": "exec(b''.join([" + "A," * 1000 + "]))",
    "join of map": "exec(b''.join(map(zlib.decompress, [" + "Z," * 1000 + "])))",
    "slices": "exec(b''.join([" + "".join(f"A[{i}:]," for i in range(1000)) + "]))",
    "concatenation": "exec(" + "+".join(["A"] * 8) + ")",
}


@pytest.mark.parametrize("operation", sorted(GROWING))
def test_a_value_is_refused_before_it_is_built(monkeypatch, operation):
    """Is a value larger than the cap refused before it is built? `b''.join([A] * 40000)` of a
    1 MiB A asked for 40 GiB at once: a MemoryError that ended the class's whole run. Here, with
    the cap lowered to 64 KiB and 48 KiB in A (a comment), building would hold 48 MB."""
    import zlib

    from autograder.similarity import packed

    monkeypatch.setattr(packed, "MAX_DECODED", 64 << 10)
    monkeypatch.setattr(packed, "MAX_BUILT", 256 << 10)
    source = (f"import zlib\nZ = {zlib.compress(b'#' * (48 << 10), 9)!r}\nA = {A}\n"
              + GROWING[operation] + "\n")
    with traced_peak() as peak:
        found = unpack(source)
    peak = peak.bytes
    [site] = found.sites
    assert site.how.startswith("exec") and site.decoded is None and site.reason, site
    assert peak < 8 << 20, f"{peak} bytes held while refusing"


CRASHING = {   # each raised out of the similarity run of the whole class
    "bad encoding type": 'exec(b"x=1".decode(1))',
    "zero slice step": 'exec("x=1"[::0])',
    "bad zlib wbits": 'import zlib\nexec(zlib.decompress(b"x", "a"))',
    "bad str() encoding": 'exec(str(b"x=1", 1))',
    "surrogate encoding name": 'exec(b"x=1".decode("\\ud800"))',
    "bad errors handler": 'exec("x=1".encode("utf-8", 5))',
}


@pytest.mark.parametrize("call", sorted(CRASHING))
def test_a_call_that_fails_is_an_undecodable_site(call):
    """Is a decoder call that fails for its arguments (a TypeError, a ValueError) an undecodable
    site, described in text that can be written as UTF-8, rather than an exception?"""
    found = unpack(CRASHING[call])
    assert found.status == "undecodable" and found.sites[0].reason
    assert all(site.describe().encode("utf-8") for site in found.sites)


def test_finding_the_sites_asks_each_call_once(monkeypatch):
    """Is each call's callee resolved a bounded number of times, however deeply calls nest? Each
    call asked all its enclosing calls what they were: 200,000 characters of `f(f(f(...)))` 180
    deep took 6.6 s of CPU."""
    from autograder.similarity import packed

    asked = []
    qualified = packed._Module.qualified
    monkeypatch.setattr(packed._Module, "qualified", lambda self, node, depth=0: asked.append(1) or
                        qualified(self, node, depth))
    chain = "f(" * 180 + ")" * 180 + "\n"
    assert unpack(chain * 20).sites == []
    assert len(asked) <= 2 * 180 * 20, len(asked)


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


def written_and_imported(source: str) -> str:
    """The copy as a plain string literal, written to a module file and imported: no exec, eval or
    compile, no decoder; a token comparison sees one string."""
    return ("import os, sys, tempfile\n"
            f"SRC = {source!r}\n"
            "_folder = tempfile.mkdtemp()\n"
            "with open(os.path.join(_folder, 'impl.py'), 'w') as handle:\n"
            "    handle.write(SRC)\n"
            "sys.path.insert(0, _folder)\n"
            "from impl import *\n")


def test_code_in_a_plain_string_literal_is_found_and_decoded():
    source = victim_source()
    found = unpack(written_and_imported(source))
    assert found.status == "decoded", found
    assert [text for _, text in found.decoded_texts] == [source]
    assert "string literal" in found.sites[0].describe()


def test_decoding_data_the_code_reads_at_run_time_is_flagged_undecodable():
    """The copy base64-encoded in the notebook (an attachment reads like an image), decoded at run
    time, written to a module and imported: no exec, and the decoder's argument is no literal. A
    decoder of what cannot be read statically is an undecodable site (honest code decodes nothing)."""
    source = ("import base64, json, os, sys, tempfile\n"
              "nb = json.load(open(os.path.join(os.path.dirname(__file__), 'handout.ipynb')))\n"
              "blob = nb['cells'][0]['attachments']['a.png']['image/png']\n"
              "folder = tempfile.mkdtemp()\n"
              "open(os.path.join(folder, 'impl.py'), 'wb').write(base64.b64decode(blob))\n"
              "sys.path.insert(0, folder)\n"
              "from impl import *\n")
    found = unpack(source)
    assert found.status == "undecodable" and "line 5" in found.sites[0].describe() \
        and "computed at run time" in found.sites[0].reason, found


@pytest.mark.parametrize("honest", [
    'x = float.fromhex("0x1.cp+8")\n',
    "def f(s):\n    return float.fromhex(s)\n",
    "import codecs\ndef g(b):\n    return codecs.decode(b, 'utf-8')\n",
])
def test_honest_decoding_of_run_time_data_is_no_packed_code(honest):
    assert unpack(honest).sites == []
