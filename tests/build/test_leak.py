"""Nothing under assignments/ leaks a solution: no solution line, no marker, no answer, no key, and
nothing that imports the instructor-only packages — for every assignment (autograder.build.leaks)."""

import json
import re
from pathlib import Path

import pytest

from autograder.build import leaks
from autograder.engine.assignment import load_assignment
from autograder.engine.registry import load_config
from discovery import assignments

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = ROOT / "assignments"


def _text(path):
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", assignments())
def test_the_student_folder_leaks_nothing(name):
    assert leaks.find_leaks(name, dict(load_assignment(name).answer_key)) == []


def test_the_checks_have_teeth():
    """Lecture 1 has enough solution and answer lines that a leak could not hide."""
    assert len(leaks.student_files(ASSIGNMENTS / "lec01_codesign")) >= 10
    assert len(leaks.solution_lines("lec01_codesign")) > 30
    assert len(leaks.answer_lines("lec01_codesign")) > 15


@pytest.mark.parametrize("planted, words", [
    ("### BEGIN SOLUTION\n", "contains the marker 'BEGIN SOLUTION'"),
    ("import solutions.lec01_codesign\n", "imports the instructor-only 'solutions.lec01_codesign'"),
])
def test_a_planted_leak_is_found(tmp_path, monkeypatch, planted, words):
    path = ASSIGNMENTS / "lec01_codesign" / "public_cases.py"
    original = path.read_text(encoding="utf-8")
    monkeypatch.setattr(leaks, "student_files", lambda folder: [tmp_path / "public_cases.py"])
    (tmp_path / "public_cases.py").write_text(planted + original, encoding="utf-8")
    found = leaks.find_leaks("lec01_codesign", dict(load_assignment("lec01_codesign").answer_key))
    assert any(words in leak for leak in found), found


def test_a_solution_line_copied_into_a_student_file_is_found(tmp_path, monkeypatch):
    line = sorted(leaks.solution_lines("lec01_codesign"))[0]
    (tmp_path / "codesign.py").write_text(f"    {line}  # copied\n", encoding="utf-8")
    monkeypatch.setattr(leaks, "student_files", lambda folder: [tmp_path / "codesign.py"])
    found = leaks.find_leaks("lec01_codesign", dict(load_assignment("lec01_codesign").answer_key))
    assert any("a line of a solution region" in leak for leak in found), found


def test_no_number_in_the_notebook_prose_would_pass_as_an_answer():
    """An example value in a prompt ("写成百分数，例如 …"), a docstring's worked example or the
    README must not fall within a key's tolerance."""
    from solutions.lec01_codesign.answers import answer_key

    folder = ASSIGNMENTS / "lec01_codesign"
    notebook = json.loads(_text(folder / "handout.ipynb"))
    prose = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
    prose += "\n" + _text(folder / "README.md")
    numbers = re.compile(r"(?<![\d.^])\d+\.\d+(?![\d.])")
    decimals = {float(m) for m in numbers.findall(prose)}
    # The docstrings' rounding examples (0.25 → 0, 2.5 → 2, …) are FP4/FP8 grid points and ties,
    # which the specification must quote; every other number there counts.
    decimals |= {d for d in map(float, numbers.findall(_text(folder / "codesign.py"))) if (d * 4) % 1 or d > 8}
    assert decimals  # the prose does quote numbers (bits per value, bytes per element)
    key = answer_key()  # the measured items have checks, not values: nothing to leak
    items = {item.id: item for item in load_config("lec01_codesign").items_of("number") if item.id in key}
    close = [(item_id, d) for item_id, item in items.items() for d in decimals
             if abs(d - key[item_id]) <= max(item.atol, item.rtol * abs(key[item_id]))]
    assert close == []
