"""What an assignment's student folder must never hold: a solution line, a solution or hidden-test
marker, a reference answer line, an answer key written out, or an import of the instructor-only
packages. `find_leaks(name)` lists each one in words an author can act on.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from authoring.cells import Question
from autograder.build.assignment import notebook_cells
from autograder.build.markers import find_regions
from autograder.engine.registry import REPO_ROOT, load_config
from autograder.engine.vocabulary import ItemKind

MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
INSTRUCTOR_PACKAGES = ("solutions", "autograder")
# Shorter lines ("return q", "else:") also occur in honest code; a line this long and specific does not.
MIN_DISTINCTIVE = 12
SKIPPED_PARTS = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints"}


def student_files(folder: Path) -> list[Path]:
    return [p for p in sorted(folder.rglob("*")) if p.is_file() and not SKIPPED_PARTS & set(p.parts)]


def code_part(line: str) -> str:
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


def distinctive(lines) -> set[str]:
    out = set()
    for line in lines:
        text = code_part(line)
        if len(text) >= MIN_DISTINCTIVE and re.search(r"[A-Za-z_]", text):
            out.add(text)
    return out


def lines_of(path: Path) -> list[str]:
    """A notebook's lines are those of its cells' sources (the raw JSON quotes and escapes them);
    a file that is no notebook, its text's."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":
        try:
            return [line for cell in json.loads(text)["cells"] for line in "".join(cell["source"]).splitlines()]
        except (ValueError, KeyError, TypeError):
            pass
    return text.splitlines()


def solution_lines(name: str) -> set[str]:
    """The distinctive lines of every solution region under solutions/<name>/, less those the
    lecture's own scripts hold (solutions/<name>/lecture/: the course gives them to students, so a
    line they share with the reference is no secret)."""
    found = set()
    for source in sorted((REPO_ROOT / "solutions" / name).rglob("*.py")):
        text = source.read_text(encoding="utf-8")
        if "BEGIN SOLUTION" in text:
            for region in find_regions(text, source.name):
                found |= distinctive(region.body)
    for lecture in sorted((REPO_ROOT / "solutions" / name / "lecture").glob("*.py")):
        found -= distinctive(lines_of(lecture))
    return found


def answer_lines(name: str) -> set[str]:
    """The distinctive lines of the reference answers in the notebook sources."""
    found = set()
    for cell in notebook_cells(name, load_config(name).notebook):
        if isinstance(cell, Question):
            found |= distinctive(cell.answer.splitlines())
    return found


def instructor_imports(path: Path) -> list[str]:
    if path.suffix == ".py":
        sources = [path.read_text(encoding="utf-8", errors="replace")]
    elif path.suffix == ".ipynb":
        try:
            sources = ["".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
                       if c["cell_type"] == "code"]
        except (ValueError, KeyError, TypeError):
            sources = [path.read_text(encoding="utf-8", errors="replace")]
    else:
        return []
    names = []
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:  # a cell a student is meant to fill in; nothing to import there
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names.append(node.module or "")
    return [n for n in names if n.split(".")[0] in INSTRUCTOR_PACKAGES]


def written_keys(name: str, answer_key: dict, text: str | None = None) -> list[tuple[str, str]]:
    """(item, form) for each number key written out in the notebook (or in `text`) the way a table
    would print it.

    Whole numbers below 1000 are too common in prose (bit widths, head sizes) to mean anything and
    are left out."""
    config = load_config(name)
    if text is None:
        notebook = json.loads((config.folder / config.notebook).read_text(encoding="utf-8"))
        text = "\n".join("".join(c["source"]) for c in notebook["cells"])
    found = []
    for item in config.items_of(ItemKind.NUMBER):
        key = answer_key[item.id]
        if not isinstance(key, (int, float)):  # a measured or derived key has no one value to leak
            continue
        forms = {f"{key:.3g}", f"{key:.4g}", f"{key:.2f}"}
        for form in sorted(f for f in forms if "." in f and len(f.replace(".", "").lstrip("0")) >= 2):
            if re.search(rf"(?<![\d.]){re.escape(form)}(?!\d)", text):
                found.append((item.id, form))
    return found


