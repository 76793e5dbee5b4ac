"""The code a similarity check compares: one text per student, and the shared boilerplate.

A student's text is their graded files of grading.toml: each Python file as is, each notebook as
its code cells one after another (read like the sandbox reads them: no kernel, size-capped; an
unreadable notebook contributes nothing and is reported). The boilerplate is what every student
received: the released skeleton and notebook cells, the public tests and the self-check, so code
that every submission shares by construction never counts as copied.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from autograder.engine.locate import locate, student_folders
from autograder.engine.registry import GradingConfig
from autograder.sandbox.nbrunner import NotebookUnreadable, load_code_cells

PUBLIC_BOILERPLATE = ("test_codesign.py", "public_checks.py", "selfcheck.py", "conftest.py")


@dataclass(frozen=True)
class StagedClass:
    files: dict[str, Path]          # student -> their staged code (one .py file)
    notes: dict[str, str]           # student -> what of theirs could not be read (not compared)


def code_text(folder: Path, names: tuple[str, ...]) -> tuple[str, list[str]]:
    """The student's code as one Python text, and notes on files that could not be read."""
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
            parts += [f"# --- {name} cell {index}\n{source}" for index, source in cells]
        else:
            parts.append(f"# --- {name}\n{path.read_text(encoding='utf-8', errors='replace')}")
    return "\n\n".join(parts) + "\n", notes


def stage_class(config: GradingConfig, submissions: Path, dest: Path) -> StagedClass:
    """Writes dest/<student>.py for every student folder of `submissions`."""
    dest.mkdir(parents=True, exist_ok=True)
    files, notes = {}, {}
    for student_dir in student_folders(submissions):
        located = locate(student_dir, config)
        if not located.present:
            notes[student_dir.name] = f"none of {', '.join(config.student_files)} found"
            continue
        text, unread = code_text(located.folder, tuple(config.student_files))
        if unread:
            notes[student_dir.name] = "; ".join(unread)   # reported; the rest is still compared
        target = dest / f"{student_dir.name}.py"
        target.write_text(text, encoding="utf-8")
        files[student_dir.name] = target
    return StagedClass(files, notes)


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
