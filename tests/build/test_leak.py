"""Nothing under assignments/ leaks a solution: no solution line, no marker, no answer, no key, and
nothing that imports the instructor-only packages."""

import ast
import importlib
import json
import re
from pathlib import Path

import pytest

from authoring.cells import Question
from autograder.build.markers import find_regions
from autograder.engine.registry import load_config

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = ROOT / "assignments"
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
# Shorter lines ("return q", "else:") also occur in honest code; a line this long and specific does not.
MIN_DISTINCTIVE = 12


def _student_files():
    skip = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints"}
    return [p for p in sorted(ASSIGNMENTS.rglob("*")) if p.is_file() and not skip & set(p.parts)]


def _text(path):
    return path.read_text(encoding="utf-8")


def _code_part(line):
    """The line without its trailing comment (a '#' outside quotes), stripped: a copied line with a
    new comment is still the same code."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return line[:i].strip()
    return line.strip()


def _distinctive(lines):
    out = set()
    for line in lines:
        text = _code_part(line)
        if len(text) >= MIN_DISTINCTIVE and re.search(r"[A-Za-z_]", text):
            out.add(text)
    return out


def _lines_of(path):
    """A notebook's lines are those of its cells' sources (the raw JSON quotes and escapes them)."""
    if path.suffix == ".ipynb":
        return [line for cell in json.loads(_text(path))["cells"] for line in "".join(cell["source"]).splitlines()]
    return _text(path).splitlines()


def _student_lines():
    return {(p.relative_to(ROOT).as_posix(), _code_part(line)) for p in _student_files() for line in _lines_of(p)}


def _assignments():
    return sorted(p.parent.name for p in ASSIGNMENTS.glob("*/grading.toml"))


def test_there_is_something_to_check():
    assert _assignments() == ["lec01_codesign"]
    assert len(_student_files()) >= 10


def test_no_solution_body_line_appears_in_any_student_file():
    solution_lines = set()
    for source in sorted((ROOT / "solutions").rglob("*.py")):
        text = _text(source)
        if "BEGIN SOLUTION" in text:
            for region in find_regions(text, source.name):
                solution_lines |= _distinctive(region.body)
    assert len(solution_lines) > 30  # the check has teeth
    leaked = sorted((path, line) for path, line in _student_lines() if line in solution_lines)
    assert leaked == []


def test_no_reference_answer_line_appears_in_any_student_file():
    answer_lines = set()
    for name in _assignments():
        for notebook in load_config(name).student_files:
            if notebook.endswith(".ipynb"):
                cells = importlib.import_module(f"solutions.{name}.{Path(notebook).stem}").CELLS
                for cell in cells:
                    if isinstance(cell, Question):
                        answer_lines |= _distinctive(cell.answer.splitlines())
    assert len(answer_lines) > 15
    leaked = sorted((path, line) for path, line in _student_lines() if line in answer_lines)
    assert leaked == []


@pytest.mark.parametrize("marker", MARKERS)
def test_no_solution_or_hidden_test_marker(marker):
    assert [p.name for p in _student_files() if marker.lower() in _text(p).lower()] == []


def test_no_answer_key_value_appears_in_the_notebook():
    from solutions.lec01_codesign.answers import answer_key

    notebook = json.loads(_text(ASSIGNMENTS / "lec01_codesign" / "handout.ipynb"))
    text = "\n".join("".join(c["source"]) for c in notebook["cells"])
    found = []
    for item_id, key in answer_key().items():
        if isinstance(key, str):
            continue
        # The forms a student would copy from a printed table; whole numbers below 1000 are too
        # common in prose (bit widths, head sizes) to mean anything and are left out.
        forms = {f"{key:.3g}", f"{key:.4g}", f"{key:.2f}"}
        for form in sorted(f for f in forms if "." in f and len(f.replace(".", "").lstrip("0")) >= 2):
            if re.search(rf"(?<![\d.]){re.escape(form)}(?!\d)", text):
                found.append((item_id, form))
    assert found == []


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
    items = {item.id: item for item in load_config("lec01_codesign").items_of("number")}
    key = answer_key()
    close = [(item_id, d) for item_id, item in items.items() for d in decimals
             if abs(d - key[item_id]) <= max(item.atol, item.rtol * abs(key[item_id]))]
    assert close == []


def test_nothing_imports_the_instructor_packages():
    offenders = []
    for path in _student_files():
        if path.suffix == ".py":
            sources = [_text(path)]
        elif path.suffix == ".ipynb":
            sources = ["".join(c["source"]) for c in json.loads(_text(path))["cells"] if c["cell_type"] == "code"]
        else:
            continue
        for source in sources:
            for node in ast.walk(ast.parse(source)):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                offenders += [(path.name, n) for n in names if n.split(".")[0] in ("solutions", "autograder")]
    assert offenders == []
