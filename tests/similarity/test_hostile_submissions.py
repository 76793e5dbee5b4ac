"""What a student controls reaches the similarity run and its report: a folder name made of HTML
must stay text in report.html (opened in headless Chromium), one huge single-line file must
not make the run read, decode or tokenize more than a bounded amount of it, and no student's
files may stop the run for the class."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser import NAME_PAYLOAD, assert_inert, dump_dom
from class_similarity import answered_reference, similarity_of

from autograder.engine.outputs import student_cell
from autograder.engine.registry import load_config
from autograder.similarity import sources
from autograder.similarity.sources import MAX_COMPARED_CHARS, stage_class

HONEST_DIR = Path(__file__).resolve().parent / "honest"
HUGE = "huge"
ESCAPES = "esc\x1b]8;;x\x1b\\name\x1b[2J"     # a terminal link and a screen wipe
SHOWN = "esc\\x1b]8;;x\\x1b\\name\\x1b[2J"   # as the terminal shows it
# One line of 3 MB of tokens: before the bound, 28 s of CPU and 780 MB to tokenize and parse it.
HUGE_LINE = "weights = [" + "0.5, -1.25, 3, " * 200_000 + "]\n"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Three students: honest code under a folder named with an HTML payload, its copy under a
    plain name (so the payload is in a pair, the matrix and the matched code), and a student
    whose codesign.py is one line of 3 MB."""
    code = (HONEST_DIR / "tables" / "codesign.py").read_text("utf-8")
    other = (HONEST_DIR / "loops" / "codesign.py").read_text("utf-8")
    codes = {NAME_PAYLOAD: code + f"\n# {NAME_PAYLOAD}\n", "copier": code, "other": other, ESCAPES: other,
             HUGE: HUGE_LINE}
    done, out, pairs = similarity_of(codes, answered_reference(tmp_path_factory), tmp_path_factory,
                                     without_notebook=(HUGE,), timeout=600)
    return done, out, list(pairs.values())


def test_a_folder_named_with_html_is_text_in_the_report(run, tmp_path):
    _, out, pairs = run
    assert any(NAME_PAYLOAD in (row["student_a"], row["student_b"]) and row["flagged"] for row in pairs)
    assert_inert(dump_dom(out / "report.html", tmp_path / "profile"), must_show=NAME_PAYLOAD)


def test_one_huge_line_is_compared_only_up_to_the_bound_and_said_so(run):
    done, out, pairs = run
    staged = (out / "code" / "students" / f"{HUGE}.py").read_text(encoding="utf-8")
    assert len(HUGE_LINE) > 10 * MAX_COMPARED_CHARS
    assert len(staged) <= 2 * MAX_COMPARED_CHARS + 1000          # read, plus at most as much decoded
    assert f"note: {HUGE}: more than {MAX_COMPARED_CHARS} characters of code" in done.stderr
    assert "read it" in done.stderr
    assert {frozenset((r["student_a"], r["student_b"])) for r in pairs if HUGE in (r["student_a"], r["student_b"])}


def test_a_folder_name_with_terminal_escapes_reaches_the_terminal_without_them(run):
    done, _, pairs = run
    # compared all the same; pairs.csv shows the name as grades.csv does (its escapes, one name per cell)
    assert any(student_cell(ESCAPES) in (row["student_a"], row["student_b"]) for row in pairs)
    assert "\x1b" not in done.stdout and "\x1b" not in done.stderr
    assert SHOWN in done.stdout


@pytest.mark.parametrize("source, cells", [("", 30_000), ("x=1", 30_000)])
def test_a_notebook_of_many_small_cells_is_staged_within_the_bound(tmp_path, source, cells):
    """The bound counted cell sources only: each code cell's `# --- handout.ipynb cell N` label was
    free, so 250,000 empty cells (0 characters of code) became 10 MB for copydetect to tokenize
    (2.4x the CPU, 1.9x the memory of the whole run). Labels count now, and an empty cell adds none.
    (30,000 cells: 90,000 JSON objects and arrays, within what a notebook may hold; 250,000 cells are
    no notebook any reader reads, test_a_notebook_of_a_million_empty_objects_is_not_parsed.)"""
    import json

    from autograder.similarity.sources import code_parts, unpacked_text

    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
    (tmp_path / "handout.ipynb").write_text(json.dumps({"cells": [cell] * cells, "metadata": {}, "nbformat": 4,
                                                         "nbformat_minor": 5}), encoding="utf-8")
    parts, notes = code_parts(tmp_path, ("handout.ipynb",), MAX_COMPARED_CHARS)
    text, _ = unpacked_text(parts)
    assert len(text) <= MAX_COMPARED_CHARS + 1000, len(text)
    if source:
        assert notes and "more than" in notes[0], notes