def find_leaks(name: str, answer_key: dict) -> list[str]:
    """Every leak in assignments/<name>/, one sentence each; empty when the folder is clean."""
    folder = load_config(name).folder
    files = student_files(folder)
    leaks = file_leaks(name, folder, files)
    leaks += [f"{name}'s notebook writes out the key of {item} as {form}" for item, form in written_keys(name, answer_key)]
    from autograder.engine.variants import has_variants

    if has_variants(name):
        leaks += variant_leaks(name, files)
    return leaks


def release_leaks(name: str, folder: Path, answer_key: dict) -> list[str]:
    """Every leak in a release of `name` (nbgrader's release/<name>/, made from assignments/<name>/ with
    whatever else stood there): each file as find_leaks reads the student folder, every notebook of it
    for a written-out key, and the secret seed anywhere."""
    files = student_files(folder)
    leaks = file_leaks(name, folder, files)
    for path in (p for p in files if p.suffix == ".ipynb"):
        text = "\n".join(lines_of(path))
        leaks += [f"{path.name} writes out the key of {item} as {form}" for item, form in written_keys(name, answer_key, text)]
    from autograder.engine.variants import has_variants, read_seed

    if has_variants(name):
        seed = read_seed(name).hex()
        leaks += [f"{path.name} contains the secret seed (every student's variant could be drawn from it)"
                  for path in files if seed in path.read_bytes().decode("utf-8", errors="replace").lower()]
    return leaks


def file_leaks(name: str, folder: Path, files: list[Path]) -> list[str]:
    """Markers, solution lines, reference answer lines and instructor imports in `files`."""
    solutions, answers = solution_lines(name), answer_lines(name)
    leaks = []
    for path in files:
        rel = path.relative_to(folder.parent).as_posix() if path.is_relative_to(folder.parent) else str(path)
        data = path.read_bytes()
        text = data.decode("utf-8", errors="replace")
        leaks += [f"{rel} contains the marker {m!r}" for m in MARKERS if m.lower() in text.lower()]
        if path.suffix not in (".py", ".ipynb") and not _is_text(data):   # data files (.npz) hold no code
            continue
        for line in lines_of(path):
            code = code_part(line)
            if code in solutions:
                leaks.append(f"{rel} contains a line of a solution region: {code!r}")
            elif code in answers:
                leaks.append(f"{rel} contains a line of a reference answer: {code!r}")
        leaks += [f"{rel} imports the instructor-only {n!r}" for n in instructor_imports(path)]
    return leaks


def _is_text(data: bytes) -> bool:
    """Any text file counts (an editor's `codesign.py~`, a `solution.txt`): what is no UTF-8 is data."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\0" not in data


# Variants sampled for the leak scan (the lecture's and "check-1", …): the notebook is the same
# for every student, so a key it wrote out would show in some of them.
LEAK_SAMPLES = 8


def variant_leaks(name: str, files: list[Path], n: int = LEAK_SAMPLES) -> list[str]:
    """The secret seed anywhere in the student folder; a sampled variant's number key written out in
    the notebook or the helper; a table entry holding anything but the variant's parameters."""
    from autograder.engine.assignment import load_assignment
    from autograder.engine.variants import (HELPER_FILE, TABLE_FILE, lecture_params, read_seed, samples,
                                            seed_path)

    config, leaks = load_config(name), []
    seed = read_seed(name).hex()
    for path in files:
        if seed in path.read_bytes().decode("utf-8", errors="replace").lower():
            leaks.append(f"{path.name} contains the secret seed of {seed_path(name).name} (every student's "
                         f"variant could be drawn from it)")
    notebook = json.loads((config.folder / config.notebook).read_text(encoding="utf-8"))
    text = "\n".join("".join(c["source"]) for c in notebook["cells"])
    helper = config.folder / HELPER_FILE
    text += "\n" + (helper.read_text(encoding="utf-8") if helper.is_file() else "")
    assignment = load_assignment(name)
    for label, params in samples(name, n):
        key = dict(assignment.key_for(params))
        leaks += [f"{name}'s notebook or {HELPER_FILE} writes out variant {label}'s key of {item} as {form}"
                  for item, form in written_keys(name, key, text)]
    table = config.folder / TABLE_FILE
    if table.is_file():
        names = set(lecture_params(name))
        entries = json.loads(table.read_text(encoding="utf-8")).get("by_key", {})
        extra = sorted({k for entry in entries.values() for k in entry} - names)
        if extra:
            leaks.append(f"{TABLE_FILE} holds {extra}, which are not parameters of variants.py's LECTURE")
    return leaks
