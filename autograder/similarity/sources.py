"""The code a similarity check compares: one text per student, and the shared boilerplate.

A student's text is their graded files of grading.toml: each Python file as is, each notebook as
its code cells one after another (read like the sandbox reads them: no kernel, size-capped; an
unreadable notebook contributes nothing and is reported). The boilerplate is what every student
received: the released skeleton and notebook cells, the public tests and the self-check, so code
that every submission shares by construction never counts as copied.

Code a student runs from an encoded or compressed string (packed.py) is decoded statically and
compared as well, after the file or cell it hides in; every such place is reported.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder.engine.locate import locate, student_folders
from autograder.engine.registry import GradingConfig
from autograder.sandbox.nbrunner import NotebookUnreadable, load_code_cells
from autograder.similarity.hidden import UNREAD, hidden_code
from autograder.similarity.packed import Budget, Site, Unpacked, unpack

PUBLIC_BOILERPLATE = ("test_codesign.py", "public_checks.py", "selfcheck.py", "conftest.py")
# Characters of one student's code read (and, again, decoded from packed code) for comparison:
# 20x a full solution with its notebook. Tokenizing costs ~7 s of CPU per million characters and
# decoding ~2 s, so one student's huge file (a single line of megabytes) costs a second or two,
# and copydetect's input is at most twice this per student. What is cut is said in the notes.
MAX_COMPARED_CHARS = 200_000
LABEL_OVERHEAD = len("# --- \n\n\n")   # what unpacked_text adds around each part besides its label
# The end of the label of a part that is code a notebook keeps outside its code cells (hidden.py).
HIDDEN = ": code outside the code cells"


# Places of packed code named per student (console and report.html); the rest are counted.
MOST_PLACES = 20


@dataclass(frozen=True)
class PackedCode:
    status: str                     # "decoded", or "undecodable" if some of it could not be read
    places: list[str]               # where and how, one line each


@dataclass(frozen=True)
class Boilerplate:
    released: list[Path]           # what every student received
    reference: list[Path]          # what every student is told to write: the solved files, and joined
    reference_text: Path           # the reference as one student text, to measure a student against

    @property
    def files(self) -> list[Path]:
        return self.released + self.reference


@dataclass(frozen=True)
class StagedClass:
    files: dict[str, Path]          # student -> their staged code (one .py file)
    notes: dict[str, str]           # student -> what of theirs could not be read (not compared)
    packed: dict[str, PackedCode] = field(default_factory=dict)   # students who run packed code


# Whitespace at the end of a line (and so every line of whitespace only). copydetect tokenizes each
# staged text with Pygments' python lexer, which takes time in the square of a run of lines holding
# only whitespace (32,000 characters of " \n" cost the class's run 22 s of CPU; runs of empty lines
# cost nothing); tokens, and so the comparison, do not depend on it.
_TRAILING_SPACE = re.compile(r"[^\S\n]+(?=\n|\Z)")


def staged_text(text: str) -> str:
    """A text as it is staged for comparison: its line ends "\n" (a notebook cell keeps a lone "\r",
    a line's end to Python and the lexer alike, which the cut below did not see), without whitespace
    at the end of its lines."""
    return _TRAILING_SPACE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def code_text(folder: Path, names: tuple[str, ...]) -> tuple[str, list[str]]:
    """The student's code as one Python text, and notes on files that could not be read."""
    parts, notes = code_parts(folder, names)
    return "\n\n".join(f"# --- {label}\n{source}" for label, source in parts) + "\n", notes


def code_parts(folder: Path, names: tuple[str, ...], limit: int | None = None
               ) -> tuple[list[tuple[str, str]], list[str]]:
    """(label, source) of each file and notebook code cell, and notes on files not read; with
    `limit`, at most that many characters in all (the rest is cut, and a note says so)."""
    parts, notes = [], []
    for name in names:
        path = folder / name
        if not path.is_file() or path.is_symlink():
            continue
        if name.endswith(".ipynb"):
            try:
                cells = load_code_cells(str(path))
            except NotebookUnreadable as exc:
                notes.append(f"{name}: {exc}")
                continue
            parts += [(f"{name} cell {index}", source) for index, source in cells]
            # after the code cells: code it keeps elsewhere, which its code may load at run time
            parts += [(f"{name} {place}{HIDDEN}", text) for place, text in hidden_code(path)]
        else:
            with open(path, encoding="utf-8", errors="replace") as handle:
                parts.append((name, handle.read(limit + 1) if limit is not None else handle.read()))
    return (_within(parts, limit, notes) if limit is not None else parts), notes


def _within(parts: list[tuple[str, str]], limit: int, notes: list[str]) -> list[tuple[str, str]]:
    """The parts up to `limit` characters in all, each part's label and separator counted (60,000
    cells of `x=1` were 180,000 characters of code and 2 MB staged); a whitespace-only part is left
    out (it compares nothing and would cost its label); a note names where the cut fell. Code kept
    outside a notebook's code cells is always reported: past the cut by its place only, unread."""
    kept, left = [], limit
    for position, (label, source) in enumerate(parts):
        if not source.strip() and not label.endswith(HIDDEN):
            continue
        left -= len(label) + LABEL_OVERHEAD
        if len(source) > left:
            left = max(left, 0)
            notes.append(f"more than {limit} characters of code: compared up to {label} character {left}, "
                         "not the rest (read it)")
            if left:
                kept.append((label, source[:left]))
            kept += [(later.replace(HIDDEN, f" {UNREAD}{HIDDEN}"), "") for later, _ in parts[position + 1:]
                     if later.endswith(HIDDEN) and UNREAD not in later]
            break
        kept.append((label, source))
        left -= len(source)
    return kept


def unpacked_text(parts: list[tuple[str, str]], budget: int = MAX_COMPARED_CHARS) -> tuple[str, PackedCode | None]:
    """The parts joined, each followed by the code it decodes to (at most `budget` characters
    decoded in all, and packed.MAX_BUILT bytes built on the way); what was packed, if anything."""
    sections, places, statuses = [], [], set()
    left = Budget(text=budget)
    for label, source in parts:
        if label.endswith(HIDDEN):
            statuses.add("undecodable" if UNREAD in label else "decoded")
            places.append(label)
        sections.append(f"# --- {label}\n{source}")
        found = _unpacked(source, left)
        if found.status:
            statuses.add(found.status)
            places += [f"{label} {site.describe()}" for site in found.sites]
            sections += [f"# --- decoded from {label} line {site.line}\n{text}" for site, text in found.decoded_texts]
    packed = PackedCode("undecodable" if "undecodable" in statuses else "decoded", _named(places)) if places else None
    return "\n\n".join(sections) + "\n", packed


def _named(places: list[str]) -> list[str]:
    """The first MOST_PLACES places and how many more: 120,000 hidden sites were one line of 4.6 MB on
    the instructor's terminal and 5 MB of report.html, burying the class's pairs."""
    if len(places) <= MOST_PLACES:
        return places
    return places[:MOST_PLACES] + [f"... and {len(places) - MOST_PLACES} more places"]


def _unpacked(source: str, budget: Budget) -> Unpacked:
    """unpack(source), or one undecodable site if it fails in a way no bound foresaw: the
    student's own code is still compared, and the failure listed with their packed code."""
    try:
        return unpack(source, budget=budget)
    except Exception as exc:   # noqa: BLE001  (MemoryError, RecursionError, ...)
        return Unpacked([Site(1, "decoding", None, f"decoding fails: {type(exc).__name__}; read it")])


def stage_class(config: GradingConfig, submissions: Path, dest: Path) -> StagedClass:
    """Writes dest/<student>.py for every student folder of `submissions`. A student whose code
    cannot be staged at all is a note: one submission never stops the class's run."""
    dest.mkdir(parents=True, exist_ok=True)
    files, notes, packed = {}, {}, {}
    for student_dir in student_folders(submissions):
        name = student_dir.name
        try:
            target, note, packed_code = _stage_student(config, student_dir, dest)
        except Exception as exc:   # noqa: BLE001  (whatever one student's files hold)
            target, note, packed_code = None, f"not compared: staging fails ({type(exc).__name__}); read it", None
        if target:
            files[name] = target
        if note:
            notes[name] = note        # reported; what was staged is still compared
        if packed_code:
            packed[name] = packed_code
    return StagedClass(files, notes, packed)


def _stage_student(config: GradingConfig, student_dir: Path, dest: Path
                   ) -> tuple[Path | None, str, PackedCode | None]:
    """(the staged file, a note on what could not be read, the packed code) of one student."""
    located = locate(student_dir, config)
    if not located.present:
        return None, f"none of {', '.join(config.student_files)} found", None
    parts, unread = code_parts(located.folder, tuple(config.student_files), MAX_COMPARED_CHARS)
    text, packed_code = unpacked_text(parts)      # at most MAX_COMPARED_CHARS read, as many decoded
    target = dest / f"{student_dir.name}.py"
    target.write_text(staged_text(text), encoding="utf-8", errors="replace")   # a cell's lone surrogate is no character
    return target, "; ".join(unread), packed_code


def stage_boilerplate(config: GradingConfig, dest: Path) -> Boilerplate:
    """Writes what every student received (skeleton, released notebook cells, public tests) and
    what every student is told to write: the reference solution of their files, the solved
    functions and the answered notebook's code cells. The docstrings prescribe the method
    (frexp, ldexp, rint, copysign, blocks by reshape), so honest code converges on the reference;
    a pair's evidence is only what the two share beyond it. A student whose code mostly *is*
    the reference is reported by its share of it (compare.reference_shares), not as a pair."""
    from autograder.build import write_reference_submission

    dest.mkdir(parents=True, exist_ok=True)
    released = Path(config.folder)
    names = list(config.student_files) + [n for n in PUBLIC_BOILERPLATE if (released / n).is_file()]
    given = [_staged(dest / f"{i:02d}_{Path(name).stem}.py", released, (name,)) for i, name in enumerate(names)]
    # The released files joined exactly as a student's are, so no k-gram across a file or cell
    # boundary of the untouched skeleton counts as the student's own code.
    given.append(_staged(dest / "released_joined.py", released, tuple(config.student_files)))
    with tempfile.TemporaryDirectory(prefix="cs349e-answered-") as answered:
        write_reference_submission(config.assignment, Path(answered))
        solved = [_staged(dest / f"reference_{Path(name).stem}.py", Path(answered), (name,))
                  for name in config.student_files]
        joined = _staged(dest.parent / "reference.py", Path(answered), tuple(config.student_files))
    return Boilerplate(given, solved + [joined], joined)


def _staged(target: Path, folder: Path, names: tuple[str, ...]) -> Path:
    target.write_text(staged_text(code_text(folder, names)[0]), encoding="utf-8")
    return target