def joined_copies(honest: str) -> str:
    """Honest code, then a join of 40,000 references to 1 MiB decoded from a 1 KiB literal."""
    import zlib

    blob = zlib.compress(b"x=1\n" * ((1 << 20) // 4 - 1), 9)
    return honest + f"\nimport zlib\nZ = {blob!r}\nA = zlib.decompress(Z)\nexec(b''.join([" + "A," * 40_000 + "]))\n"


def test_a_class_with_hostile_packed_code_is_reported_for_everyone(tmp_path_factory):
    """Does the run still write report.html and every pair when one student's packed code asks for
    40 GiB at once (a MemoryError before) and another's decoders fail for their arguments (a
    TypeError, a ValueError before)? Each is an undecodable site of that student's."""
    code = (HONEST_DIR / "tables" / "codesign.py").read_text("utf-8")
    other = (HONEST_DIR / "loops" / "codesign.py").read_text("utf-8")
    codes = {"honest": code, "other": other, "joiner": joined_copies(other),
             "typist": code + '\nexec(b"x=1".decode(1))\nexec("x=1"[::0])\n'}
    done, out, pairs = similarity_of(codes, answered_reference(tmp_path_factory), tmp_path_factory)
    assert (out / "report.html").is_file() and len(pairs) == 6
    assert "packed code: joiner (undecodable" in done.stdout and ".join would be more than 1 MiB" in done.stdout
    assert "packed code: typist (undecodable" in done.stdout and ".decode(1) fails: TypeError" in done.stdout


def class_of(tmp_path: Path, names: tuple[str, ...]) -> Path:
    submissions = tmp_path / "class"
    for name in names:
        (submissions / name).mkdir(parents=True)
        (submissions / name / "codesign.py").write_text(f"def f_{name}(x):\n    return x + 1\n", "utf-8")
    return submissions


def test_a_failure_no_bound_foresaw_is_listed_for_that_student_alone(tmp_path, monkeypatch):
    """Is a failure no bound foresaw, in one student's decoding or in reading their files, that
    student's listed problem while the others are staged? It ended the class's run."""
    submissions = class_of(tmp_path, ("alice", "bob", "carol"))
    (submissions / "bob" / "codesign.py").write_text("exec('x = 1')  # bob\n", "utf-8")
    unpack, code_parts = sources.unpack, sources.code_parts

    def unpacking(source, **kwargs):
        if "# bob" in source:
            raise MemoryError
        return unpack(source, **kwargs)

    def reading(folder, *args):
        if folder.name == "carol":
            raise RecursionError("maximum recursion depth exceeded")
        return code_parts(folder, *args)

    monkeypatch.setattr(sources, "unpack", unpacking)
    monkeypatch.setattr(sources, "code_parts", reading)
    staged = stage_class(load_config("lec01_codesign"), submissions, tmp_path / "staged")
    assert sorted(staged.files) == ["alice", "bob"]
    assert "# bob" in staged.files["bob"].read_text("utf-8")               # bob's own code is compared
    assert staged.packed["bob"].status == "undecodable" and "MemoryError" in staged.packed["bob"].places[0]
    assert "carol" not in staged.packed and "RecursionError" in staged.notes["carol"]


def test_a_notebook_cell_with_a_lone_surrogate_is_compared(tmp_path):
    """Is a notebook whose cell holds a lone surrogate (JSON "\\ud800", no UTF-8 character)
    staged and compared? Writing it raised UnicodeEncodeError out of the class's run."""
    import json

    submissions = class_of(tmp_path, ("alice", "eve"))
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": "weird = '\ud800'\n"}
    (submissions / "eve" / "handout.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4,
                                                                   "nbformat_minor": 5}), encoding="utf-8")
    staged = stage_class(load_config("lec01_codesign"), submissions, tmp_path / "staged")
    assert sorted(staged.files) == ["alice", "eve"] and "eve" not in staged.notes
    assert "weird = '?'" in staged.files["eve"].read_text("utf-8")


