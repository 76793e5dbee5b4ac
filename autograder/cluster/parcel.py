"""A submission as it travels to a worker: no shared filesystem, only what grading reads.

The instructor's side `pack`s a student folder the way the engine sees it (`locate`): the bytes
of the student files it would grade (each a regular file of at most MAX_STUDENT_FILE_BYTES), the
size of an oversized file (never read: the feedback names the size), the names of other .py /
.ipynb files (the feedback suggests them as a renamed file), and whether the folder is a link.
The worker turns exactly that into the engine's `StudentFiles`, in memory (`student_files`): the
same files found, so the grade, the fingerprint and the feedback are the ones a local run gives.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from autograder.engine.locate import MAX_STUDENT_FILE_BYTES, StudentFiles, is_student_name, locate, other_files
from autograder.engine.registry import GradingConfig


class ParcelError(ValueError):
    """A parcel no instructor's side packs (a name that is not a plain file name, or not one
    `locate` finds in a folder; a file too large)."""


@dataclass(frozen=True)
class Parcel:
    student: str
    files: tuple[tuple[str, bytes], ...]   # (student file name, its bytes)
    oversized: tuple[tuple[str, int], ...] = ()   # (name, size): not graded, never read
    others: tuple[str, ...] = ()   # other .py / .ipynb names in the folder
    linked: bool = False   # the student folder is a symbolic link: nothing in it is graded

    @property
    def size(self) -> int:
        return sum(len(data) for _, data in self.files)

    def student_files(self, config: GradingConfig) -> StudentFiles:
        """The submission as the engine sees it (`locate` of the original folder), its bytes in
        memory: nothing is written on the worker but the grader's own staging copy."""
        for name in (self.student, *(n for n, _ in self.files), *(n for n, _ in self.oversized), *self.others):
            _plain_name(name)
        if not is_student_name(self.student):
            raise ParcelError(f"not a student's folder: {self.student!r}")
        if other_files(self.others, config) != tuple(self.others):   # as locate lists a folder's
            raise ParcelError(f"{self.student}: not the other files a folder shows: {self.others!r}")
        wanted = tuple(config.student_files)
        if self.linked:   # graded as a link: "submitted nothing, the folder is a link"
            return StudentFiles(self.student, None, (), wanted, (), linked=True, contents={}, sizes={})
        for name, data in self.files:
            if name not in wanted:
                raise ParcelError(f"{self.student}/{name}: not a student file of {config.assignment}")
            if len(data) > MAX_STUDENT_FILE_BYTES:
                raise ParcelError(f"{self.student}/{name}: {len(data)} bytes, more than the engine reads")
        contents, sizes = dict(self.files), dict(self.oversized)
        present = tuple(name for name in wanted if name in contents)
        return StudentFiles(self.student, None, present, tuple(name for name in wanted if name not in contents),
                            self.others, oversized=tuple(name for name in wanted if name in sizes),
                            contents=contents, sizes=sizes)


def pack(folder: Path, config: GradingConfig) -> Parcel:
    """What `grade_submission` reads of `folder`, read once here (a file is read as it is now)."""
    files = locate(folder, config)
    if files.linked:
        return Parcel(files.student, (), linked=True)
    present, oversized = [], [(name, files.path(name).stat().st_size) for name in files.oversized]
    for name in files.present:
        with open(files.path(name), "rb") as f:
            data = f.read(MAX_STUDENT_FILE_BYTES + 1)
            size = os.fstat(f.fileno()).st_size
        if len(data) > MAX_STUDENT_FILE_BYTES:   # grew since it was found: as the engine would see it now
            oversized.append((name, size))
        else:
            present.append((name, data))
    return Parcel(files.student, tuple(present), tuple(sorted(oversized)), files.others)


def _plain_name(name: str) -> None:
    """One name in a folder, never a path (a leading dot is a name: a Mac's `._codesign.py`)."""
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise ParcelError(f"not a plain file name: {name!r}")
