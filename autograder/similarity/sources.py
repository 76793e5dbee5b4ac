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

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder.engine.locate import locate, student_folders
from autograder.engine.registry import GradingConfig
from autograder.sandbox.nbrunner import NotebookUnreadable, load_code_cells
from autograder.similarity.packed import unpack

PUBLIC_BOILERPLATE = ("test_codesign.py", "public_checks.py", "selfcheck.py", "conftest.py")


@dataclass(frozen=True)
class PackedCode:
    status: str                     # "decoded", or "undecodable" if some of it could not be read
    places: list[str]               # where and how, one line each


@dataclass(frozen=True)
class StagedClass:
    files: dict[str, Path]          # student -> their staged code (one .py file)
    notes: dict[str, str]           # student -> what of theirs could not be read (not compared)
    packed: dict[str, PackedCode] = field(default_factory=dict)   # students who run packed code


def code_text(folder: Path, names: tuple[str, ...]) -> tuple[str, list[str]]:
    """The student's code as one Python text, and notes on files that could not be read."""
    parts, notes = code_parts(folder, names)
    return "\n\n".join(f"# --- {label}\n{source}" for label, source in parts) + "\n", notes


def code_parts(folder: Path, names: tuple[str, ...]) -> tuple[list[tuple[str, str]], list[str]]:
    """(label, source) of each file and notebook code cell, and notes on files not read."""
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
        else:
            parts.append((name, path.read_text(encoding="utf-8", errors="replace")))
    return parts, notes


def unpacked_text(parts: list[tuple[str, str]]) -> tuple[str, PackedCode | None]:
    """The parts joined, each followed by the code it decodes to; what was packed, if anything."""
    sections, places, statuses = [], [], set()
    for label, source in parts:
        sections.append(f"# --- {label}\n{source}")
        found = unpack(source)
        if found.status:
            statuses.add(found.status)
            places += [f"{label} {site.describe()}" for site in found.sites]
            sections += [f"# --- decoded from {label} line {site.line}\n{text}" for site, text in found.decoded_texts]
    packed = PackedCode("undecodable" if "undecodable" in statuses else "decoded", places) if places else None
    return "\n\n".join(sections) + "\n", packed


def stage_class(config: GradingConfig, submissions: Path, dest: Path) -> StagedClass:
    """Writes dest/<student>.py for every student folder of `submissions`."""
    dest.mkdir(parents=True, exist_ok=True)
    files, notes, packed = {}, {}, {}
    for student_dir in student_folders(submissions):
        located = locate(student_dir, config)
        if not located.present:
            notes[student_dir.name] = f"none of {', '.join(config.student_files)} found"
            continue
        parts, unread = code_parts(located.folder, tuple(config.student_files))
        text, packed_code = unpacked_text(parts)
        if packed_code:
            packed[student_dir.name] = packed_code
        if unread:
            notes[student_dir.name] = "; ".join(unread)   # reported; the rest is still compared
        target = dest / f"{student_dir.name}.py"
        target.write_text(text, encoding="utf-8")
        files[student_dir.name] = target
    return StagedClass(files, notes, packed)


def stage_boilerplate(config: GradingConfig, dest: Path) -> list[Path]:
    """Writes what every student received (skeleton, released notebook cells, public tests), and
    the answered notebook's code cells: each report answer is a one-line expression that honest
    students write alike, so matching it is no sign of copying. The solved functions are not
    boilerplate: a copy of leaked solutions must still show between the students who share it."""
    from autograder.build import write_reference_submission

    dest.mkdir(parents=True, exist_ok=True)
    released = Path(config.folder)
    sources = [(released, name) for name in config.student_files]
    sources += [(released, n) for n in PUBLIC_BOILERPLATE if (released / n).is_file()]
    written = []
    with tempfile.TemporaryDirectory(prefix="cs349e-answered-") as answered:   # holds the solved file too
        write_reference_submission(config.assignment, Path(answered))
        sources += [(Path(answered), n) for n in config.student_files if n.endswith(".ipynb")]
        for i, (folder, name) in enumerate(sources):
            text, _ = code_text(folder, (name,))
            target = dest / f"{i:02d}_{Path(name).stem}{'_answered' if folder != released else ''}.py"
            target.write_text(text, encoding="utf-8")
            written.append(target)
    # The released files joined exactly as a student's are, so no k-gram across a file or cell
    # boundary of the untouched skeleton counts as the student's own code.
    target = dest / "released_joined.py"
    target.write_text(code_text(released, tuple(config.student_files))[0], encoding="utf-8")
    return written + [target]