def test_a_folder_name_that_is_no_utf_8_is_shown_escaped_and_the_report_written(tmp_path):
    """A student's folder named with bytes that are no UTF-8 (an LMS archive's or a shell's name,
    b"bad\\xff") is a name Python holds as a lone surrogate: writing it into report.html raised
    UnicodeEncodeError after the whole class had been compared, and no one got a report."""
    import csv
    import os
    import subprocess
    import sys

    submissions = class_of(tmp_path, ("alice", "bob"))
    odd = os.fsencode(submissions) + b"/bad\xff"
    os.mkdir(odd)
    with open(odd + b"/codesign.py", "w", encoding="utf-8") as handle:
        handle.write("def f_bad(x):\n    return x + 1\n")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "autograder", "similarity", "lec01_codesign", str(submissions),
                           "--out", str(out)], cwd=Path(__file__).resolve().parents[2], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    page = (out / "report.html").read_text("utf-8")
    assert "bad\\xff" in page or "bad\\udcff" in page
    with open(out / "pairs.csv", encoding="utf-8", newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 3


@pytest.mark.parametrize("lookalike", ["alice\x07", "alice\x1b[0m", "\u202ealice", "alice\u200b"])
def test_a_folder_named_like_a_classmate_is_not_shown_as_that_classmate_on_the_terminal(capsys, lookalike):
    """The terminal lines of `similarity` (pairs, notes, packed code) stripped control characters and
    kept bidi overrides and zero-width marks: a copier whose folder is `alice` plus BEL (a hand-made
    class folder, an exchange where students share a uid) was printed `3. alice ~ bob: 0.97  FLAGGED`,
    pointing at the honest alice. Names are shown as every other command shows them: the invisible
    character as an escape, so no two folders print alike and nothing reorders the line."""
    from autograder.commands.similarity import _say

    _say(f"  1. {lookalike} ~ bob: 0.97  FLAGGED")
    shown = capsys.readouterr().out
    assert "1. alice ~ bob" not in shown and "alice" in shown
    assert not [c for c in shown if c in "\x07\x1b\u202e\u200b"], shown


@pytest.mark.parametrize("blank", [" \n", "\t\n", "\u3000\n"])
def test_a_run_of_blank_lines_costs_the_class_run_no_more_than_its_length(tmp_path_factory, blank):
    """copydetect tokenizes each staged text with Pygments' python lexer, which takes time in the
    square of a run of lines holding only whitespace: 32,000 characters of " \\n" in one codesign.py
    added 22 s of CPU to the class's run, the 200,000 characters compared of a student about 14 min."""
    import resource
    code = (HONEST_DIR / "tables" / "codesign.py").read_text("utf-8")
    other = (HONEST_DIR / "loops" / "codesign.py").read_text("utf-8")
    codes = {"alice": code, "bob": other + blank * (32_000 // len(blank))}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done, out, pairs = similarity_of(codes, answered_reference(tmp_path_factory), tmp_path_factory,
                                     without_notebook=tuple(codes), timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    assert len(pairs) == 1 and "return" in (out / "code" / "students" / "bob.py").read_text("utf-8")
    assert spent < 12, f"{spent:.1f} s of CPU for two students"


@pytest.mark.parametrize("blank", [" \r", "\r\t"])
def test_a_run_of_blank_lines_ended_by_carriage_returns_costs_no_more_than_its_length(tmp_path_factory, blank):
    """A notebook cell's source keeps a lone carriage return (JSON's "\\r"), which Python and the
    lexer both read as a line's end, but the staged text's cut of line-end whitespace did not: 32,000
    characters of " \\r" in one cell cost the class's run about 15 s of CPU (the blank-line square),
    the 200,000 characters compared of a student about 10 min."""
    import json
    import resource

    answered = answered_reference(tmp_path_factory)
    notebook = json.loads((answered / "handout.ipynb").read_text(encoding="utf-8"))
    notebook["cells"].append({"cell_type": "code", "execution_count": None, "id": "blank-run", "metadata": {},
                              "outputs": [], "source": "x = 1\n" + blank * (32_000 // len(blank)) + "y = 2\n"})
    hostile = tmp_path_factory.mktemp("answered")
    (hostile / "handout.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    code = (HONEST_DIR / "tables" / "codesign.py").read_text("utf-8")
    other = (HONEST_DIR / "loops" / "codesign.py").read_text("utf-8")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done, out, pairs = similarity_of({"alice": code, "bob": other}, hostile, tmp_path_factory,
                                     without_notebook=("alice",), timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    staged = (out / "code" / "students" / "bob.py").read_text("utf-8")
    assert len(pairs) == 1 and "y = 2" in staged
    assert spent < 12, f"{spent:.1f} s of CPU for two students"
