"""Similarity sees code a student keeps in their notebook outside its code cells. A codesign.py
that writes a string of its own notebook (its metadata, a markdown or raw cell, an output) to a
module file and imports it runs no exec, eval or compile: nothing was packed for packed.py to
find, and the copied code, in no code cell, was never compared. Every string of the notebook
outside its code cells that is Python defining a function or class is now compared after the
code cells, and the student is marked with packed code (where it was found)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from class_similarity import answered_reference
from test_packed_code import written_and_imported

from autograder.commands.similarity import DEFAULT_THRESHOLD

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "lec01_codesign"
CORPUS = ROOT / "tests" / "corpus" / ASSIGNMENT
HONEST = ("correct_loops", "float32", "different_algebra", "correct_ml_dtypes")
VICTIM, HIDER = "different_algebra", "hider"
STRINGER, STRUNG_FROM = "stringer", "correct_loops"   # the copy in a literal of codesign.py, written and imported

LOADER = '''"""My codesign functions (the helpers are kept with my notebook)."""
import json, os, sys, tempfile
_here = os.path.dirname(os.path.abspath(__file__))
_dir = tempfile.mkdtemp()
with open(os.path.join(_dir, "codesign_impl.py"), "w") as _f:
    _f.write(json.load(open(os.path.join(_here, "handout.ipynb")))["metadata"]["notes"])
sys.path.insert(0, _dir)
from codesign_impl import *
'''


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    answered = answered_reference(tmp_path_factory)
    submissions = tmp_path_factory.mktemp("class")
    for name in (*HONEST, HIDER):
        folder = submissions / name
        folder.mkdir()
        shutil.copyfile(answered / "handout.ipynb", folder / "handout.ipynb")
        if name != HIDER:
            shutil.copyfile(CORPUS / name / "codesign.py", folder / "codesign.py")
    notebook = json.loads((submissions / HIDER / "handout.ipynb").read_text(encoding="utf-8"))
    notebook["metadata"]["notes"] = (CORPUS / VICTIM / "codesign.py").read_text(encoding="utf-8")
    (submissions / HIDER / "handout.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    (submissions / HIDER / "codesign.py").write_text(LOADER, encoding="utf-8")
    (submissions / STRINGER).mkdir()
    shutil.copyfile(answered / "handout.ipynb", submissions / STRINGER / "handout.ipynb")
    (submissions / STRINGER / "codesign.py").write_text(
        written_and_imported((CORPUS / STRUNG_FROM / "codesign.py").read_text(encoding="utf-8")), encoding="utf-8")
    out = tmp_path_factory.mktemp("similarity")
    done = subprocess.run([sys.executable, "-m", "autograder", "similarity", ASSIGNMENT, str(submissions),
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    import csv
    with open(out / "pairs.csv", encoding="utf-8") as handle:
        pairs = {frozenset((row["student_a"], row["student_b"])): row for row in csv.DictReader(handle)}
    return done, pairs


def test_code_kept_in_the_notebooks_metadata_is_compared_with_its_victim(checked):
    done, pairs = checked
    row = pairs[frozenset((VICTIM, HIDER))]
    print(f"hidden copy against its victim: {float(row['score']):.3f}")
    assert float(row["score"]) >= DEFAULT_THRESHOLD and row["flagged"] == "yes"
    assert f"{HIDER}: packed code decoded" in row["packed"]
    assert "handout.ipynb metadata.notes" in done.stdout


def test_code_in_a_literal_written_to_a_module_is_compared_with_its_victim(checked):
    done, pairs = checked
    row = pairs[frozenset((STRUNG_FROM, STRINGER))]
    print(f"copy in a string literal against its victim: {float(row['score']):.3f}")
    assert float(row["score"]) >= DEFAULT_THRESHOLD and row["flagged"] == "yes"
    assert f"{STRINGER}: packed code decoded" in row["packed"] and "string literal" in done.stdout


def test_an_honest_class_has_no_hidden_code(checked):
    _, pairs = checked
    honest = [row for pair, row in pairs.items() if pair <= set(HONEST)]
    assert len(honest) == 6 and all(row["packed"] == "" for row in honest)


def test_the_released_and_answered_notebooks_hold_no_hidden_code(tmp_path):
    from autograder.build import write_reference_submission
    from autograder.similarity.sources import hidden_code

    write_reference_submission(ASSIGNMENT, tmp_path)
    for folder in (ROOT / "assignments" / ASSIGNMENT, tmp_path):
        assert hidden_code(folder / "handout.ipynb") == [], folder


@pytest.mark.parametrize("place, put", [
    ("cell 3 (markdown)", lambda nb, code: nb["cells"][3].update(cell_type="markdown", source=code)),
    ("cell 3 (raw)", lambda nb, code: nb["cells"][3].update(cell_type="raw", source=code.splitlines(True))),
    ("cell 3 metadata.x", lambda nb, code: nb["cells"][3]["metadata"].update(x={"y": [code]})),
    ("cell 3 outputs", lambda nb, code: nb["cells"][3].update(cell_type="code", outputs=[
        {"output_type": "stream", "name": "stdout", "text": code}])),
])
def test_code_is_found_wherever_the_notebook_keeps_it(tmp_path, place, put):
    from autograder.build import write_reference_submission
    from autograder.similarity.sources import hidden_code

    write_reference_submission(ASSIGNMENT, tmp_path)
    notebook = json.loads((tmp_path / "handout.ipynb").read_text(encoding="utf-8"))
    code = (CORPUS / VICTIM / "codesign.py").read_text(encoding="utf-8")
    put(notebook, code)
    (tmp_path / "handout.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    found = hidden_code(tmp_path / "handout.ipynb")
    assert [text for _, text in found] == [code] and place in found[0][0]


def test_hidden_code_past_the_comparisons_cut_is_still_reported(tmp_path):
    """Code cells padded past what is compared leave no room for the hidden code: it is named
    unread, never left out unseen."""
    from autograder.similarity.sources import HIDDEN, MAX_COMPARED_CHARS, code_parts, unpacked_text
    from autograder.similarity.hidden import UNREAD

    code = (CORPUS / VICTIM / "codesign.py").read_text(encoding="utf-8")
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"notes": code}, "cells": [
        {"cell_type": "code", "id": "pad", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "x = 1\n" * (MAX_COMPARED_CHARS // 6 + 10)}]}
    (tmp_path / "handout.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    (tmp_path / "codesign.py").write_text("", encoding="utf-8")
    parts, notes = code_parts(tmp_path, ("codesign.py", "handout.ipynb"), MAX_COMPARED_CHARS)
    assert any("more than" in note for note in notes)
    [hidden] = [label for label, _ in parts if label.endswith(HIDDEN)]
    assert "metadata.notes" in hidden and UNREAD in hidden
    _, packed = unpacked_text(parts)
    assert packed.status == "undecodable" and hidden in packed.places


def test_an_overlong_hidden_string_is_reported_unread(tmp_path):
    from autograder.similarity.hidden import MAX_STRING_CHARS, UNREAD, hidden_code

    notebook = {"nbformat": 4, "nbformat_minor": 5, "cells": [],
                "metadata": {"notes": "def f():\n    return 1\n" + "#" * MAX_STRING_CHARS}}
    (tmp_path / "handout.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    assert hidden_code(tmp_path / "handout.ipynb") == [(f"metadata.notes {UNREAD}", "")]


def test_a_notebook_of_many_hidden_sites_names_a_bounded_number_of_them(tmp_path):
    """120,000 markdown cells, each a function with one in its metadata (18 MB, under the grader's
    20 MB): the run stayed within its bounds (9.6 s) but named every site, one by one, on one line of
    4.6 MB on the instructor's terminal and in 5 MB of report.html, burying the class's pairs. The
    student is still marked, with the first places and how many more."""
    from autograder.similarity.sources import MAX_COMPARED_CHARS, MOST_PLACES, code_parts, unpacked_text

    cells = [{"cell_type": "markdown", "id": f"h{index}", "metadata": {"x": f"def g{index}(a):\n    return a\n"},
              "source": f"def f{index}(a):\n    return a\n"} for index in range(20_000)]
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    (tmp_path / "handout.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    (tmp_path / "codesign.py").write_text("", encoding="utf-8")
    parts, _ = code_parts(tmp_path, ("codesign.py", "handout.ipynb"), MAX_COMPARED_CHARS)
    _, packed = unpacked_text(parts)
    assert len(packed.places) == MOST_PLACES + 1
    assert packed.places[0].startswith("handout.ipynb cell 0") and "more" in packed.places[-1]
    assert sum(map(len, packed.places)) < 5_000


def test_a_notebook_of_a_million_empty_objects_is_not_parsed(tmp_path):
    """1.2 million `{}` (3.6 MB): json.loads built each in the instructor's similarity run (0.6 GB
    for 18 MB). Refused unparsed by the bounds every reader of a notebook keeps (nbrunner.too_much_json)."""
    from memory_peak import traced_peak

    from autograder.similarity.hidden import hidden_code

    bomb = tmp_path / "handout.ipynb"
    bomb.write_text('{"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": {"x": ['
                    + ",".join(["{}"] * 1_200_000) + "]}}")
    with traced_peak() as peak:
        assert hidden_code(bomb) == []
    assert peak.bytes < 64 * 1024**2, peak.bytes
