"""Find students and their files: `SUBMISSIONS/<student>/` holds the assignment's files directly,
or (nbgrader's layout) in `SUBMISSIONS/<student>/<assignment>/`. A submission that arrived as a
value (a cluster's parcel) is the same StudentFiles with its bytes in memory and no folder."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterable, Mapping

from autograder.engine.registry import GradingConfig
from autograder.engine.results import SubmissionResult
from autograder.sandbox.confinement import asked, isolation_named

# The largest student file the grader reads (the sandbox reads no larger notebook either):
# beyond it a file is not graded, so a sparse file of gigabytes never reaches memory or disk.
MAX_STUDENT_FILE_BYTES = 20 * 1024**2


@dataclass(frozen=True)
class StudentFiles:
    student: str
    folder: Path | None  # where the assignment's files are (or should be); None: in memory
    present: tuple[str, ...]  # student files found (regular files, not symlinks)
    missing: tuple[str, ...]
    others: tuple[str, ...]  # other .py / .ipynb files in the folder: maybe a renamed file
    linked: bool = False  # the student folder is a symbolic link: nothing in it is graded
    oversized: tuple[str, ...] = ()  # files beyond MAX_STUDENT_FILE_BYTES (also in `missing`)
    # In memory (folder None): the bytes of each present file, the size of each oversized one.
    contents: Mapping[str, bytes] | None = None
    sizes: Mapping[str, int] | None = None

    def path(self, name: str) -> Path:
        if self.folder is None:
            raise ValueError(f"{self.student}: the submission is in memory, {name} has no path")
        return self.folder / name

    def read(self, name: str) -> bytes:
        """A present file's bytes."""
        return self.contents[name] if self.contents is not None else self.path(name).read_bytes()

    def size(self, name: str) -> int:
        """A present or oversized file's size in bytes (an oversized one is never read)."""
        if self.folder is None:
            return len(self.contents[name]) if name in (self.contents or {}) else (self.sizes or {})[name]
        return self.path(name).stat().st_size

    def copy_to(self, folder: Path) -> None:
        """Every present file, into `folder` (the grader's staging folder)."""
        for name in self.present:
            if self.contents is not None:
                (folder / name).write_bytes(self.contents[name])
            else:
                shutil.copyfile(self.path(name), folder / name)

    def fingerprint(self, config: GradingConfig) -> str:
        """Changes whenever a graded file or the grading config changes."""
        h = hashlib.sha256(config.digest.encode())
        for name in sorted(self.present):
            h.update(b"\0" + name.encode() + b"\0" + self.read(name))
        for name in sorted(self.oversized):   # by size only: never read
            h.update(b"\0oversized\0" + name.encode() + b"\0%d" % self.size(name))
        return h.hexdigest()

    def graded_by(self, result: SubmissionResult | None, config: GradingConfig, isolation: str) -> bool:
        """Is `result` (e.g. read back from a cache) the grade of exactly these files under this config,
        isolated as `isolation` asks (confinement.Isolation.stands_for: the same isolation, or
        nothing of the student's ran)? The one test of whether a stored result is current, for
        every command that reuses one (a result graded with other isolation is not)."""
        return (result is not None and isolation_named(result.isolation).stands_for(asked(isolation))
                and result.fingerprint == self.fingerprint(config))


def student_folders(submissions: Path) -> list[Path]:
    """Every student folder, sorted by name (hidden folders skipped)."""
    folders = (p for p in submissions.iterdir() if p.is_dir() and is_student_name(p.name))
    return sorted(folders, key=lambda p: p.name)


def is_student_name(name: str) -> bool:
    """Whether a folder of that name is a student's (a hidden folder or __pycache__ is not)."""
    return not name.startswith(".") and name != "__pycache__"


def other_files(names: Iterable[str], config: GradingConfig) -> tuple[str, ...]:
    """Of the names in a student's folder, the .py and .ipynb files that are neither student nor
    trusted files, sorted: maybe a renamed student file, which the feedback suggests (a Mac's
    `._codesign.py` counts too). The one rule for a folder here and a cluster's parcel."""
    expected = set(config.student_files) | set(config.trusted_files())
    return tuple(sorted(name for name in names
                        if PurePosixPath(name).suffix in (".py", ".ipynb") and name not in expected))


def locate(student_dir: Path, config: GradingConfig) -> StudentFiles:
    if student_dir.is_symlink():
        # Through a link a submission could hand in the solutions or a classmate's folder.
        return StudentFiles(student_dir.name, student_dir, (), tuple(config.student_files), (), linked=True)
    nested = student_dir / config.assignment
    folder = nested if nested.is_dir() and not nested.is_symlink() else student_dir
    present, missing, oversized = [], [], []
    for name in config.student_files:
        path = folder / name
        if not path.is_file() or path.is_symlink():
            missing.append(name)
        elif path.stat().st_size > MAX_STUDENT_FILE_BYTES:
            missing.append(name)
            oversized.append(name)
        else:
            present.append(name)
    others = other_files((p.name for p in folder.glob("*")), config)
    return StudentFiles(student_dir.name, folder, tuple(present), tuple(missing), others,
                        oversized=tuple(oversized))
